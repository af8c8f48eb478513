// RUN: gacc-opt %s -gacc-autodiff -gacc-build-step | FileCheck %s
// RUN: gacc-opt %s --gacc-configure-step="micro-batch=4" -gacc-split-batch -gacc-autodiff -gacc-accumulate -gacc-build-step 2>/dev/null | FileCheck %s --check-prefix=MICRO

// Frozen parameters have a slot in the state arena but no gradient slot
// (gradients follow the parameters: w1 0, bn.weight 128, bn.bias 192,
// bn.running_mean 256, bn.running_var 320, w2 384; then grad.w1 512,
// grad.bn.weight 640, grad.bn.bias 704, grad.w2 768, and nothing else).
// gacc_step writes the assigned running statistics into their slots after
// the forward and backward passes; the optimizer never touches them.
// gacc_eval normalizes with the running statistics and writes no state.
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
// CHECK-DAG: %[[RMV:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-DAG: %[[RVV:.*]] = memref.view %arg0[%c320{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-DAG: %[[RM:.*]] = bufferization.to_tensor %[[RMV]] restrict writable
// CHECK-DAG: %[[RV:.*]] = bufferization.to_tensor %[[RVV]] restrict writable
// CHECK: %{{.*}}, %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[RM]], %[[RV]] momentum = 1.000000e-01 epsilon = 1.000000e-05 :
// The gradients of w2, bn.weight, bn.bias and w1 land in their slots ...
// CHECK: memref.view %arg0[%c768{{.*}}][]
// CHECK: memref.view %arg0[%c640{{.*}}][]
// CHECK: memref.view %arg0[%c704{{.*}}][]
// CHECK: %[[GW1:.*]] = memref.view %arg0[%c512{{.*}}][]
// CHECK-NEXT: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[GW1]]
// ... then the running statistics in theirs.
// CHECK: %c256{{.*}} = arith.constant 256 : index
// CHECK-NEXT: %[[W1:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NM]] in restrict writable %[[W1]]
// CHECK-NEXT: %c320{{.*}} = arith.constant 320 : index
// CHECK-NEXT: %[[W2:.*]] = memref.view %arg0[%c320{{.*}}][] : memref<?xi8> to memref<6xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NV]] in restrict writable %[[W2]]
// No gradient slot beyond grad.w2, and the update writes only the four
// trainable parameters.
// CHECK-NOT: %c832
// CHECK-NOT: memref.view %arg0[%c256
// CHECK-NOT: memref.view %arg0[%c320
// CHECK-LABEL: func.func @gacc_eval
// CHECK: gacc.batch_norm %{{.*}} momentum = 1.000000e-01 epsilon = 1.000000e-05 inference :
// CHECK-NOT: materialize_in_destination {{.*}} %arg0
// CHECK-NOT: gacc.assign

// With micro-batches, gacc_eval loops over them as the step does: batch
// norm normalizes each with the running statistics, nothing is assigned or
// written to the state, and the loss sum is divided by the count once.
// MICRO-LABEL: func.func @gacc_eval
// MICRO: scf.for
// MICRO: tensor.extract_slice {{.*}} to tensor<4x4xf32>
// MICRO: gacc.batch_norm {{.*}} inference : tensor<4x6xf32>, tensor<6xf32>
// MICRO-NOT: gacc.assign
// MICRO-NOT: materialize_in_destination {{.*}} %arg0
// MICRO: scf.yield
// MICRO: gacc.div
// MICRO-NOT: gacc.batch_norm
// MICRO: return
