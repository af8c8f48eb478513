// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-accumulate -verify-diagnostics | FileCheck %s

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

// 10 = 4 + 4 + 2: a loop over two micro-batches of 4, then one of 2.
// CHECK-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<10x3xf32>, tensor<3x4xf32>)
// CHECK-DAG: %[[X:.*]] = gacc.load @x : tensor<10x4xf32>
// CHECK-DAG: %[[Y:.*]] = gacc.load @y : tensor<10xi32>
// token_mean: the non-ignored targets of the whole batch, counted first.
// CHECK: %[[OH:.*]] = gacc.one_hot %[[Y]] : tensor<10xi32> -> tensor<10x3xf32>
// CHECK: %[[COUNT:.*]] = gacc.reduce_sum %[[OH]] axes = [0, 1] : tensor<10x3xf32> -> tensor<f32>
// Every micro-batch's backward starts from 1 / count, so its gradients come
// out normalized.
// CHECK: %[[ONE:.*]] = gacc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED:.*]] = gacc.div %[[ONE]], %[[COUNT]] : tensor<f32>, tensor<f32>
// CHECK: %[[R:.*]]:3 = scf.for %[[K:.*]] = %c0 to %c2 step %c1 iter_args(%[[LOSS:.*]] = %{{.*}}, %[[OUT:.*]] = %{{.*}}, %[[GW:.*]] = %{{.*}}) -> (tensor<f32>, tensor<10x3xf32>, tensor<3x4xf32>)
// CHECK:   %[[OFF:.*]] = arith.muli %[[K]], %c4
// CHECK:   tensor.extract_slice %[[X]][%[[OFF]], 0] [4, 4] [1, 1] : tensor<10x4xf32> to tensor<4x4xf32>
// CHECK:   tensor.extract_slice %[[Y]][%[[OFF]]] [4] [1] : tensor<10xi32> to tensor<4xi32>
// Each micro-batch sums its loss.
// CHECK:   gacc.cross_entropy sum
// CHECK:   gacc.div %[[SEED]]
// CHECK:   gacc.add %[[LOSS]]
// CHECK:   tensor.insert_slice %{{.*}} into %[[OUT]][%[[OFF]], 0] [4, 3] [1, 1]
// CHECK:   gacc.add %[[GW]]
// CHECK:   scf.yield
// The last micro-batch has 2 examples.
// CHECK: tensor.extract_slice %[[X]][%c8, 0] [2, 4] [1, 1] : tensor<10x4xf32> to tensor<2x4xf32>
// CHECK: gacc.cross_entropy sum {{.*}} : tensor<2x3xf32>, tensor<2xi32>
// The summed loss is divided by the global count; the gradients are sums.
// CHECK: %[[L:.*]] = gacc.div %{{.*}}, %[[COUNT]] : tensor<f32>, tensor<f32>
// CHECK-NOT: gacc.div
// CHECK: return %[[L]], %{{.*}}, %{{.*}}

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

// A reshape that folds the batch into another dimension is refused.
gacc.param @w : tensor<4x8xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x2xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x2xf32>
  %w = gacc.load @w : tensor<4x8xf32>
  // expected-error @+1 {{'gacc.reshape' op mixes examples of the batch, so its result depends on how the batch is split into micro-batches: it does not keep the batch as its leading dimension}}
  %r = gacc.reshape %x : tensor<8x4xf32> -> tensor<4x8xf32>
  %p = gacc.matmul %r, %w transpose_rhs : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  %q = gacc.reshape %p : tensor<4x4xf32> -> tensor<8x2xf32>
  %l = gacc.mse_loss mean %q, %y : tensor<8x2xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>
