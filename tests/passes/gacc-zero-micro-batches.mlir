// RUN: gacc-opt %s --gacc-training-pipeline | FileCheck %s

// ZeRO-2 with micro-batches: gacc-accumulate reduce-scatters every
// micro-batch's gradients, and gacc-build-step does not reduce them again,
// even @b's, whose one-element shard has the parameter's own type.
gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 1>
gacc.param @b : tensor<1xf32> = #gacc.init<zeros>
gacc.input @x : tensor<4x2xf32> features
gacc.input @y : tensor<4x3xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %y = gacc.load @y : tensor<4x3xf32>
  %w = gacc.load @w : tensor<3x2xf32>
  %b = gacc.load @b : tensor<1xf32>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %p = gacc.add %h, %b : tensor<4x3xf32>, tensor<1xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<4x3xf32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 micro_batch_size 2 optimizer #gacc.sgd<lr = 0.1> zero #gacc.zero<stage = 2, ranks = 2>
// CHECK-LABEL: func.func @gacc_step
// CHECK: scf.for {{.*}} -> (tensor<f32>, tensor<3xf32>, tensor<1xf32>)
// CHECK: gacc.reduce_scatter sum {{.*}} : tensor<6xf32> -> tensor<3xf32>
// CHECK: gacc.reduce_scatter sum {{.*}} : tensor<2xf32> -> tensor<1xf32>
// CHECK: scf.yield
// CHECK-NOT: gacc.reduce_scatter
// CHECK-LABEL: func.func @gacc_eval
