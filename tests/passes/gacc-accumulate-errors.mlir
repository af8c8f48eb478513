// RUN: gacc-opt %s -gacc-accumulate -verify-diagnostics

// The evaluation runs the micro-batch models: without them, neither loop
// is built.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<8x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<8x4xf32>
  return %l : tensor<f32>
}
func.func @g(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %seed: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) attributes {gacc.gradients = [@w]} {
  %l = gacc.constant dense<0.0> : tensor<f32>
  %gw = gacc.constant dense<0.0> : tensor<4xf32>
  return %l, %gw : tensor<f32>, tensor<4xf32>
}
// expected-error @+1 {{runs micro-batches, but has no micro_model: run gacc-split-batch first}}
gacc.train_step @t model @m batch_size 8 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1> micro_gradient @g
