// RUN: gacc-opt %s --gacc-zero="stage=3 ranks=2" -gacc-split-batch -gacc-autodiff -gacc-accumulate -gacc-build-step 2>/dev/null | FileCheck %s

// ZeRO-3 shards the trainable parameters (w1 at 0, 12 of its 24 elements;
// bn.weight 64, bn.bias 128; w2 320) but keeps the frozen running
// statistics whole on every rank (bn.running_mean 192, bn.running_var 256):
// never gathered, and written back as rank 0's after the step.
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
// CHECK-DAG: %[[RMV:.*]] = memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-DAG: %[[RVV:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-DAG: %[[RM:.*]] = bufferization.to_tensor %[[RMV]]
// CHECK-DAG: %[[RV:.*]] = bufferization.to_tensor %[[RVV]]
// CHECK-DAG: memref.view %arg0[%c0{{.*}}][] : memref<?xi8> to memref<12xf32>
// CHECK-NOT: gacc.all_gather %[[RM]]
// CHECK-NOT: gacc.all_gather %[[RV]]
// CHECK: gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[RM]], %[[RV]]
// CHECK: %[[BM:.*]] = gacc.collective_broadcast %{{.*}} root = 0 ranks = 2 : tensor<6xf32>
// CHECK: %[[BV:.*]] = gacc.collective_broadcast %{{.*}} root = 0 ranks = 2 : tensor<6xf32>
// CHECK: %[[W1:.*]] = memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[BM]] in restrict writable %[[W1]]
// CHECK: %[[W2:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[BV]] in restrict writable %[[W2]]
// CHECK-LABEL: func.func @gacc_eval
