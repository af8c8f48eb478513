// A 784-256-10 classifier with ReLU: the default example.
//
// Weights use the torch.nn.Linear layout [out, in] (so each layer is a matmul
// with transpose_rhs) and PyTorch's default Linear initializer (kaiming
// uniform with gain sqrt(1/3)). One step trains on 64 examples with AdamW.
//
//   gacc plan examples/mlp.mlir
module {
  gacc.param @fc1.weight : tensor<256x784xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 1>
  gacc.param @fc1.bias : tensor<256xf32> = #gacc.init<zeros>
  gacc.param @fc2.weight : tensor<10x256xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 2>
  gacc.param @fc2.bias : tensor<10xf32> = #gacc.init<zeros>

  gacc.input @image : tensor<64x784xf32> features
  gacc.input @label : tensor<64xi32> labels

  // Returns the mean cross-entropy loss and the logits (for accuracy).
  func.func @mlp() -> (tensor<f32>, tensor<64x10xf32>) {
    %x = gacc.load @image : tensor<64x784xf32>
    %y = gacc.load @label : tensor<64xi32>
    %w1 = gacc.load @fc1.weight : tensor<256x784xf32>
    %b1 = gacc.load @fc1.bias : tensor<256xf32>
    %w2 = gacc.load @fc2.weight : tensor<10x256xf32>
    %b2 = gacc.load @fc2.bias : tensor<10xf32>

    %h0 = gacc.matmul %x, %w1 transpose_rhs : tensor<64x784xf32>, tensor<256x784xf32> -> tensor<64x256xf32>
    %h1 = gacc.add %h0, %b1 : tensor<64x256xf32>, tensor<256xf32>
    %h = gacc.relu %h1 : tensor<64x256xf32>
    %l0 = gacc.matmul %h, %w2 transpose_rhs : tensor<64x256xf32>, tensor<10x256xf32> -> tensor<64x10xf32>
    %logits = gacc.add %l0, %b2 : tensor<64x10xf32>, tensor<10xf32>
    %loss = gacc.cross_entropy mean %logits, %y : tensor<64x10xf32>, tensor<64xi32>
    return %loss, %logits : tensor<f32>, tensor<64x10xf32>
  }

  gacc.train_step @train model @mlp batch_size 64
      optimizer #gacc.adamw<lr = 1.0e-03, weight_decay = 0.0>
}
