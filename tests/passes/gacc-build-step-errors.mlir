// RUN: gacc-opt %s -split-input-file -gacc-build-step -verify-diagnostics

// A gradient function that reads the loss scale needs a step that keeps one.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @m_grad() -> (tensor<f32>, tensor<3xf32>) attributes {gacc.gradients = [@w]} {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  // expected-error @+1 {{'gacc.loss_scale' op reads the loss scale, but step 't' has no loss scaling (precision f16 or a loss_scale attribute)}}
  %s = gacc.loss_scale : tensor<f32>
  %r = gacc.reshape %s : tensor<f32> -> tensor<1xf32>
  %g = gacc.broadcast %r : tensor<1xf32> -> tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> precision bf16 gradient @m_grad

// -----

// The step's gradient function must return the model's results and one
// gradient per parameter.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @m_grad() -> (tensor<f32>, tensor<4xf32>) attributes {gacc.gradients = [@w]} {
  %l = gacc.constant dense<0.0> : tensor<f32>
  %g = gacc.constant dense<0.0> : tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}
// expected-error @+1 {{'gacc.train_step' op gradient 'm_grad' returns 'tensor<4xf32>' for parameter 'w', expected 'tensor<3xf32>'}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> gradient @m_grad
