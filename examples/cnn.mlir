// A small CNN for scikit-learn's 8x8 digits: conv 3x3 (8) - ReLU - max pool
// 2x2 - conv 3x3 (16) - batch norm - ReLU - average pool 2x2 - linear.
//
//   /usr/bin/python3 examples/prepare_digits.py build/digits
//   build/bin/gacc run examples/cnn.mlir --steps 600 \
//       --data build/digits/train --eval-data build/digits/test
//
// Weights use PyTorch's layouts (conv [F, C, KH, KW], linear [out, in]) and
// default initializers; the batch norm's running statistics are frozen
// parameters that the step assigns.
module {
  gacc.param @conv1.weight : tensor<8x1x3x3xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 1>
  gacc.param @conv1.bias : tensor<8xf32> = #gacc.init<zeros>
  gacc.param @conv2.weight : tensor<16x8x3x3xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 2>
  gacc.param @bn.weight : tensor<16xf32> = #gacc.init<ones>
  gacc.param @bn.bias : tensor<16xf32> = #gacc.init<zeros>
  gacc.param @bn.running_mean : tensor<16xf32> = #gacc.init<zeros> frozen
  gacc.param @bn.running_var : tensor<16xf32> = #gacc.init<ones> frozen
  gacc.param @fc.weight : tensor<10x64xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 3>
  gacc.param @fc.bias : tensor<10xf32> = #gacc.init<zeros>

  gacc.input @image : tensor<32x64xf32> features
  gacc.input @label : tensor<32xi32> labels

  func.func @cnn() -> (tensor<f32>, tensor<32x10xf32>) {
    %flat = gacc.load @image : tensor<32x64xf32>
    %y = gacc.load @label : tensor<32xi32>
    %x = gacc.reshape %flat : tensor<32x64xf32> -> tensor<32x1x8x8xf32>
    %w1 = gacc.load @conv1.weight : tensor<8x1x3x3xf32>
    %b1 = gacc.load @conv1.bias : tensor<8xf32>
    %c1 = gacc.conv2d %x, %w1 stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<32x1x8x8xf32>, tensor<8x1x3x3xf32> -> tensor<32x8x8x8xf32>
    %b1r = gacc.reshape %b1 : tensor<8xf32> -> tensor<8x1x1xf32>
    %c1b = gacc.add %c1, %b1r : tensor<32x8x8x8xf32>, tensor<8x1x1xf32>
    %r1 = gacc.relu %c1b : tensor<32x8x8x8xf32>
    %p1 = gacc.max_pool2d %r1 kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<32x8x8x8xf32> -> tensor<32x8x4x4xf32>
    %w2 = gacc.load @conv2.weight : tensor<16x8x3x3xf32>
    %c2 = gacc.conv2d %p1, %w2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<32x8x4x4xf32>, tensor<16x8x3x3xf32> -> tensor<32x16x4x4xf32>
    %g = gacc.load @bn.weight : tensor<16xf32>
    %be = gacc.load @bn.bias : tensor<16xf32>
    %rm = gacc.load @bn.running_mean : tensor<16xf32>
    %rv = gacc.load @bn.running_var : tensor<16xf32>
    %n, %nm, %nv = gacc.batch_norm %c2, %g, %be, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05 : tensor<32x16x4x4xf32>, tensor<16xf32>
    gacc.assign @bn.running_mean, %nm : tensor<16xf32>
    gacc.assign @bn.running_var, %nv : tensor<16xf32>
    %r2 = gacc.relu %n : tensor<32x16x4x4xf32>
    %p2 = gacc.avg_pool2d %r2 kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<32x16x4x4xf32> -> tensor<32x16x2x2xf32>
    %h = gacc.reshape %p2 : tensor<32x16x2x2xf32> -> tensor<32x64xf32>
    %wf = gacc.load @fc.weight : tensor<10x64xf32>
    %bf = gacc.load @fc.bias : tensor<10xf32>
    %l0 = gacc.matmul %h, %wf transpose_rhs : tensor<32x64xf32>, tensor<10x64xf32> -> tensor<32x10xf32>
    %logits = gacc.add %l0, %bf : tensor<32x10xf32>, tensor<10xf32>
    %loss = gacc.cross_entropy mean %logits, %y : tensor<32x10xf32>, tensor<32xi32>
    return %loss, %logits : tensor<f32>, tensor<32x10xf32>
  }

  gacc.train_step @train model @cnn batch_size 32
      optimizer #gacc.sgd<lr = 5.000000e-02, momentum = 9.000000e-01>
}
