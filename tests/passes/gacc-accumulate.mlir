// RUN: gacc-opt %s -split-input-file -gacc-split-batch -gacc-autodiff -gacc-accumulate -verify-diagnostics | FileCheck %s

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
// CHECK: gacc.compare ge %[[Y]], %{{.*}} : tensor<10xi32>, tensor<i32>
// CHECK: gacc.compare lt %[[Y]], %{{.*}} : tensor<10xi32>, tensor<i32>
// CHECK: %[[COUNTED:.*]] = gacc.mul %{{.*}}, %{{.*}} : tensor<10xf32>, tensor<10xf32>
// CHECK: %[[COUNT:.*]] = gacc.reduce_sum %[[COUNTED]] axes = [0] : tensor<10xf32> -> tensor<f32>
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
// Evaluation runs the same micro-batches, forward only: the loss summed and
// divided by the count, the outputs placed in their rows.
// CHECK-LABEL: func.func @m_eval() -> (tensor<f32>, tensor<10x3xf32>)
// CHECK: %[[ECOUNT:.*]] = gacc.reduce_sum
// CHECK: %[[E:.*]]:2 = scf.for %[[EK:.*]] = %c0 to %c2 step %c1 iter_args(%[[ELOSS:.*]] = %{{.*}}, %[[EOUT:.*]] = %{{.*}}) -> (tensor<f32>, tensor<10x3xf32>)
// CHECK:   %[[EOFF:.*]] = arith.muli %[[EK]], %c4
// CHECK:   %[[EL:.*]] = gacc.matmul {{.*}} : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK:   %[[ES:.*]] = gacc.cross_entropy sum %[[EL]]
// CHECK:   %[[ENEXT:.*]] = gacc.add %[[ELOSS]], %[[ES]]
// CHECK:   %[[EROWS:.*]] = tensor.insert_slice %[[EL]] into %[[EOUT]][%[[EOFF]], 0] [4, 3] [1, 1]
// CHECK:   scf.yield %[[ENEXT]], %[[EROWS]]
// CHECK: gacc.cross_entropy sum {{.*}} : tensor<2x3xf32>, tensor<2xi32>
// CHECK: %[[ELAST:.*]] = tensor.insert_slice {{.*}} into %[[E]]#1[%c8, 0] [2, 3] [1, 1]
// CHECK: %[[EMEAN:.*]] = gacc.div %{{.*}}, %[[ECOUNT]]
// CHECK: return %[[EMEAN]], %[[ELAST]]
// The micro-batch functions are inlined and gone; the step refers to the
// accumulated gradient function and the evaluation.
// CHECK-NOT: func.func
// CHECK: gacc.train_step @t model @m batch_size 10 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1> gradient @m_grad eval_model @m_eval{{$}}

// -----

// Without its micro-batches' gradients, the loop cannot be built.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<8x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<8x4xf32>
  return %l : tensor<f32>
}
func.func @m_micro3(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %p = gacc.mul %x, %w : tensor<3x4xf32>, tensor<4xf32>
  %l = gacc.mse_loss sum %p, %y : tensor<3x4xf32>
  return %l : tensor<f32>
}
// expected-error @+1 {{runs micro-batches, but has no last_micro_gradient: run gacc-split-batch and gacc-autodiff first}}
gacc.train_step @t model @m batch_size 8 micro_batch_size 3 optimizer #gacc.sgd<lr = 0.1> micro_model @m_micro3


// -----

// Targets reshaped before the loss (F.cross_entropy(logits.view(-1, V),
// targets.view(-1))) are counted from the input they reshape.
gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<4x2x4xf32> features
gacc.input @y : tensor<4x2xi32> labels
func.func @flat() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2x4xf32>
  %y = gacc.load @y : tensor<4x2xi32>
  %w = gacc.load @w : tensor<3x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<4x2x4xf32>, tensor<3x4xf32> -> tensor<4x2x3xf32>
  %lf = gacc.reshape %l : tensor<4x2x3xf32> -> tensor<8x3xf32>
  %yf = gacc.reshape %y : tensor<4x2xi32> -> tensor<8xi32>
  %loss = gacc.cross_entropy token_mean %lf, %yf ignore_index = -1 : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @flat batch_size 4 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @flat_grad()
// CHECK: %[[Y:.*]] = gacc.load @y : tensor<4x2xi32>
// CHECK: gacc.compare ge %[[Y]], %{{.*}} : tensor<4x2xi32>, tensor<i32>
// CHECK: %[[COUNTED:.*]] = gacc.mul %{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<4x2xf32>
// CHECK: gacc.reduce_sum %[[COUNTED]] axes = [0, 1] : tensor<4x2xf32> -> tensor<f32>
