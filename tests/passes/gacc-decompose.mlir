// RUN: gacc-opt %s -gacc-decompose | FileCheck %s

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK: %[[M:.*]] = gacc.reduce_max %arg0 axes = [1] keepdims : tensor<4x10xf32> -> tensor<4x1xf32>
  // CHECK: %[[Z:.*]] = gacc.sub %arg0, %[[M]] : tensor<4x10xf32>, tensor<4x1xf32>
  // CHECK: %[[E:.*]] = gacc.exp %[[Z]]
  // CHECK: %[[S:.*]] = gacc.reduce_sum %[[E]] axes = [1] keepdims
  // CHECK: gacc.div %[[E]], %[[S]] : tensor<4x10xf32>, tensor<4x1xf32>
  // CHECK-NOT: gacc.softmax
  %y = gacc.softmax %x axis = 1 : tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// Token-mean cross-entropy divides by the number of non-ignored targets:
// those in [0, classes), counted from the targets (the one-hot's row sums,
// without the one-hot).
// CHECK-LABEL: func.func @token_mean
func.func @token_mean(%l: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK: %[[LOW:.*]] = gacc.compare ge %arg1, %{{.*}} : tensor<2x3xi32>, tensor<i32>
  // CHECK: %[[IN_LOW:.*]] = gacc.select %[[LOW]]
  // CHECK: %[[HIGH:.*]] = gacc.compare lt %arg1, %{{.*}} : tensor<2x3xi32>, tensor<i32>
  // CHECK: %[[IN_HIGH:.*]] = gacc.select %[[HIGH]]
  // CHECK: %[[COUNTED:.*]] = gacc.mul %[[IN_LOW]], %[[IN_HIGH]] : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: %[[OH:.*]] = gacc.one_hot %arg1 : tensor<2x3xi32> -> tensor<2x3x5xf32>
  // CHECK: %[[P:.*]] = gacc.mul %[[OH]], %{{.*}} : tensor<2x3x5xf32>, tensor<2x3x5xf32>
  // CHECK: %[[PICKED:.*]] = gacc.reduce_sum %[[P]] axes = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  // CHECK: %[[COUNT:.*]] = gacc.reduce_sum %[[COUNTED]] axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // CHECK: %[[Q:.*]] = gacc.div %[[PICKED]], %[[COUNT]]
  // CHECK: gacc.neg %[[Q]]
  %loss = gacc.cross_entropy token_mean %l, %t ignore_index = -100 : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %loss : tensor<f32>
}

// An ignore index that is a class (a padding id, 0 here) is tested for:
// those positions are not counted, and their one-hot rows are zeroed.
// CHECK-LABEL: func.func @padding_id
func.func @padding_id(%l: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK: %[[IN_RANGE:.*]] = gacc.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: %[[NOT_PAD:.*]] = gacc.compare ne %arg1, %{{.*}} : tensor<2x3xi32>, tensor<i32>
  // CHECK: %[[KEPT:.*]] = gacc.select %[[NOT_PAD]]
  // CHECK: %[[COUNTED:.*]] = gacc.mul %[[IN_RANGE]], %[[KEPT]] : tensor<2x3xf32>, tensor<2x3xf32>
  // CHECK: %[[OH:.*]] = gacc.one_hot %arg1 : tensor<2x3xi32> -> tensor<2x3x5xf32>
  // CHECK: %[[ROWS:.*]] = gacc.reshape %[[COUNTED]] : tensor<2x3xf32> -> tensor<2x3x1xf32>
  // CHECK: %[[MASKED:.*]] = gacc.mul %[[OH]], %[[ROWS]] : tensor<2x3x5xf32>, tensor<2x3x1xf32>
  // CHECK: gacc.mul %[[MASKED]], %{{.*}} : tensor<2x3x5xf32>, tensor<2x3x5xf32>
  // CHECK: gacc.reduce_sum %[[COUNTED]] axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %loss = gacc.cross_entropy token_mean %l, %t ignore_index = 0 : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %loss : tensor<f32>
}

// Mean cross-entropy divides by the examples (dimension 0).
// CHECK-LABEL: func.func @mean
func.func @mean(%l: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK: %[[TWO:.*]] = gacc.constant dense<2.000000e+00> : tensor<f32>
  // CHECK: gacc.div %{{.*}}, %[[TWO]]
  %loss = gacc.cross_entropy mean %l, %t : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: gacc.reduce_sum %arg0 axes = [1] keepdims
  // CHECK: gacc.rsqrt
  // CHECK-NOT: gacc.layer_norm
  %y = gacc.layer_norm %x, %g, %b : tensor<2x4xf32>, tensor<4xf32>
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @gelu_tanh
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: gacc.constant dense<4.471500e-02>
  // CHECK: gacc.tanh
  %y = gacc.gelu %x approximation = tanh : tensor<4xf32>
  return %y : tensor<4xf32>
}

// A convolution is im2col and one matmul per group of the flattened weight
// with the columns of all examples ([G, C/G·KH·KW, N·OH·OW]), the result
// transposed back to N x F x OH x OW.
// CHECK-LABEL: func.func @conv2d
// CHECK: %[[W:.*]] = gacc.reshape %{{.*}} : tensor<6x2x3x3xf32> -> tensor<2x3x18xf32>
// CHECK: %[[COLS:.*]] = gacc.im2col %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x9x64xf32>
// CHECK: %[[C:.*]] = gacc.reshape %[[COLS]] : tensor<2x4x9x64xf32> -> tensor<2x2x18x64xf32>
// CHECK: %[[CT:.*]] = gacc.transpose %[[C]] perm = [1, 2, 0, 3] : tensor<2x2x18x64xf32> -> tensor<2x18x2x64xf32>
// CHECK: %[[CG:.*]] = gacc.reshape %[[CT]] : tensor<2x18x2x64xf32> -> tensor<2x18x128xf32>
// CHECK: %[[Y:.*]] = gacc.matmul %[[W]], %[[CG]] : tensor<2x3x18xf32>, tensor<2x18x128xf32> -> tensor<2x3x128xf32>
// CHECK: %[[YG:.*]] = gacc.reshape %[[Y]] : tensor<2x3x128xf32> -> tensor<2x3x2x64xf32>
// CHECK: %[[YT:.*]] = gacc.transpose %[[YG]] perm = [2, 0, 1, 3] : tensor<2x3x2x64xf32> -> tensor<2x2x3x64xf32>
// CHECK: gacc.reshape %[[YT]] : tensor<2x2x3x64xf32> -> tensor<2x6x8x8xf32>
func.func @conv2d(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x8x8xf32> {
  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x8x8xf32>
  return %y : tensor<2x6x8x8xf32>
}

// Taps that read only padding for every output position are left out: over
// one pixel, only the 3x3 kernel's centre reaches the image, a 1x1 window
// without padding on the weight's slice.
// CHECK-LABEL: func.func @conv2d_one_pixel
// CHECK: %[[TAP:.*]] = gacc.slice %{{.*}} offsets = [0, 0, 1, 1] sizes = [8, 16, 1, 1] : tensor<8x16x3x3xf32> -> tensor<8x16x1x1xf32>
// CHECK: %[[W:.*]] = gacc.reshape %[[TAP]] : tensor<8x16x1x1xf32> -> tensor<1x8x16xf32>
// CHECK: gacc.im2col %{{.*}} kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<4x16x1x1xf32> -> tensor<4x16x1x1xf32>
// CHECK: gacc.matmul %[[W]], %{{.*}} : tensor<1x8x16xf32>, tensor<1x16x4xf32> -> tensor<1x8x4xf32>
func.func @conv2d_one_pixel(%x: tensor<4x16x1x1xf32>, %w: tensor<8x16x3x3xf32>) -> tensor<4x8x1x1xf32> {
  %y = gacc.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x16x1x1xf32>, tensor<8x16x3x3xf32> -> tensor<4x8x1x1xf32>
  return %y : tensor<4x8x1x1xf32>
}

// At stride 2 over 2x2, the first row and column of taps read only padding;
// where trimming would change the output size (4x4 here, every tap reaching
// some output), the window stays whole.
// CHECK-LABEL: func.func @conv2d_reaching_taps
// CHECK: gacc.slice %{{.*}} offsets = [0, 0, 1, 1] sizes = [8, 16, 2, 2] : tensor<8x16x3x3xf32> -> tensor<8x16x2x2xf32>
// CHECK: gacc.im2col %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0]
// CHECK-NOT: gacc.slice
// CHECK: gacc.im2col %{{.*}} kernel = [3, 3] stride = [1, 1] padding = [1, 1]
func.func @conv2d_reaching_taps(%x: tensor<4x16x2x2xf32>, %w: tensor<8x16x3x3xf32>, %z: tensor<4x16x4x4xf32>) -> (tensor<4x8x1x1xf32>, tensor<4x8x4x4xf32>) {
  %y = gacc.conv2d %x, %w stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x16x2x2xf32>, tensor<8x16x3x3xf32> -> tensor<4x8x1x1xf32>
  %v = gacc.conv2d %z, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x16x4x4xf32>, tensor<8x16x3x3xf32> -> tensor<4x8x4x4xf32>
  return %y, %v : tensor<4x8x1x1xf32>, tensor<4x8x4x4xf32>
}

// Max pooling: the maximum over the window axis of -inf-padded columns.
// CHECK-LABEL: func.func @max_pool2d
// CHECK: %[[COLS:.*]] = gacc.im2col %{{.*}} {padding_value = 0xFFF0000000000000 : f64} : tensor<2x4x8x8xf32> -> tensor<2x4x9x16xf32>
// CHECK: %[[M:.*]] = gacc.reduce_max %[[COLS]] axes = [2] keepdims : tensor<2x4x9x16xf32> -> tensor<2x4x1x16xf32>
// CHECK: gacc.reshape %[[M]] : tensor<2x4x1x16xf32> -> tensor<2x4x4x4xf32>
func.func @max_pool2d(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %y = gacc.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}

// Average pooling: the sum over the window divided by its size.
// CHECK-LABEL: func.func @avg_pool2d
// CHECK: %[[COLS:.*]] = gacc.im2col %{{.*}} : tensor<2x4x8x8xf32> -> tensor<2x4x4x16xf32>
// CHECK: gacc.reduce_sum %[[COLS]] axes = [2] keepdims
// CHECK: gacc.div
func.func @avg_pool2d(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %y = gacc.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}
