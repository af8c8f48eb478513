// RUN: gacc-opt %s -split-input-file -gacc-autodiff -verify-diagnostics | FileCheck %s

gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, seed = 1>
gacc.param @b : tensor<4xf32> = #gacc.init<zeros>
gacc.param @unused : tensor<2xf32> = #gacc.init<ones>
gacc.input @x : tensor<5x3xf32> features

// The model is kept; its gradient function returns the model's results and
// then one gradient per parameter, in declaration order; the step refers to
// it.
// CHECK-LABEL: func.func @m() -> tensor<f32>
// CHECK-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<2xf32>)
// CHECK-SAME: attributes {gacc.gradients = [@w, @b, @unused]}
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<5x3xf32>
  %w = gacc.load @w : tensor<3x4xf32>
  %b = gacc.load @b : tensor<4xf32>
  %h = gacc.matmul %x, %w : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %y = gacc.add %h, %b : tensor<5x4xf32>, tensor<4xf32>
  // %y is used twice: its gradients are summed.
  %sq = gacc.mul %y, %y : tensor<5x4xf32>, tensor<5x4xf32>
  %l = gacc.reduce_sum %sq axes = [0, 1] : tensor<5x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK: %[[ONE:.*]] = gacc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SPREAD:.*]] = gacc.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<5x4xf32>
// CHECK: %[[D1:.*]] = gacc.mul %[[SPREAD]], %[[Y:.*]] : tensor<5x4xf32>, tensor<5x4xf32>
// CHECK: %[[D2:.*]] = gacc.mul %[[SPREAD]], %[[Y]] : tensor<5x4xf32>, tensor<5x4xf32>
// CHECK: %[[DY:.*]] = gacc.add %[[D1]], %[[D2]] : tensor<5x4xf32>, tensor<5x4xf32>
// The bias gradient sums the broadcast batch dimension.
// CHECK: %[[DB0:.*]] = gacc.reduce_sum %[[DY]] axes = [0] keepdims : tensor<5x4xf32> -> tensor<1x4xf32>
// CHECK: %[[DB:.*]] = gacc.reshape %[[DB0]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK: %[[DW:.*]] = gacc.matmul %{{.*}}, %[[DY]] transpose_lhs : tensor<5x3xf32>, tensor<5x4xf32> -> tensor<3x4xf32>
// An unused parameter gets zeros.
// CHECK: %[[ZERO:.*]] = gacc.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[DB]], %[[ZERO]]

gacc.train_step @t model @m batch_size 5 optimizer #gacc.sgd<lr = 0.1>

// -----

// A parameter loaded twice gets the sum of both gradients; a transposed
// matmul operand gets its gradient transposed back.
gacc.param @w : tensor<4x3xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<2x3xf32> features
// CHECK-LABEL: func.func @m_grad
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x3xf32>
  %w1 = gacc.load @w : tensor<4x3xf32>
  %w2 = gacc.load @w : tensor<4x3xf32>
  %h = gacc.matmul %x, %w1 transpose_rhs : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %s = gacc.reduce_sum %h axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %t = gacc.reduce_sum %w2 axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  %l = gacc.add %s, %t : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}
// CHECK: %[[DW1:.*]] = gacc.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK: %[[DW:.*]] = gacc.add %[[DW1]], %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK: return %{{.*}}, %[[DW]]
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// A weight that every batch element reads (a linear layer over [B, T, C])
// gets its gradient as one product over all B·T rows, read as a matrix
// or transposed, not B products summed after.
gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, seed = 1>
gacc.param @v : tensor<4x4xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<2x5x3xf32> features
// CHECK-LABEL: func.func @m_grad
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x5x3xf32>
  %w = gacc.load @w : tensor<3x4xf32>
  %v = gacc.load @v : tensor<4x4xf32>
  %h = gacc.matmul %x, %w : tensor<2x5x3xf32>, tensor<3x4xf32> -> tensor<2x5x4xf32>
  %o = gacc.matmul %h, %v transpose_rhs : tensor<2x5x4xf32>, tensor<4x4xf32> -> tensor<2x5x4xf32>
  %l = gacc.reduce_sum %o axes = [0, 1, 2] : tensor<2x5x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK: %[[H_ROWS:.*]] = gacc.reshape %{{.*}} : tensor<2x5x4xf32> -> tensor<10x4xf32>
// CHECK: %[[DY_ROWS:.*]] = gacc.reshape %{{.*}} : tensor<2x5x4xf32> -> tensor<10x4xf32>
// CHECK: gacc.matmul %[[DY_ROWS]], %[[H_ROWS]] transpose_lhs : tensor<10x4xf32>, tensor<10x4xf32> -> tensor<4x4xf32>
// CHECK: %[[X_ROWS:.*]] = gacc.reshape %{{.*}} : tensor<2x5x3xf32> -> tensor<10x3xf32>
// CHECK: %[[DH_ROWS:.*]] = gacc.reshape %{{.*}} : tensor<2x5x4xf32> -> tensor<10x4xf32>
// CHECK: gacc.matmul %[[X_ROWS]], %[[DH_ROWS]] transpose_lhs : tensor<10x3xf32>, tensor<10x4xf32> -> tensor<3x4xf32>
// CHECK-NOT: gacc.reduce_sum
// CHECK: return
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  // expected-error @+1 {{'arith.addf' op has no derivative rule (VJPOpInterface), but the loss depends on it}}
  %y = arith.addf %w, %w : tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>

// -----

// The name <model>_grad is taken: the gradient function gets another, which
// the step refers to.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @m_grad() {
  return
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad_0() -> (tensor<f32>, tensor<3xf32>)
// CHECK: return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @m_grad() {
// CHECK: gacc.train_step @t model @m {{.*}} gradient @m_grad_0

// -----

// Two steps of one model share its gradient function.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @a model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
gacc.train_step @b model @m batch_size 1 optimizer #gacc.sgd<lr = 0.2>
// CHECK-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<3xf32>)
// CHECK-NOT: func.func
// CHECK: gacc.train_step @a model @m {{.*}} gradient @m_grad
// CHECK: gacc.train_step @b model @m {{.*}} gradient @m_grad

// -----

// Micro-batches: the models gacc-split-batch built are differentiated, from
// a trailing seed argument, and the step refers to their gradients.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x3xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x3xf32>
  %w = gacc.load @w : tensor<3xf32>
  %y = gacc.mul %x, %w : tensor<4x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @m_micro2(%x: tensor<2x3xf32>) -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %y = gacc.mul %x, %w : tensor<2x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 micro_batch_size 2
    optimizer #gacc.sgd<lr = 0.1> micro_model @m_micro2
// CHECK-LABEL: func.func @m_micro2_grad(
// CHECK-SAME: tensor<2x3xf32>, %{{.*}}: tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
// CHECK: gacc.train_step @t model @m {{.*}} micro_model @m_micro2 micro_gradient @m_micro2_grad
// CHECK-NOT: gradient @m_grad

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x3xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x3xf32>
  %w = gacc.load @w : tensor<3xf32>
  %y = gacc.mul %x, %w : tensor<4x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{runs micro-batches, but has no micro_model: run gacc-split-batch before gacc-autodiff}}
gacc.train_step @t model @m batch_size 4 micro_batch_size 2
    optimizer #gacc.sgd<lr = 0.1>

// -----

// The gradient of a cast is the gradient cast back; f16 steps (dynamic loss
// scaling) start the backward from the loss scale instead of 1.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %h = gacc.cast %w : tensor<3xf32> to tensor<3xf16>
  %s = gacc.reduce_sum %h axes = [0] : tensor<3xf16> -> tensor<f16>
  %l = gacc.cast %s : tensor<f16> to tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> precision f16
// CHECK-LABEL: func.func @m_grad
// CHECK: %[[SEED:.*]] = gacc.loss_scale : tensor<f32>
// CHECK: %[[S:.*]] = gacc.cast %[[SEED]] : tensor<f32> to tensor<f16>
// CHECK: %[[R:.*]] = gacc.reshape %[[S]] : tensor<f16> -> tensor<1xf16>
// CHECK: %[[B:.*]] = gacc.broadcast %[[R]] : tensor<1xf16> -> tensor<3xf16>
// CHECK: %[[G:.*]] = gacc.cast %[[B]] : tensor<3xf16> to tensor<3xf32>
// CHECK: return %{{.*}}, %[[G]] : tensor<f32>, tensor<3xf32>

// -----

// Collectives: all_reduce's gradient is the all_reduce of the gradient,
// reduce_scatter's the all_gather (divided by the ranks for mean), and
// all_gather's the reduce_scatter with sum.
gacc.param @w : tensor<8xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<8xf32>
  %g = gacc.all_gather %w dim = 0 ranks = 2 : tensor<8xf32> -> tensor<16xf32>
  %s = gacc.reduce_scatter mean %g dim = 0 ranks = 4 : tensor<16xf32> -> tensor<4xf32>
  %r = gacc.all_reduce sum %s ranks = 4 : tensor<4xf32>
  %l = gacc.reduce_sum %r axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad
// CHECK: %[[DR:.*]] = gacc.broadcast %{{.*}} : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[DS:.*]] = gacc.all_reduce sum %[[DR]] ranks = 4 : tensor<4xf32>
// CHECK: %[[DG:.*]] = gacc.all_gather %[[DS]] dim = 0 ranks = 4 : tensor<4xf32> -> tensor<16xf32>
// CHECK: %[[N:.*]] = gacc.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[DGM:.*]] = gacc.div %[[DG]], %[[N]] : tensor<16xf32>, tensor<f32>
// CHECK: %[[DW:.*]] = gacc.reduce_scatter sum %[[DGM]] dim = 0 ranks = 2 : tensor<16xf32> -> tensor<8xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<8xf32>

// -----

// An embedding's gradient is one_hot(ids)ᵀ · dy, marked
// gacc.embedding_gradient so that a target may add rows instead.
gacc.param @table : tensor<5x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @ids : tensor<2x3xi32> tokens
func.func @m() -> tensor<f32> {
  %t = gacc.load @table : tensor<5x4xf32>
  %i = gacc.load @ids : tensor<2x3xi32>
  %e = gacc.embedding %t, %i : tensor<5x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %l = gacc.reduce_sum %e axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad
// CHECK: %[[IDS:.*]] = gacc.reshape %{{.*}} : tensor<2x3xi32> -> tensor<6xi32>
// CHECK: %[[HOT:.*]] = gacc.one_hot %[[IDS]] : tensor<6xi32> -> tensor<6x5xf32>
// CHECK: %[[ROWS:.*]] = gacc.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: gacc.matmul %[[HOT]], %[[ROWS]] transpose_lhs {gacc.embedding_gradient} : tensor<6x5xf32>, tensor<6x4xf32> -> tensor<5x4xf32>

// -----

// The gradients of slices side by side along one axis (`q, k, v =
// qkv.split(...)`) are joined, not zero pads added; slices with a gap
// between them keep their pads and add.
gacc.param @w : tensor<4x6xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<2x4xf32> features
// CHECK-LABEL: func.func @m_grad
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w = gacc.load @w : tensor<4x6xf32>
  %y = gacc.matmul %x, %w : tensor<2x4xf32>, tensor<4x6xf32> -> tensor<2x6xf32>
  %q = gacc.slice %y offsets = [0, 0] sizes = [2, 2] : tensor<2x6xf32> -> tensor<2x2xf32>
  %k = gacc.slice %y offsets = [0, 2] sizes = [2, 2] : tensor<2x6xf32> -> tensor<2x2xf32>
  %v = gacc.slice %y offsets = [0, 4] sizes = [2, 2] : tensor<2x6xf32> -> tensor<2x2xf32>
  %qk = gacc.mul %q, %k : tensor<2x2xf32>, tensor<2x2xf32>
  %s = gacc.mul %qk, %v : tensor<2x2xf32>, tensor<2x2xf32>
  %l = gacc.reduce_sum %s axes = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %first = gacc.slice %w offsets = [0, 0] sizes = [1, 6] : tensor<4x6xf32> -> tensor<1x6xf32>
  %third = gacc.slice %w offsets = [2, 0] sizes = [1, 6] : tensor<4x6xf32> -> tensor<1x6xf32>
  %f = gacc.reduce_sum %first axes = [0, 1] : tensor<1x6xf32> -> tensor<f32>
  %t = gacc.reduce_sum %third axes = [0, 1] : tensor<1x6xf32> -> tensor<f32>
  %ft = gacc.add %f, %t : tensor<f32>, tensor<f32>
  %total = gacc.add %l, %ft : tensor<f32>, tensor<f32>
  return %total : tensor<f32>
}
// CHECK: %[[DT:.*]] = gacc.pad %{{.*}} low = [2, 0] high = [1, 0] : tensor<1x6xf32> -> tensor<4x6xf32>
// CHECK: %[[DF:.*]] = gacc.pad %{{.*}} low = [0, 0] high = [3, 0] : tensor<1x6xf32> -> tensor<4x6xf32>
// CHECK: %[[DFT:.*]] = gacc.add %[[DT]], %[[DF]]
// CHECK-NOT: gacc.pad
// CHECK: %[[DQKV:.*]] = gacc.concat %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] axis = 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x6xf32>
// CHECK: %[[DW:.*]] = gacc.matmul %{{.*}}, %[[DQKV]] transpose_lhs
// CHECK: gacc.add %[[DFT]], %[[DW]]
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----

// A pad that a join replaces can be another value's gradient too: an add
// passes its result's gradient (a slice's pad) to both operands, and only
// %y's joins with the other slice's.
gacc.param @w : tensor<4x6xf32> = #gacc.init<normal, seed = 1>
gacc.param @c : tensor<2x6xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<2x4xf32> features
// CHECK-LABEL: func.func @m_grad
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w = gacc.load @w : tensor<4x6xf32>
  %c = gacc.load @c : tensor<2x6xf32>
  %y = gacc.matmul %x, %w : tensor<2x4xf32>, tensor<4x6xf32> -> tensor<2x6xf32>
  %t = gacc.add %y, %c : tensor<2x6xf32>, tensor<2x6xf32>
  %a = gacc.slice %t offsets = [0, 0] sizes = [2, 3] : tensor<2x6xf32> -> tensor<2x3xf32>
  %b = gacc.slice %y offsets = [0, 3] sizes = [2, 3] : tensor<2x6xf32> -> tensor<2x3xf32>
  %ab = gacc.mul %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
  %l = gacc.reduce_sum %ab axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK: %[[ONES:.*]] = gacc.broadcast %{{.*}} -> tensor<2x3xf32>
// CHECK: %[[DA:.*]] = gacc.mul %[[ONES]], %{{.*}} : tensor<2x3xf32>
// CHECK: %[[DB:.*]] = gacc.mul %[[ONES]], %{{.*}} : tensor<2x3xf32>
// CHECK: %[[DC:.*]] = gacc.pad %[[DA]] low = [0, 0] high = [0, 3] : tensor<2x3xf32> -> tensor<2x6xf32>
// CHECK: %[[DY:.*]] = gacc.concat %[[DA]], %[[DB]] axis = 1
// CHECK: %[[DW:.*]] = gacc.matmul %{{.*}}, %[[DY]] transpose_lhs
// CHECK: return %{{.*}}, %[[DW]], %[[DC]]
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>
