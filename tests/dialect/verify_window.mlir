// Verifier rules of convolution and pooling: ranks, window attributes,
// groups, channels and output sizes.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{'gacc.conv2d' op groups (4) must be positive and divide the input channels (4) and the output channels (6)}}
  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 4 : tensor<2x4x8x8xf32>, tensor<6x3x3x3xf32> -> tensor<2x6x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{'gacc.conv2d' op weight has 3 input channels per group, the input 4}}
  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<2x4x8x8xf32>, tensor<6x3x3x3xf32> -> tensor<2x6x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'gacc.conv2d' op result must be 'tensor<2x6x4x4xf32>', got 'tensor<2x6x8x8xf32>'}}
  %y = gacc.conv2d %x, %w stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{'gacc.conv2d' op stride must be positive, got 0}}
  %y = gacc.conv2d %x, %w stride = [0, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x8x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{'gacc.max_pool2d' op needs an N x C x H x W image, got rank 3}}
  %y = gacc.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x2x2xf32>) {
  // expected-error @+1 {{'gacc.max_pool2d' op the 3x3 window does not fit the 2x2 image}}
  %y = gacc.max_pool2d %x kernel = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<2x4x2x2xf32> -> tensor<2x4x1x1xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{'gacc.avg_pool2d' op padding 2 exceeds half the window}}
  %y = gacc.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [2, 2] : tensor<2x4x8x8xf32> -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{'gacc.avg_pool2d' op kernel must have 2 values (H, W), got 1}}
  %y = gacc.avg_pool2d %x kernel = [2] stride = [2, 2] padding = [0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>) {
  // expected-error @+1 {{'gacc.im2col' op result must be 'tensor<2x4x9x64xf32>', got 'tensor<2x4x9x16xf32>'}}
  %y = gacc.im2col %x kernel = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x9x16xf32>
  return
}

// -----

func.func @f(%c: tensor<2x4x9x16xf32>) {
  // expected-error @+1 {{'gacc.col2im' op input must be 'tensor<2x4x9x64xf32>', got 'tensor<2x4x9x16xf32>'}}
  %y = gacc.col2im %c kernel = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x16xf32> -> tensor<2x4x8x8xf32>
  return
}
