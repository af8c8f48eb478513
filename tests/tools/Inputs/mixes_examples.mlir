// A loss averaged over the batch by a plain reduction: gacc cannot tell
// how the batch flows through it, so the model cannot be rebuilt for
// another batch (or split into micro-batches).
gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 4>
gacc.input @x : tensor<4x2xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %w = gacc.load @w : tensor<3x2xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %n = gacc.reduce_mean %l axes = [0] : tensor<4x3xf32> -> tensor<3xf32>
  %loss = gacc.reduce_sum %n axes = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
gacc.train_step @sgd model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>
