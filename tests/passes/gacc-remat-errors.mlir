// RUN: gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat -verify-diagnostics
// RUN: not gacc-opt %s --split-input-file --gacc-autodiff --gacc-remat=policy=fast 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: gacc-remat: unknown policy 'fast' (none, blocks, sqrt or matmuls)

// blocks needs the blocks marked.
gacc.param @w : tensor<4xf32> = #gacc.init<normal, seed = 1>
// expected-error@+1 {{remat policy 'blocks' needs gacc.checkpoint ops marking the inputs of the blocks}}
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %t = gacc.tanh %w : tensor<4xf32>
  %l = gacc.reduce_sum %t axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> remat #gacc.remat<blocks>

// -----

// An override names save or recompute.
gacc.param @w : tensor<4xf32> = #gacc.init<normal, seed = 1>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %c = gacc.checkpoint %w : tensor<4xf32>
  // expected-error@+1 {{'gacc.tanh' op attribute 'gacc.remat' must be "save" or "recompute"}}
  %t = gacc.tanh %c {gacc.remat = "always"} : tensor<4xf32>
  %l = gacc.reduce_sum %t axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> remat #gacc.remat<sqrt>

// -----

// A budget (alone, gacc-remat reads it as bytes of kept activations) that
// no schedule meets names the least: the tanh the backward reads and the
// loss, 20 bytes.
gacc.param @w : tensor<4xf32> = #gacc.init<normal, seed = 1>
// expected-error@+1 {{remat budget: no schedule keeps the activations the backward reads within 8 bytes; the least any needs is 20 bytes}}
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %t = gacc.tanh %w : tensor<4xf32>
  %l = gacc.reduce_sum %t axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @s model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> remat #gacc.remat<budget, budget = 8>
