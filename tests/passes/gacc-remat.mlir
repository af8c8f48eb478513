// RUN: gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat=policy=blocks | FileCheck %s --check-prefix=BLOCKS
// RUN: gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat=policy=matmuls | FileCheck %s --check-prefix=MATMULS
// RUN: gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat=policy=none | FileCheck %s --check-prefix=NONE
// RUN: gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat="policy=blocks report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: remark: remat blocks: the backward keeps {{[0-9]+}} of {{[0-9]+}} bytes of activations; 2 ops recomputed, {{[0-9]+}}% of the forward's estimated time

// Two blocks: a matmul, a tanh (read by its own derivative) and a sigmoid
// (the block's output, the next block's checkpointed input).
gacc.param @w1 : tensor<4x4xf32> = #gacc.init<normal, seed = 1>
gacc.param @w2 : tensor<4x4xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<2x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w1 = gacc.load @w1 : tensor<4x4xf32>
  %w2 = gacc.load @w2 : tensor<4x4xf32>
  %c1 = gacc.checkpoint %x : tensor<2x4xf32>
  %m1 = gacc.matmul %c1, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %h1 = gacc.tanh %m1 : tensor<2x4xf32>
  %o1 = gacc.sigmoid %h1 : tensor<2x4xf32>
  %c2 = gacc.checkpoint %o1 : tensor<2x4xf32>
  %m2 = gacc.matmul %c2, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %h2 = gacc.tanh %m2 : tensor<2x4xf32>
  %o2 = gacc.sigmoid %h2 : tensor<2x4xf32>
  %l = gacc.reduce_sum %o2 axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// blocks: the first block's tanh is recomputed in the backward from the
// block's saved input, behind a barrier; its output (the next checkpoint)
// and the whole last block are kept.
// BLOCKS-LABEL: func.func @m_grad
// BLOCKS: %[[C1:.*]] = gacc.checkpoint %{{.*}} : tensor<2x4xf32>
// BLOCKS: %[[H1:.*]] = gacc.tanh
// BLOCKS: %[[O1:.*]] = gacc.sigmoid %[[H1]]
// BLOCKS: %[[H2:.*]] = gacc.tanh
// BLOCKS: gacc.mul %[[H2]], %[[H2]]
// BLOCKS: %[[SAVED:.*]] = gacc.optimization_barrier %[[C1]] : tensor<2x4xf32>
// BLOCKS: %[[RM1:.*]] = gacc.matmul %[[SAVED]], %{{.*}}
// BLOCKS: %[[RH1:.*]] = gacc.tanh %[[RM1]]
// BLOCKS: gacc.mul %[[RH1]], %[[RH1]]
// BLOCKS-NOT: gacc.mul %[[H1]], %[[H1]]

// matmuls: matmul results are saved; tanh and sigmoid are recomputed from
// them (the last block's too: matmuls has no segments).
// MATMULS-LABEL: func.func @m_grad
// MATMULS: %[[M1:.*]] = gacc.matmul
// MATMULS: %[[M2:.*]] = gacc.matmul
// MATMULS: %[[S2:.*]] = gacc.optimization_barrier %[[M2]]
// MATMULS: gacc.tanh %[[S2]]
// MATMULS: %[[S1:.*]] = gacc.optimization_barrier %[[M1]]
// MATMULS: gacc.tanh %[[S1]]

// none: nothing recomputed.
// NONE-LABEL: func.func @m_grad
// NONE-NOT: gacc.optimization_barrier

// -----

// Overrides: gacc.remat = "recompute" recomputes a value any policy keeps,
// "save" keeps one it recomputes.
gacc.param @w : tensor<4x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<2x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w = gacc.load @w : tensor<4x4xf32>
  %m = gacc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %e = gacc.exp %m {gacc.remat = "save"} : tensor<2x4xf32>
  %t = gacc.tanh %e {gacc.remat = "recompute"} : tensor<2x4xf32>
  %c = gacc.checkpoint %t : tensor<2x4xf32>
  %s = gacc.sigmoid %c : tensor<2x4xf32>
  %l = gacc.reduce_sum %s axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>
// NONE-LABEL: func.func @m_grad
// NONE: %[[E:.*]] = gacc.exp
// NONE: %[[SAVED:.*]] = gacc.optimization_barrier %[[E]]
// NONE: %[[T:.*]] = gacc.tanh %[[SAVED]]
// NONE-NOT: gacc.tanh %[[SAVED]] {gacc.remat
// MATMULS-LABEL: func.func @m_grad
// MATMULS: %[[E:.*]] = gacc.exp
// MATMULS: gacc.optimization_barrier %[[E]]

// -----

// On a checkpoint, an override covers its block: under none, the block
// after the "recompute" checkpoint is recomputed from the saved checkpoint.
gacc.param @w : tensor<4x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<2x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w = gacc.load @w : tensor<4x4xf32>
  %c = gacc.checkpoint %x {gacc.remat = "recompute"} : tensor<2x4xf32>
  %m = gacc.matmul %c, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %t = gacc.tanh %m : tensor<2x4xf32>
  %c2 = gacc.checkpoint %t {gacc.remat = "save"} : tensor<2x4xf32>
  %s = gacc.sigmoid %c2 : tensor<2x4xf32>
  %l = gacc.reduce_sum %s axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>
// NONE-LABEL: func.func @m_grad
// NONE: %[[C:.*]] = gacc.checkpoint %{{.*}} {gacc.remat = "recompute"}
// NONE: %[[T:.*]] = gacc.tanh
// NONE: %[[S:.*]] = gacc.sigmoid
// NONE: gacc.mul %[[S]], %{{.*}}
// NONE: %[[SAVED:.*]] = gacc.optimization_barrier %[[C]]
// NONE: %[[RM:.*]] = gacc.matmul %[[SAVED]]
// NONE: %[[RT:.*]] = gacc.tanh %[[RM]]
// NONE: gacc.mul %[[RT]], %[[RT]]
