// RUN: gacc-opt %s -split-input-file -gacc-autodiff -verify-diagnostics | FileCheck %s

// Frozen parameters (batch norm's running statistics) get no gradient: the
// gradient function lists the trainable ones only, keeps the forward's
// assigns, and batch norm's rule gives the gradients of its input, scale
// and bias from the batch's statistics.
gacc.param @w1 : tensor<6x4xf32> = #gacc.init<xavier_uniform, seed = 1>
gacc.param @bn.weight : tensor<6xf32> = #gacc.init<ones>
gacc.param @bn.bias : tensor<6xf32> = #gacc.init<zeros>
gacc.param @bn.running_mean : tensor<6xf32> = #gacc.init<zeros> frozen
gacc.param @bn.running_var : tensor<6xf32> = #gacc.init<ones> frozen
gacc.param @w2 : tensor<3x6xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w1 = gacc.load @w1 : tensor<6x4xf32>
  %h = gacc.matmul %x, %w1 transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
  %w = gacc.load @bn.weight : tensor<6xf32>
  %b = gacc.load @bn.bias : tensor<6xf32>
  %rm = gacc.load @bn.running_mean : tensor<6xf32>
  %rv = gacc.load @bn.running_var : tensor<6xf32>
  %n, %nm, %nv = gacc.batch_norm %h, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05
      : tensor<8x6xf32>, tensor<6xf32>
  gacc.assign @bn.running_mean, %nm : tensor<6xf32>
  gacc.assign @bn.running_var, %nv : tensor<6xf32>
  %r = gacc.relu %n : tensor<8x6xf32>
  %w2 = gacc.load @w2 : tensor<3x6xf32>
  %logits = gacc.matmul %r, %w2 transpose_rhs : tensor<8x6xf32>, tensor<3x6xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<6x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<3x6xf32>)
// CHECK-SAME: attributes {gacc.gradients = [@w1, @bn.weight, @bn.bias, @w2]}
// CHECK: %[[H:.*]] = gacc.matmul
// CHECK: %[[Y:.*]], %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm %[[H]]
// CHECK-NEXT: gacc.assign @bn.running_mean, %[[NM]] : tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_var, %[[NV]] : tensor<6xf32>
// CHECK: %[[MEAN:.*]] = gacc.reduce_mean %[[H]] axes = [0] keepdims : tensor<8x6xf32> -> tensor<1x6xf32>
// CHECK: %[[C:.*]] = gacc.sub %[[H]], %[[MEAN]]
// CHECK: %[[RSTD:.*]] = gacc.rsqrt
// CHECK: %[[DX:.*]] = gacc.mul %[[RSTD]], %{{.*}} : tensor<1x6xf32>, tensor<8x6xf32>
// CHECK: %[[DW:.*]] = gacc.reduce_sum %{{.*}} axes = [0] : tensor<8x6xf32> -> tensor<6xf32>
// CHECK: %[[DB:.*]] = gacc.reduce_sum %{{.*}} axes = [0] : tensor<8x6xf32> -> tensor<6xf32>
// CHECK: %[[DW1:.*]] = gacc.matmul %[[DX]], %{{.*}} transpose_lhs
// CHECK: return %{{.*}}, %[[DW1]], %[[DW]], %[[DB]], %{{.*}} :
// CHECK-NOT: gacc.assign

// -----

// Only values computed from trainable parameters get gradients: a
// frozen weight (requires_grad=False) and what only it and the inputs
// compute are not differentiated.
gacc.param @frozen : tensor<3x4xf32> = #gacc.init<normal, seed = 1> frozen
gacc.param @b : tensor<3xf32> = #gacc.init<zeros>
gacc.input @x : tensor<5x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<5x4xf32>
  %w = gacc.load @frozen : tensor<3x4xf32>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<5x4xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
  %t = gacc.tanh %h : tensor<5x3xf32>
  %b = gacc.load @b : tensor<3xf32>
  %y = gacc.add %t, %b : tensor<5x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<5x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 5 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<3xf32>) attributes {gacc.gradients = [@b]}
// CHECK: gacc.tanh
// CHECK-NOT: gacc.tanh
// CHECK-NOT: gacc.matmul
// CHECK: return

// -----

// The running statistics have no derivative.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.param @rm : tensor<4xf32> = #gacc.init<zeros> frozen
gacc.input @x : tensor<8x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %w = gacc.load @w : tensor<4xf32>
  %rm = gacc.load @rm : tensor<4xf32>
  // expected-error @+1 {{'gacc.batch_norm' op has no derivative for its result #1, but the loss depends on it}}
  %y, %nm, %nv = gacc.batch_norm %x, %w, %w, %rm, %rm momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<8x4xf32>, tensor<4xf32>
  %l = gacc.reduce_sum %nm axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
