// A small classifier for fast end-to-end tests of `gacc run`.
gacc.param @w1 : tensor<16x8xf32> = #gacc.init<kaiming_uniform, scale = 1.4, seed = 1>
gacc.param @b1 : tensor<16xf32> = #gacc.init<zeros>
gacc.param @w2 : tensor<4x16xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.input @x : tensor<32x8xf32> features
gacc.input @y : tensor<32xi32> labels
func.func @model() -> (tensor<f32>, tensor<32x4xf32>) {
  %x = gacc.load @x : tensor<32x8xf32>
  %y = gacc.load @y : tensor<32xi32>
  %w1 = gacc.load @w1 : tensor<16x8xf32>
  %b1 = gacc.load @b1 : tensor<16xf32>
  %w2 = gacc.load @w2 : tensor<4x16xf32>
  %h0 = gacc.matmul %x, %w1 transpose_rhs : tensor<32x8xf32>, tensor<16x8xf32> -> tensor<32x16xf32>
  %h1 = gacc.add %h0, %b1 : tensor<32x16xf32>, tensor<16xf32>
  %h = gacc.tanh %h1 : tensor<32x16xf32>
  %logits = gacc.matmul %h, %w2 transpose_rhs : tensor<32x16xf32>, tensor<4x16xf32> -> tensor<32x4xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<32x4xf32>, tensor<32xi32>
  return %loss, %logits : tensor<f32>, tensor<32x4xf32>
}
gacc.train_step @train model @model batch_size 32
    optimizer #gacc.sgd<lr = 0.5, momentum = 0.9, nesterov = true, weight_decay = 1.0e-4>
    schedule #gacc.warmup_cosine<warmup_steps = 5, total_steps = 60, min_lr = 0.01>
    grad_clip_norm 5.0
