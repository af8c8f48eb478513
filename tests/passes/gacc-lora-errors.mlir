// RUN: gacc-opt %s -split-input-file -gacc-lora="targets=.*" -verify-diagnostics
// RUN: not gacc-opt %s -split-input-file -gacc-lora="targets=nothing" 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: gacc-lora: no trainable matrix (gacc.param of rank 2) matches targets 'nothing'
// RUN: not gacc-opt %s -split-input-file -gacc-lora="targets=(" 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: gacc-lora: targets '(' is not a regular expression
// RUN: not gacc-opt %s -split-input-file -gacc-lora="targets=.* rank=0" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: gacc-lora: the rank must be positive, got 0
// RUN: not gacc-opt %s -split-input-file -gacc-lora="targets=.* dropout=1" 2>&1 | FileCheck %s --check-prefix=DROPOUT
// DROPOUT: error: gacc-lora: dropout must be in [0, 1), got 1
// RUN: not gacc-opt %s -split-input-file -gacc-lora 2>&1 | FileCheck %s --check-prefix=TARGETS
// TARGETS: error: gacc-lora: give targets, a regular expression over parameter names

// A matched matrix read otherwise than by a matmul (an embedding table).
gacc.param @wte : tensor<10x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @ids : tensor<2x3xi32> tokens
func.func @m() -> tensor<f32> {
  %ids = gacc.load @ids : tensor<2x3xi32>
  %w = gacc.load @wte : tensor<10x4xf32>
  // expected-error @+1 {{'gacc.embedding' op reads the LoRA target 'wte' otherwise than as the rhs of a gacc.matmul (without transpose_lhs), which gacc-lora cannot adapt}}
  %e = gacc.embedding %w, %ids : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %l = gacc.reduce_mean %e axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A matched matrix read in both layouts.
gacc.param @w : tensor<4x4xf32> = #gacc.init<normal, seed = 1>
gacc.input @x : tensor<2x4xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %w = gacc.load @w : tensor<4x4xf32>
  %a = gacc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{'gacc.matmul' op reads the LoRA target 'w' in both layouts, [out, in] and [in, out]}}
  %b = gacc.matmul %a, %w transpose_rhs : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = gacc.reduce_mean %b axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A matched matrix the model never reads.
// expected-error @+1 {{'gacc.param' op is a LoRA target that the model never reads}}
gacc.param @unused : tensor<4x4xf32> = #gacc.init<normal, seed = 1>
gacc.param @w : tensor<4xf32> = #gacc.init<normal, seed = 2>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %l = gacc.reduce_mean %w axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
