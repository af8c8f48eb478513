// RUN: gacc-opt %s -split-input-file -gacc-split-batch -verify-diagnostics | FileCheck %s

// Batch norm on micro-batches: each micro-batch's model normalizes with its
// own statistics and assigns the running statistics; the step differs from
// one over the whole batch, which a warning says.
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
  // expected-warning @+1 {{batch norm takes its statistics over each micro-batch of 4 examples, not over the batch of 8: step 't' is not equal to one step over the whole batch}}
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
gacc.train_step @t model @m batch_size 8 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_micro4(%arg0: tensor<4x4xf32>, %arg1: tensor<4xi32>) -> tensor<f32>
// CHECK: %[[RM:.*]] = gacc.load @bn.running_mean : tensor<6xf32>
// CHECK: %[[RV:.*]] = gacc.load @bn.running_var : tensor<6xf32>
// CHECK: %{{.*}}, %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[RM]], %[[RV]] momentum = 1.000000e-01 epsilon = 1.000000e-05 : tensor<4x6xf32>, tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_mean, %[[NM]] : tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_var, %[[NV]] : tensor<6xf32>
// CHECK: gacc.cross_entropy sum

// -----

// A micro-batch of one example has one value per channel: no variance.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
gacc.param @rm : tensor<4xf32> = #gacc.init<zeros> frozen
gacc.input @x : tensor<2x4xf32> features
gacc.input @y : tensor<2xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %y = gacc.load @y : tensor<2xi32>
  %w = gacc.load @w : tensor<4xf32>
  %rm = gacc.load @rm : tensor<4xf32>
  // expected-warning @+2 {{batch norm takes its statistics over each micro-batch of 1 examples}}
  // expected-error @+1 {{'gacc.batch_norm' op needs more than 1 value per channel in training, but a micro-batch of 1 example has 1}}
  %n, %nm, %nv = gacc.batch_norm %x, %w, %w, %rm, %rm momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<2x4xf32>, tensor<4xf32>
  gacc.assign @rm, %nm : tensor<4xf32>
  %l = gacc.cross_entropy mean %n, %y : tensor<2x4xf32>, tensor<2xi32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 2 micro_batch_size 1 optimizer #gacc.sgd<lr = 0.1>
