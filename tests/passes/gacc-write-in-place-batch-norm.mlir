// RUN: gacc-opt %s --gacc-training-pipeline --gacc-to-linalg-pipeline --gacc-bufferize-pipeline --mlir-print-ir-after=gacc-write-in-place --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s
// The pass runs per function: printing without threads keeps step before eval.

// The running statistics that batch norm assigns are computed in their
// slots (bn.running_mean at 256, bn.running_var at 320 of the state
// arena): the update reads the old value there and writes the new one in
// place, with no temporary copied into the slot.
gacc.param @w1 : tensor<6x4xf32> = #gacc.init<xavier_uniform, seed = 1>
gacc.param @bn.weight : tensor<6xf32> = #gacc.init<ones>
gacc.param @bn.bias : tensor<6xf32> = #gacc.init<zeros>
gacc.param @bn.running_mean : tensor<6xf32> = #gacc.init<zeros> frozen
gacc.param @bn.running_var : tensor<6xf32> = #gacc.init<ones> frozen
gacc.param @w2 : tensor<3x6xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w1 = gacc.load @w1 : tensor<6x4xf32>
  %h = gacc.matmul %x, %w1 transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
  %w = gacc.load @bn.weight : tensor<6xf32>
  %b = gacc.load @bn.bias : tensor<6xf32>
  %rm = gacc.load @bn.running_mean : tensor<6xf32>
  %rv = gacc.load @bn.running_var : tensor<6xf32>
  %n, %nm, %nv = gacc.batch_norm %h, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05
      : tensor<8x6xf32>, tensor<6xf32>
  gacc.assign @bn.running_mean, %nm : tensor<6xf32>
  gacc.assign @bn.running_var, %nv : tensor<6xf32>
  %r = gacc.relu %n : tensor<8x6xf32>
  %w2 = gacc.load @w2 : tensor<3x6xf32>
  %logits = gacc.matmul %r, %w2 transpose_rhs : tensor<8x6xf32>, tensor<3x6xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @gacc_step
// CHECK-DAG: %[[RM:.*]] = memref.view %arg0[%c256][] : memref<?xi8> to memref<6xf32>
// CHECK-DAG: %[[RV:.*]] = memref.view %arg0[%c320][] : memref<?xi8> to memref<6xf32>
// The update runs on [1, 6] (the statistics' reductions keep the batch
// dimension), through views of the same slots.
// CHECK: %[[RME:.*]] = memref.expand_shape %[[RM]] {{\[\[}}0, 1]] output_shape [1, 6]
// CHECK: %[[RMW:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<1x6xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[RME]], %{{.*}} : memref<1x6xf32>, memref<1x6xf32>) outs(%[[RMW]] : memref<1x6xf32>)
// CHECK: %[[RVE:.*]] = memref.expand_shape %[[RV]] {{\[\[}}0, 1]] output_shape [1, 6]
// CHECK: %[[RVW:.*]] = memref.view %arg0[%c320{{.*}}][] : memref<?xi8> to memref<1x6xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[RVE]], %{{.*}} : memref<1x6xf32>, memref<1x6xf32>) outs(%[[RVW]] : memref<1x6xf32>)
// CHECK-NOT: memref.copy %{{.*}}, %[[RMW]]
// CHECK-NOT: memref.copy %{{.*}}, %[[RVW]]
// CHECK-LABEL: func.func @gacc_eval
// Evaluation writes no running statistics.
// CHECK-NOT: memref.view %arg0[%c256_
// CHECK-NOT: memref.view %arg0[%c320_
// CHECK: return
