// A 7.5B-parameter stack of 12 linear layers (25000x25000, no bias):
// the size of the ZeRO paper's memory example (Rajbhandari et al. 2020,
// Figure 1: Ψ = 7.5B, mixed-precision Adam, N = 64). Plan it only.
module {
  gacc.param @l0.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 1>
  gacc.param @l1.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 2>
  gacc.param @l2.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 3>
  gacc.param @l3.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 4>
  gacc.param @l4.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 5>
  gacc.param @l5.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 6>
  gacc.param @l6.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 7>
  gacc.param @l7.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 8>
  gacc.param @l8.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 9>
  gacc.param @l9.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 10>
  gacc.param @l10.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 11>
  gacc.param @l11.weight : tensor<25000x25000xf32> = #gacc.init<normal, scale = 0.01, seed = 12>
  gacc.input @x : tensor<64x25000xf32> features
  gacc.input @y : tensor<64x25000xf32> features
  func.func @stack() -> tensor<f32> {
    %h0 = gacc.load @x : tensor<64x25000xf32>
    %w0 = gacc.load @l0.weight : tensor<25000x25000xf32>
    %m0 = gacc.matmul %h0, %w0 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h1 = gacc.tanh %m0 : tensor<64x25000xf32>
    %w1 = gacc.load @l1.weight : tensor<25000x25000xf32>
    %m1 = gacc.matmul %h1, %w1 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h2 = gacc.tanh %m1 : tensor<64x25000xf32>
    %w2 = gacc.load @l2.weight : tensor<25000x25000xf32>
    %m2 = gacc.matmul %h2, %w2 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h3 = gacc.tanh %m2 : tensor<64x25000xf32>
    %w3 = gacc.load @l3.weight : tensor<25000x25000xf32>
    %m3 = gacc.matmul %h3, %w3 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h4 = gacc.tanh %m3 : tensor<64x25000xf32>
    %w4 = gacc.load @l4.weight : tensor<25000x25000xf32>
    %m4 = gacc.matmul %h4, %w4 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h5 = gacc.tanh %m4 : tensor<64x25000xf32>
    %w5 = gacc.load @l5.weight : tensor<25000x25000xf32>
    %m5 = gacc.matmul %h5, %w5 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h6 = gacc.tanh %m5 : tensor<64x25000xf32>
    %w6 = gacc.load @l6.weight : tensor<25000x25000xf32>
    %m6 = gacc.matmul %h6, %w6 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h7 = gacc.tanh %m6 : tensor<64x25000xf32>
    %w7 = gacc.load @l7.weight : tensor<25000x25000xf32>
    %m7 = gacc.matmul %h7, %w7 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h8 = gacc.tanh %m7 : tensor<64x25000xf32>
    %w8 = gacc.load @l8.weight : tensor<25000x25000xf32>
    %m8 = gacc.matmul %h8, %w8 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h9 = gacc.tanh %m8 : tensor<64x25000xf32>
    %w9 = gacc.load @l9.weight : tensor<25000x25000xf32>
    %m9 = gacc.matmul %h9, %w9 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h10 = gacc.tanh %m9 : tensor<64x25000xf32>
    %w10 = gacc.load @l10.weight : tensor<25000x25000xf32>
    %m10 = gacc.matmul %h10, %w10 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h11 = gacc.tanh %m10 : tensor<64x25000xf32>
    %w11 = gacc.load @l11.weight : tensor<25000x25000xf32>
    %m11 = gacc.matmul %h11, %w11 transpose_rhs : tensor<64x25000xf32>, tensor<25000x25000xf32> -> tensor<64x25000xf32>
    %h12 = gacc.tanh %m11 : tensor<64x25000xf32>
    %y = gacc.load @y : tensor<64x25000xf32>
    %loss = gacc.mse_loss mean %h12, %y : tensor<64x25000xf32>
    return %loss : tensor<f32>
  }
  gacc.train_step @train model @stack batch_size 64 optimizer #gacc.adamw<lr = 1.0e-04> precision f16
}
