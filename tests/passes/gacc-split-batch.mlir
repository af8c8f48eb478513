// RUN: gacc-opt %s -split-input-file -gacc-split-batch -verify-diagnostics | FileCheck %s

// 10 = 4 + 4 + 2: the model of a micro-batch of 4 and of the last one, of 2,
// with their inputs' rows as arguments and the loss summed.
gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<10x4xf32> features
gacc.input @y : tensor<10xi32> labels
func.func @m() -> (tensor<f32>, tensor<10x3xf32>) {
  %x = gacc.load @x : tensor<10x4xf32>
  %y = gacc.load @y : tensor<10xi32>
  %w = gacc.load @w : tensor<3x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<10x4xf32>, tensor<3x4xf32> -> tensor<10x3xf32>
  %loss = gacc.cross_entropy token_mean %l, %y ignore_index = -100 : tensor<10x3xf32>, tensor<10xi32>
  return %loss, %l : tensor<f32>, tensor<10x3xf32>
}
gacc.train_step @t model @m batch_size 10 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_micro2(
// CHECK-SAME: %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2xi32>) -> (tensor<f32>, tensor<2x3xf32>)
// CHECK: gacc.cross_entropy sum
// CHECK-LABEL: func.func @m_micro4(
// CHECK-SAME: %{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4xi32>) -> (tensor<f32>, tensor<4x3xf32>)
// CHECK: gacc.cross_entropy sum
// CHECK: gacc.train_step @t model @m {{.*}} micro_model @m_micro4 last_micro_model @m_micro2

// -----

// One micro-batch per rank on several ZeRO ranks: the loss is summed too
// (gacc-accumulate normalizes it by the global batch's count).
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<4x4xf32> features
gacc.input @y : tensor<4x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x4xf32>
  %y = gacc.load @y : tensor<4x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<4x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<4x4xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1> zero #gacc.zero<stage = 1, ranks = 2>
// CHECK-LABEL: func.func @m_micro4(
// CHECK: gacc.mse_loss sum
// CHECK: micro_model @m_micro4
// CHECK-NOT: last_micro_model

// -----

// Without micro-batches, nothing to do.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<4x4xf32> features
gacc.input @y : tensor<4x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x4xf32>
  %y = gacc.load @y : tensor<4x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<4x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<4x4xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m()
// CHECK-NOT: func.func
// CHECK-NOT: micro_model

// -----

// An op that mixes examples makes the micro-batches disagree with the batch.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  // expected-error @+1 {{'gacc.reduce_mean' op mixes examples of the batch, so its result depends on how the batch is split into micro-batches: it reduces or normalizes along the batch dimension}}
  %mu = gacc.reduce_mean %x axes = [0] keepdims : tensor<8x4xf32> -> tensor<1x4xf32>
  %c = gacc.sub %x, %mu : tensor<8x4xf32>, tensor<1x4xf32>
  %p = gacc.mul %c, %w : tensor<8x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<8x4xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
// expected-error @+1 {{gradient accumulation needs the loss (the first result) to be a gacc.cross_entropy or gacc.mse_loss result}}
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<8x4xf32>, tensor<4xf32>
  %l = gacc.reduce_sum %p axes = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// A reshape that splits the batch across dimensions is refused.
gacc.param @w : tensor<4x8xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x2xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x2xf32>
  %w = gacc.load @w : tensor<4x8xf32>
  // expected-error @+1 {{'gacc.reshape' op mixes examples of the batch, so its result depends on how the batch is split into micro-batches: it splits the batch across dimensions}}
  %r = gacc.reshape %x : tensor<8x4xf32> -> tensor<4x8xf32>
  %p = gacc.matmul %r, %w transpose_rhs : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %q = gacc.reshape %p : tensor<4x4xf32> -> tensor<8x2xf32>
  %l = gacc.mse_loss mean %q, %y : tensor<8x2xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// The batch merged with other dimensions by reshapes (as
// nn.MultiheadAttention views [T, B, E] as [T*B, E]) keeps its factor.
// CHECK-LABEL: func.func @merged()
// CHECK-LABEL: func.func @merged_micro
// CHECK: gacc.transpose {{.*}} : tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK: gacc.reshape {{.*}} : tensor<4x2xf32> -> tensor<8x1xf32>
// CHECK: gacc.matmul {{.*}} -> tensor<8x3xf32>
// CHECK: gacc.reshape {{.*}} : tensor<8x3xf32> -> tensor<4x2x3xf32>
// CHECK: gacc.transpose {{.*}} : tensor<4x2x3xf32> -> tensor<2x4x3xf32>
// CHECK: gacc.reshape {{.*}} : tensor<2x4x3xf32> -> tensor<2x12xf32>
gacc.param @w : tensor<1x3xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x12xf32> features
func.func @merged() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x12xf32>
  %w = gacc.load @w : tensor<1x3xf32>
  %t = gacc.transpose %x perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %r = gacc.reshape %t : tensor<4x8xf32> -> tensor<32x1xf32>
  %p = gacc.matmul %r, %w : tensor<32x1xf32>, tensor<1x3xf32> -> tensor<32x3xf32>
  %q = gacc.reshape %p : tensor<32x3xf32> -> tensor<4x8x3xf32>
  %u = gacc.transpose %q perm = [1, 0, 2] : tensor<4x8x3xf32> -> tensor<8x4x3xf32>
  %v = gacc.reshape %u : tensor<8x4x3xf32> -> tensor<8x12xf32>
  %l = gacc.mse_loss mean %v, %y : tensor<8x12xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @merged batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// A batch of one per step (here after ZeRO gave each of 4 ranks one
// example) is one micro-batch of the same size: the model is copied with
// its loss summed, though which dimension of [1, 6, 8] viewed as
// [1, 6, 2, 4] carries a batch of one is ambiguous (the first two both
// could), which read as the second made the batched matmul below look as
// if it mixed examples.
// CHECK-LABEL: func.func @one_example_micro
// CHECK: gacc.reshape {{.*}} : tensor<1x6x8xf32> -> tensor<1x6x2x4xf32>
// CHECK: gacc.matmul {{.*}} transpose_rhs : tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x6x6xf32>
// CHECK: gacc.mse_loss sum
gacc.input @x : tensor<1x6x8xf32> features
gacc.input @y : tensor<1x2x6x6xf32> features
gacc.param @w : tensor<8x8xf32> = #gacc.init<ones>
func.func @one_example() -> tensor<f32> {
  %x = gacc.load @x : tensor<1x6x8xf32>
  %y = gacc.load @y : tensor<1x2x6x6xf32>
  %w = gacc.load @w : tensor<8x8xf32>
  %h = gacc.matmul %x, %w : tensor<1x6x8xf32>, tensor<8x8xf32> -> tensor<1x6x8xf32>
  %r = gacc.reshape %h : tensor<1x6x8xf32> -> tensor<1x6x2x4xf32>
  %t = gacc.transpose %r perm = [0, 2, 1, 3] : tensor<1x6x2x4xf32> -> tensor<1x2x6x4xf32>
  %s = gacc.matmul %t, %t transpose_rhs : tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32> -> tensor<1x2x6x6xf32>
  %l = gacc.mse_loss mean %s, %y : tensor<1x2x6x6xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @one_example batch_size 4 optimizer #gacc.sgd<lr = 0.1> zero #gacc.zero<stage = 1, ranks = 4>

// -----

// A loss between a per-example input and a parameter of the batch's shape
// compares every micro-batch with the whole parameter.
gacc.param @w : tensor<4x3xf32> = #gacc.init<ones>
gacc.input @y : tensor<4x3xf32> features
func.func @loss_of_a_parameter() -> tensor<f32> {
  %w = gacc.load @w : tensor<4x3xf32>
  %y = gacc.load @y : tensor<4x3xf32>
  // expected-error @+1 {{'gacc.mse_loss' op cannot be split with the batch: an operand does not carry it (a loss takes per-example operands or broadcasts along the batch, not a parameter of the batch's shape)}}
  %l = gacc.mse_loss mean %w, %y : tensor<4x3xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @loss_of_a_parameter batch_size 4 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// A loss against a filled target (torch.zeros_like) takes a smaller fill.
// CHECK-LABEL: func.func @loss_of_a_fill_micro
// CHECK: %[[ZERO:.*]] = gacc.broadcast %{{.*}} : tensor<f32> -> tensor<2x3xf32>
// CHECK: gacc.mse_loss sum %{{.*}}, %[[ZERO]] : tensor<2x3xf32>
gacc.input @x : tensor<4x3xf32> features
gacc.param @w : tensor<3x3xf32> = #gacc.init<ones>
func.func @loss_of_a_fill() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x3xf32>
  %w = gacc.load @w : tensor<3x3xf32>
  %y = gacc.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %c = gacc.constant dense<0.0> : tensor<f32>
  %zero = gacc.broadcast %c : tensor<f32> -> tensor<4x3xf32>
  %l = gacc.mse_loss mean %y, %zero : tensor<4x3xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @loss_of_a_fill batch_size 4 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>
