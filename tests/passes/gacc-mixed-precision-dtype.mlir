// RUN: gacc-opt %s -gacc-mixed-precision=dtype=f16 | FileCheck %s
// RUN: not gacc-opt %s -gacc-mixed-precision=dtype=f32 2>&1 | FileCheck %s --check-prefix=BAD

// The dtype option applies to every step and records it as their precision.
gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<8x8xf32>
  %h = gacc.matmul %w, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %l = gacc.reduce_sum %h axes = [0, 1] : tensor<8x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK: gacc.matmul %{{.*}}, %{{.*}} : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x8xf16>
// CHECK: gacc.train_step @t {{.*}} precision f16
// BAD: error: gacc-mixed-precision: dtype must be f16 or bf16, got 'f32'
