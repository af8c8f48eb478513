gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 4>
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
gacc.train_step @sgd model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>
gacc.train_step @adamw model @m batch_size 4 micro_batch_size 3 optimizer #gacc.adamw<lr = 0.001>
