// gacc-lora: every parameter frozen; the matrices that `targets` names get
// adapters A (kaiming uniform) and B (zeros) and a low-rank branch beside
// each matmul that reads them, in either layout; a matched vector is left
// out.
// RUN: gacc-opt --gacc-lora="rank=2 alpha=4 dropout=0.1 targets=.*" %s | FileCheck %s
// CHECK: gacc.param @fc.weight : tensor<6x4xf32> = #gacc.init<normal, seed = 1> frozen {gacc.lora = #gacc.lora<a = @fc.weight.lora_A, b = @fc.weight.lora_B, scale = 2.0>}
// CHECK-NEXT: gacc.param @fc.weight.lora_A : tensor<2x4xf32> = #gacc.init<kaiming_uniform, scale = 0.5773502691896258, seed = 3>
// CHECK-NEXT: gacc.param @fc.weight.lora_B : tensor<6x2xf32> = #gacc.init<zeros>
// CHECK-NEXT: gacc.param @fc.bias : tensor<6xf32> = #gacc.init<zeros> frozen{{$}}
// CHECK-NEXT: gacc.param @out.weight : tensor<6x3xf32> = #gacc.init<normal, seed = 2> frozen {gacc.lora = #gacc.lora<a = @out.weight.lora_A, b = @out.weight.lora_B, scale = 2.0, transposed = true>}
// CHECK-NEXT: gacc.param @out.weight.lora_A : tensor<2x6xf32> = #gacc.init<kaiming_uniform, scale = 0.5773502691896258, seed = 4>
// CHECK-NEXT: gacc.param @out.weight.lora_B : tensor<3x2xf32> = #gacc.init<zeros>
// CHECK-LABEL: func.func @m
// CHECK: %[[X:.*]] = gacc.load @x
// CHECK: %[[H:.*]] = gacc.matmul %[[X]], %{{.*}} transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
// CHECK: %[[D:.*]] = gacc.dropout %[[X]] rate = 1.000000e-01 seed = {{[0-9]+}} : tensor<8x4xf32>
// CHECK: %[[A:.*]] = gacc.load @fc.weight.lora_A
// CHECK: %[[B:.*]] = gacc.load @fc.weight.lora_B
// CHECK: %[[XA:.*]] = gacc.matmul %[[D]], %[[A]] transpose_rhs : tensor<8x4xf32>, tensor<2x4xf32> -> tensor<8x2xf32>
// CHECK: %[[XAB:.*]] = gacc.matmul %[[XA]], %[[B]] transpose_rhs : tensor<8x2xf32>, tensor<6x2xf32> -> tensor<8x6xf32>
// CHECK: %[[S:.*]] = gacc.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[SCALED:.*]] = gacc.mul %[[XAB]], %[[S]]
// CHECK: %[[SUM:.*]] = gacc.add %[[H]], %[[SCALED]]
// CHECK: gacc.add %[[SUM]], %{{.*}} : tensor<8x6xf32>, tensor<6xf32>
// CHECK: gacc.matmul %{{.*}}, %{{.*}} : tensor<8x6xf32>, tensor<6x3xf32> -> tensor<8x3xf32>
// CHECK: gacc.load @out.weight.lora_A : tensor<2x6xf32>

// Applied once: a module with adapters is left as it is.
// RUN: gacc-opt --gacc-lora="targets=.*" --gacc-lora="targets=.*" %s | FileCheck %s --check-prefix=ONCE
// ONCE-COUNT-2: gacc.param @{{.*}}.lora_A :
// ONCE-NOT: gacc.param @{{.*}}.lora_A :

// No weight-gradient matmul for the frozen weights: the gradient function
// has the forward's 6 matmuls and the adapters' 8 (dA, dB and the input
// of each branch, and the hidden layer's gradient through the frozen
// weight), none with a weight's shape.
// RUN: gacc-opt --gacc-lora="rank=2 alpha=4 targets=.*weight" --gacc-differentiation-pipeline %s | FileCheck %s --check-prefix=GRAD
// GRAD-LABEL: func.func @m_grad() -> (tensor<f32>, tensor<2x4xf32>, tensor<6x2xf32>, tensor<2x6xf32>, tensor<3x2xf32>)
// GRAD-SAME: gacc.gradients = [@fc.weight.lora_A, @fc.weight.lora_B, @out.weight.lora_A, @out.weight.lora_B]
// GRAD-COUNT-14: gacc.matmul
// GRAD-NOT: gacc.matmul
// GRAD: return
// RUN: gacc-opt --gacc-lora="rank=2 alpha=4 targets=.*weight" --gacc-differentiation-pipeline %s | FileCheck %s --check-prefix=SHAPES
// SHAPES-LABEL: func.func @m_grad
// SHAPES-NOT: -> tensor<{{6x4|4x6|6x3|3x6}}xf32>
// SHAPES: return

gacc.param @fc.weight : tensor<6x4xf32> = #gacc.init<normal, seed = 1>
gacc.param @fc.bias : tensor<6xf32> = #gacc.init<zeros>
gacc.param @out.weight : tensor<6x3xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w = gacc.load @fc.weight : tensor<6x4xf32>
  %b = gacc.load @fc.bias : tensor<6xf32>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
  %hb = gacc.add %h, %b : tensor<8x6xf32>, tensor<6xf32>
  %o = gacc.load @out.weight : tensor<6x3xf32>
  %l = gacc.matmul %hb, %o : tensor<8x6xf32>, tensor<6x3xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @train model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
