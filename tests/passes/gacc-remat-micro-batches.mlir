// RUN: gacc-opt %s --gacc-split-batch --gacc-autodiff --gacc-remat="policy=sqrt report=true" --gacc-accumulate 2>&1 >/dev/null | FileCheck %s --check-prefix=MICRO-SQRT
// RUN: gacc-opt %s --gacc-split-batch --gacc-autodiff --gacc-remat="policy=none report=true" --gacc-accumulate 2>&1 >/dev/null | FileCheck %s --check-prefix=MICRO-NONE
// RUN: gacc-opt %s --gacc-split-batch --gacc-autodiff --gacc-remat=policy=sqrt --gacc-accumulate | FileCheck %s --check-prefix=LOOP

// Micro-batches of 4: the micro-batch's gradient function is what the policy
// rewrites, before gacc-accumulate builds the loop around it.
gacc.param @w1 : tensor<8x8xf32> = #gacc.init<normal, seed = 1>
gacc.param @w2 : tensor<8x8xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<16x8xf32> features
gacc.input @y : tensor<16x8xf32> features
func.func @micro() -> tensor<f32> {
  %x = gacc.load @x : tensor<16x8xf32>
  %y = gacc.load @y : tensor<16x8xf32>
  %w1 = gacc.load @w1 : tensor<8x8xf32>
  %w2 = gacc.load @w2 : tensor<8x8xf32>
  %h1 = gacc.matmul %x, %w1 : tensor<16x8xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %a1 = gacc.tanh %h1 : tensor<16x8xf32>
  %b1 = gacc.tanh %a1 : tensor<16x8xf32>
  %h2 = gacc.matmul %b1, %w2 : tensor<16x8xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %a2 = gacc.tanh %h2 : tensor<16x8xf32>
  %b2 = gacc.tanh %a2 : tensor<16x8xf32>
  %l = gacc.mse_loss mean %b2, %y : tensor<16x8xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @micro batch_size 16 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1>
// MICRO-SQRT: remark: remat sqrt: the backward keeps 388 of 516 bytes of activations; 2 ops recomputed
// MICRO-SQRT-NEXT: func.func @micro() -> tensor<f32> {
// MICRO-NONE: remark: remat none: the backward keeps 516 of 516 bytes of activations; 0 ops recomputed
// MICRO-NONE-NEXT: func.func @micro() -> tensor<f32> {
// The loop runs the rematerialized micro-batch: x·w1 is recomputed in its
// backward.
// LOOP: scf.for
// LOOP: %[[X:.*]] = tensor.extract_slice
// LOOP: gacc.matmul %[[X]], %[[W1:.*]] : tensor<4x8xf32>, tensor<8x8xf32>
// LOOP: gacc.matmul %[[X]], %[[W1]] : tensor<4x8xf32>, tensor<8x8xf32>
// LOOP: scf.yield
