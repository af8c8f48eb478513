// A 64-128-10 classifier for scikit-learn's 8x8 digits (1797 images).
//
//   /usr/bin/python3 examples/prepare_digits.py build/digits
//   build/bin/gacc run examples/digits.mlir --steps 1500 \
//       --data build/digits/train --eval-data build/digits/test
//
// reaches about 97% test accuracy in a few seconds.
module {
  gacc.param @fc1.weight : tensor<128x64xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 1>
  gacc.param @fc1.bias : tensor<128xf32> = #gacc.init<zeros>
  gacc.param @fc2.weight : tensor<10x128xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 2>
  gacc.param @fc2.bias : tensor<10xf32> = #gacc.init<zeros>

  gacc.input @image : tensor<32x64xf32> features
  gacc.input @label : tensor<32xi32> labels

  func.func @mlp() -> (tensor<f32>, tensor<32x10xf32>) {
    %x = gacc.load @image : tensor<32x64xf32>
    %y = gacc.load @label : tensor<32xi32>
    %w1 = gacc.load @fc1.weight : tensor<128x64xf32>
    %b1 = gacc.load @fc1.bias : tensor<128xf32>
    %w2 = gacc.load @fc2.weight : tensor<10x128xf32>
    %b2 = gacc.load @fc2.bias : tensor<10xf32>
    %h0 = gacc.matmul %x, %w1 transpose_rhs : tensor<32x64xf32>, tensor<128x64xf32> -> tensor<32x128xf32>
    %h1 = gacc.add %h0, %b1 : tensor<32x128xf32>, tensor<128xf32>
    %h = gacc.relu %h1 : tensor<32x128xf32>
    %l0 = gacc.matmul %h, %w2 transpose_rhs : tensor<32x128xf32>, tensor<10x128xf32> -> tensor<32x10xf32>
    %logits = gacc.add %l0, %b2 : tensor<32x10xf32>, tensor<10xf32>
    %loss = gacc.cross_entropy mean %logits, %y : tensor<32x10xf32>, tensor<32xi32>
    return %loss, %logits : tensor<f32>, tensor<32x10xf32>
  }

  gacc.train_step @train model @mlp batch_size 32
      optimizer #gacc.adamw<lr = 0.003, weight_decay = 0.0001>
      schedule #gacc.warmup_cosine<warmup_steps = 50, total_steps = 1500, min_lr = 0.0001>
}
