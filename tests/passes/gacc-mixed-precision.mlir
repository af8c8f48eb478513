// RUN: gacc-opt %s -split-input-file -gacc-mixed-precision -verify-diagnostics | FileCheck %s

// A linear layer: the matmul runs in bf16, the parameters are cast where they
// meet bf16 activations (the bias add stays bf16, as torch.nn.Linear under
// autocast), the loss is f32 and the logits keep their declared type.
gacc.param @w : tensor<8x16xf32> = #gacc.init<zeros>
gacc.param @b : tensor<8xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x16xf32> features
gacc.input @y : tensor<4xi32> labels
func.func @m() -> (tensor<f32>, tensor<4x8xf32>) {
  %x = gacc.load @x : tensor<4x16xf32>
  %y = gacc.load @y : tensor<4xi32>
  %w = gacc.load @w : tensor<8x16xf32>
  %b = gacc.load @b : tensor<8xf32>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %z = gacc.add %h, %b : tensor<4x8xf32>, tensor<8xf32>
  %r = gacc.relu %z : tensor<4x8xf32>
  %l = gacc.cross_entropy mean %r, %y : tensor<4x8xf32>, tensor<4xi32>
  return %l, %r : tensor<f32>, tensor<4x8xf32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> precision bf16
// CHECK-LABEL: func.func @m() -> (tensor<f32>, tensor<4x8xf32>)
// CHECK-DAG: %[[X:.*]] = gacc.load @x : tensor<4x16xf32>
// CHECK-DAG: %[[W:.*]] = gacc.load @w : tensor<8x16xf32>
// CHECK-DAG: %[[B:.*]] = gacc.load @b : tensor<8xf32>
// CHECK: %[[XL:.*]] = gacc.cast %[[X]] : tensor<4x16xf32> to tensor<4x16xbf16>
// CHECK: %[[WL:.*]] = gacc.cast %[[W]] : tensor<8x16xf32> to tensor<8x16xbf16>
// CHECK: %[[H:.*]] = gacc.matmul %[[XL]], %[[WL]] transpose_rhs : tensor<4x16xbf16>, tensor<8x16xbf16> -> tensor<4x8xbf16>
// CHECK: %[[BL:.*]] = gacc.cast %[[B]] : tensor<8xf32> to tensor<8xbf16>
// CHECK: %[[Z:.*]] = gacc.add %[[H]], %[[BL]] : tensor<4x8xbf16>, tensor<8xbf16>
// CHECK: %[[R:.*]] = gacc.relu %[[Z]] : tensor<4x8xbf16>
// CHECK: %[[R32:.*]] = gacc.cast %[[R]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: %[[L:.*]] = gacc.cross_entropy mean %[[R32]], %{{.*}} : tensor<4x8xf32>, tensor<4xi32>
// CHECK: return %[[L]], %[[R32]] : tensor<f32>, tensor<4x8xf32>

// -----

// autocast's fp32 list (softmax, layer_norm, exp, sums) widens f16
// activations to f32; its outputs feed the next matmul through one cast,
// and a parameter two matmuls share is cast once.
gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
gacc.param @g : tensor<8xf32> = #gacc.init<ones>
gacc.param @beta : tensor<8xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x8xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x8xf32>
  %w = gacc.load @w : tensor<8x8xf32>
  %g = gacc.load @g : tensor<8xf32>
  %beta = gacc.load @beta : tensor<8xf32>
  %h = gacc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %n = gacc.layer_norm %h, %g, %beta : tensor<4x8xf32>, tensor<8xf32>
  %s = gacc.softmax %n axis = 1 : tensor<4x8xf32>
  %h2 = gacc.matmul %s, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %e = gacc.exp %h2 : tensor<4x8xf32>
  %l = gacc.reduce_sum %e axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> precision f16
// CHECK-LABEL: func.func @m() -> tensor<f32>
// CHECK: %[[WL:.*]] = gacc.cast %{{.*}} : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK: %[[H:.*]] = gacc.matmul %{{.*}}, %[[WL]] : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
// CHECK: %[[H32:.*]] = gacc.cast %[[H]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK: %[[N:.*]] = gacc.layer_norm %[[H32]], %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
// CHECK: %[[S:.*]] = gacc.softmax %[[N]] axis = 1 : tensor<4x8xf32>
// CHECK: %[[SL:.*]] = gacc.cast %[[S]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NOT: gacc.cast
// CHECK: %[[H2:.*]] = gacc.matmul %[[SL]], %[[WL]] : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
// CHECK: %[[H232:.*]] = gacc.cast %[[H2]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK: %[[E:.*]] = gacc.exp %[[H232]] : tensor<4x8xf32>
// CHECK: gacc.reduce_sum %[[E]] axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>

// -----

// Embeddings run in their table's type (f32), as under autocast, so a
// residual add of f32 and f16 activations is f32. Values computed from
// parameters and constants alone (a transposed weight, a mask, a scale)
// keep their type and adapt where they meet activations.
gacc.param @table : tensor<10x8xf32> = #gacc.init<zeros>
gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
gacc.input @ids : tensor<4xi32> tokens
func.func @m() -> tensor<f32> {
  %ids = gacc.load @ids : tensor<4xi32>
  %table = gacc.load @table : tensor<10x8xf32>
  %w = gacc.load @w : tensor<8x8xf32>
  %e = gacc.embedding %table, %ids : tensor<10x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
  %wt = gacc.transpose %w perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %h = gacc.matmul %e, %wt : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %c = gacc.constant dense<0.5> : tensor<f32>
  %hs = gacc.mul %h, %c : tensor<4x8xf32>, tensor<f32>
  %r = gacc.add %e, %hs : tensor<4x8xf32>, tensor<4x8xf32>
  %l = gacc.reduce_mean %r axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> precision f16
// CHECK-LABEL: func.func @m() -> tensor<f32>
// CHECK: %[[E:.*]] = gacc.embedding %{{.*}}, %{{.*}} : tensor<10x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
// CHECK: %[[WT:.*]] = gacc.transpose %{{.*}} perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[EL:.*]] = gacc.cast %[[E]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: %[[WTL:.*]] = gacc.cast %[[WT]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK: %[[H:.*]] = gacc.matmul %[[EL]], %[[WTL]]
// CHECK: %[[C:.*]] = gacc.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[CL:.*]] = gacc.cast %[[C]] : tensor<f32> to tensor<f16>
// CHECK: %[[HS:.*]] = gacc.mul %[[H]], %[[CL]] : tensor<4x8xf16>, tensor<f16>
// CHECK: %[[HS32:.*]] = gacc.cast %[[HS]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK: gacc.add %[[E]], %[[HS32]] : tensor<4x8xf32>, tensor<4x8xf32>

// -----

// gacc.autocast overrides an op's class.
gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x8xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x8xf32>
  %w = gacc.load @w : tensor<8x8xf32>
  %h = gacc.matmul %x, %w {gacc.autocast = "f32"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %e = gacc.exp %h {gacc.autocast = "low"} : tensor<4x8xf32>
  %l = gacc.reduce_sum %e axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> precision bf16
// CHECK-LABEL: func.func @m() -> tensor<f32>
// CHECK: %[[H:.*]] = gacc.matmul %{{.*}}, %{{.*}} {gacc.autocast = "f32"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[HL:.*]] = gacc.cast %[[H]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[E:.*]] = gacc.exp %[[HL]] {gacc.autocast = "low"} : tensor<4x8xbf16>
// CHECK: %[[E32:.*]] = gacc.cast %[[E]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: gacc.reduce_sum %[[E32]]

// -----

// f32 steps are left alone.
gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<8x8xf32>
  %h = gacc.matmul %w, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %l = gacc.reduce_sum %h axes = [0, 1] : tensor<8x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m() -> tensor<f32>
// CHECK-NOT: gacc.cast

// -----

gacc.param @w : tensor<8x8xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x8xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x8xf32>
  %w = gacc.load @w : tensor<8x8xf32>
  // expected-error @+1 {{'gacc.matmul' op attribute 'gacc.autocast' must be "low" or "f32"}}
  %h = gacc.matmul %x, %w {gacc.autocast = "half"} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %l = gacc.reduce_sum %h axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> precision bf16
