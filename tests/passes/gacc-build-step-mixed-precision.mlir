// RUN: gacc-opt %s -gacc-mixed-precision -gacc-autodiff -gacc-build-step | FileCheck %s

// A weight the model reads only in f16 is kept in f16 with an f16 gradient;
// its f32 master weights are optimizer state (DeepSpeed's layout). The
// gradient slot keeps the scaled gradient; the update reads it back through
// a barrier (so that no f32 copy lives from the backward to the update),
// unscales it and rounds the updated master weights into the weight.
gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<4x2xf32> features
gacc.input @y : tensor<4xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %y = gacc.load @y : tensor<4xi32>
  %w = gacc.load @w : tensor<3x2xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<4x3xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.adamw<lr = 0.001> precision f16

// CHECK-LABEL: func.func @gacc_step
// The weight: f16 in the state, read as it is by the matmul.
// CHECK: %[[WV:.*]] = memref.view %arg0[%c0{{.*}}][] : memref<?xi8> to memref<3x2xf16>
// CHECK: %[[W:.*]] = bufferization.to_tensor %[[WV]]
// CHECK: gacc.matmul %{{.*}}, %[[W]] transpose_rhs : tensor<4x2xf16>, tensor<3x2xf16> -> tensor<4x3xf16>
// The gradient: computed in f16, widened for the norm, rounded into its
// f16 slot still scaled.
// CHECK: %[[G16:.*]] = gacc.matmul {{.*}} -> tensor<3x2xf16>
// CHECK: %[[G32:.*]] = gacc.cast %[[G16]] : tensor<3x2xf16> to tensor<3x2xf32>
// CHECK: %[[KEPT:.*]] = gacc.cast %[[G32]] : tensor<3x2xf32> to tensor<3x2xf16>
// CHECK: bufferization.materialize_in_destination %[[KEPT]] in restrict writable %{{.*}} : (tensor<3x2xf16>, memref<3x2xf16>)
// The update reads it back, unscaled, and updates the f32 master weights.
// CHECK: %[[BACK:.*]] = gacc.optimization_barrier %[[KEPT]] : tensor<3x2xf16>
// CHECK: %[[UP:.*]] = gacc.cast %[[BACK]] : tensor<3x2xf16> to tensor<3x2xf32>
// CHECK: gacc.mul %[[UP]], %{{.*}} : tensor<3x2xf32>, tensor<f32>
// The master weights (offset 256) are read and updated, rounded, written
// back, and the rounding written into the weight (offset 0): their write
// after the rounding, so that gacc-fuse-elementwise makes update and
// rounding one loop.
// CHECK: %[[MV:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<3x2xf32>
// CHECK-NEXT: bufferization.to_tensor %[[MV]]
// CHECK: %[[NEW16:.*]] = gacc.cast %[[NEW:[^ ]+]] : tensor<3x2xf32> to tensor<3x2xf16>
// CHECK-NEXT: arith.constant 256
// CHECK-NEXT: %[[MV2:.*]] = memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<3x2xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NEW]] in restrict writable %[[MV2]]
// CHECK-NEXT: arith.constant 0
// CHECK-NEXT: %[[WOUT:.*]] = memref.view %arg0[%{{.*}}][] : memref<?xi8> to memref<3x2xf16>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NEW16]] in restrict writable %[[WOUT]]
