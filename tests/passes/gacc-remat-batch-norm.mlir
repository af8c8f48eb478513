// RUN: gacc-opt %s -gacc-autodiff -gacc-remat=policy=sqrt | FileCheck %s --check-prefix=SQRT
// RUN: sed 's/epsilon = 1.000000e-05$/epsilon = 1.000000e-05 {gacc.remat = "recompute"}/' %s | gacc-opt -gacc-autodiff -gacc-remat=policy=none | FileCheck %s --check-prefix=RECOMPUTE

// Assigns are forward ops: the backward recomputes forward values (the
// batch norm's input, or the batch norm itself when forced), never an
// assign, so the running statistics are updated once.
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
// SQRT-LABEL: func.func @m_grad()
// SQRT: %[[H:.*]] = gacc.matmul
// SQRT: gacc.batch_norm %[[H]]
// SQRT-NEXT: gacc.assign @bn.running_mean
// SQRT-NEXT: gacc.assign @bn.running_var
// SQRT-NOT: gacc.assign
// SQRT-NOT: gacc.batch_norm
// The backward recomputes the batch norm's input from the saved values.
// SQRT: %[[H2:.*]] = gacc.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
// SQRT: gacc.reduce_mean %[[H2]] axes = [0] keepdims
// SQRT-NOT: gacc.assign
// SQRT: return

// RECOMPUTE-LABEL: func.func @m_grad()
// RECOMPUTE: gacc.batch_norm
// RECOMPUTE-NEXT: gacc.assign @bn.running_mean
// RECOMPUTE-NEXT: gacc.assign @bn.running_var
// RECOMPUTE-NOT: gacc.assign
// RECOMPUTE: %[[B:.*]] = gacc.optimization_barrier
// RECOMPUTE-NEXT: gacc.batch_norm %[[B]]
// RECOMPUTE-NOT: gacc.assign
// RECOMPUTE: return
