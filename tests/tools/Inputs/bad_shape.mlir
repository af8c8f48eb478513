gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3x2xf32>
  %bad = gacc.matmul %w, %w : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %l = gacc.mse_loss mean %bad, %bad : tensor<3x2xf32>
  return %l : tensor<f32>
}
