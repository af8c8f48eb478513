// RUN: gacc-opt %s -gacc-split-batch -gacc-autodiff -gacc-accumulate 2>/dev/null | FileCheck %s
// RUN: gacc-opt %s --gacc-zero="stage=1 ranks=2" -gacc-split-batch -gacc-autodiff -gacc-accumulate 2>/dev/null | FileCheck %s --check-prefix=RANKS

// Each micro-batch reads the running statistics the one before it wrote,
// as PyTorch's accumulation loop does: they are carried through the loop
// and assigned once after it.
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
gacc.train_step @t model @m batch_size 8 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad()
// CHECK-SAME: attributes {gacc.gradients = [@w1, @bn.weight, @bn.bias, @w2]}
// CHECK-DAG: %[[RM:.*]] = gacc.load @bn.running_mean : tensor<6xf32>
// CHECK-DAG: %[[RV:.*]] = gacc.load @bn.running_var : tensor<6xf32>
// CHECK: %[[R:.*]]:7 = scf.for %{{.*}} iter_args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CM:.*]] = %[[RM]], %[[CV:.*]] = %[[RV]])
// CHECK-NOT: gacc.load @bn.running
// CHECK-NOT: gacc.assign
// CHECK:   %{{.*}}, %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[CM]], %[[CV]] momentum = 1.000000e-01 epsilon = 1.000000e-05 : tensor<4x6xf32>, tensor<6xf32>
// CHECK-NOT: gacc.assign
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NM]], %[[NV]]
// CHECK: gacc.assign @bn.running_mean, %[[R]]#5 : tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_var, %[[R]]#6 : tensor<6xf32>
// CHECK-NEXT: gacc.div %[[R]]#0
// CHECK: return
// Evaluation assigns nothing and carries no statistics (gacc_eval
// normalizes with the running ones).
// CHECK-LABEL: func.func @m_eval() -> tensor<f32>
// CHECK: scf.for {{.*}} -> (tensor<f32>)
// CHECK-NOT: gacc.assign
// CHECK: return
// CHECK: gacc.train_step @t {{.*}} gradient @m_grad eval_model @m_eval

// On several ranks, every rank keeps rank 0's statistics (as
// DistributedDataParallel broadcasts its buffers from rank 0).
// RANKS-LABEL: func.func @m_grad()
// RANKS: %{{.*}}, %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm
// RANKS: %[[BM:.*]] = gacc.collective_broadcast %[[NM]] root = 0 ranks = 2 : tensor<6xf32>
// RANKS-NEXT: gacc.assign @bn.running_mean, %[[BM]] : tensor<6xf32>
// RANKS-NEXT: %[[BV:.*]] = gacc.collective_broadcast %[[NV]] root = 0 ranks = 2 : tensor<6xf32>
// RANKS-NEXT: gacc.assign @bn.running_var, %[[BV]] : tensor<6xf32>
// One micro-batch a rank: evaluation runs the model itself.
// RANKS-NOT: func.func @m_eval
// RANKS: gacc.train_step @t {{.*}} gradient @m_grad{{$}}
