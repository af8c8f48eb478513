// Verifier rules of softmax, log-softmax, layer norm, embedding, causal mask
// and the losses.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.softmax' op axis 2 is out of range for rank 2}}
  %0 = gacc.softmax %a axis = 2 : tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = gacc.log_softmax %a axis = -1 : tensor<2x3xf32>
  return
}

// -----
func.func @f(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.layer_norm' op scale and bias shape must equal the trailing dimensions of the input}}
  %0 = gacc.layer_norm %x, %g, %g : tensor<2x3x4xf32>, tensor<3xf32>
  return
}

// -----
func.func @f(%x: tensor<4xf32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.layer_norm' op scale and bias shape must equal the trailing dimensions of the input}}
  %0 = gacc.layer_norm %x, %g, %g : tensor<4xf32>, tensor<2x4xf32>
  return
}

// -----
func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{'gacc.layer_norm' op scale and input element types differ}}
  %0 = gacc.layer_norm %x, %g, %g : tensor<2x4xf32>, tensor<4xf16>
  return
}

// -----
func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.layer_norm' op epsilon must be positive}}
  %0 = gacc.layer_norm %x, %g, %g {epsilon = 0.0 : f64} : tensor<2x4xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.layer_norm' op failed to verify that all of {scale, bias} have same type}}
  %0 = "gacc.layer_norm"(%x, %g, %b) : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----
func.func @f(%t: tensor<10x4x2xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'gacc.embedding' op table must have rank 2, got 3}}
  %0 = gacc.embedding %t, %i : tensor<10x4x2xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return
}

// -----
func.func @f(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = gacc.embedding %t, %i : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  return
}

// -----
func.func @f(%t: tensor<10x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'gacc.embedding' op result type 'tensor<3x10xf32>' differs from the expected 'tensor<3x4xf32>'}}
  %0 = gacc.embedding %t, %i : tensor<10x4xf32>, tensor<3xi32> -> tensor<3x10xf32>
  return
}

// -----
func.func @f() {
  // expected-error @+1 {{'gacc.causal_mask' op needs rank at least 2 ([..., queries, keys])}}
  %0 = gacc.causal_mask : tensor<4xi1>
  return
}

// -----
func.func @f() {
  // expected-error @+1 {{'gacc.causal_mask' op result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = gacc.causal_mask : tensor<4x4xf32>
  return
}

// -----
func.func @f(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error @+1 {{logits need a class dimension}}
  %0 = gacc.cross_entropy mean %l, %t : tensor<f32>, tensor<i32>
  return
}

// -----
func.func @f(%l: tensor<4x10xf32>, %t: tensor<5xi32>) {
  // expected-error @+1 {{targets shape 'tensor<5xi32>' must be the logits shape without its class dimension 'tensor<4x10xf32>'}}
  %0 = gacc.cross_entropy mean %l, %t : tensor<4x10xf32>, tensor<5xi32>
  return
}

// -----
func.func @f(%l: tensor<4x10xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = gacc.cross_entropy mean %l, %t : tensor<4x10xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%l: tensor<4x10xf32>, %t: tensor<4xi32>) {
  // expected-error @+2 {{expected ::mlir::gacc::LossReduction to be one of: sum, mean, token_mean}}
  // expected-error @+1 {{failed to parse Gacc_LossReductionAttr parameter 'value'}}
  %0 = gacc.cross_entropy none %l, %t : tensor<4x10xf32>, tensor<4xi32>
  return
}

// -----
func.func @f(%a: tensor<4x1xf32>) {
  // expected-error @+1 {{'token_mean' applies only to cross_entropy}}
  %0 = gacc.mse_loss token_mean %a, %a : tensor<4x1xf32>
  return
}

// -----
func.func @f(%a: tensor<4x1xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.mse_loss' op failed to verify that all of {input, target} have same type}}
  %0 = "gacc.mse_loss"(%a, %b) <{reduction = #gacc<reduction mean>}> : (tensor<4x1xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----
func.func @f(%i: tensor<4xi32>) {
  // expected-error @+1 {{'gacc.one_hot' op result shape must be the ids shape plus a class dimension}}
  %0 = gacc.one_hot %i : tensor<4xi32> -> tensor<5x10xf32>
  return
}

// -----
func.func @f(%i: tensor<4xi32>) {
  // expected-error @+1 {{'gacc.one_hot' op result shape must be the ids shape plus a class dimension}}
  %0 = gacc.one_hot %i : tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

// A checkpoint is the identity on a float tensor.
func.func @f(%ids: tensor<2x3xi32>) {
  // expected-error @+1 {{'gacc.checkpoint' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2x3xi32>'}}
  %c = gacc.checkpoint %ids : tensor<2x3xi32>
  return
}

// -----
func.func @f(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x16xbf16>) {
  %o = tensor.empty() : tensor<2x4x64x32xbf16>
  %l = tensor.empty() : tensor<2x4x64xf32>
  // expected-error @+1 {{'gacc.attention' op takes keys and values [2, 4, S, 32] for queries 'tensor<2x4x64x32xbf16>'}}
  %r:2 = gacc.attention %q, %k, %k into %o, %l scale = 1.0
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>
      into tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
  return
}

// -----
func.func @f(%q: tensor<2x4x64x32xbf16>) {
  %o = tensor.empty() : tensor<2x4x64x32xbf16>
  %l = tensor.empty() : tensor<2x4x64xbf16>
  // expected-error @+1 {{'gacc.attention' op takes its per-query values as 'f32' [2, 4, 64]}}
  %r:2 = gacc.attention %q, %q, %q into %o, %l scale = 1.0
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>
      into tensor<2x4x64x32xbf16>, tensor<2x4x64xbf16>
      -> tensor<2x4x64x32xbf16>, tensor<2x4x64xbf16>
  return
}

// -----
func.func @f(%q: tensor<2x4x64x32xbf16>, %b: tensor<2x32xf32>) {
  %o = tensor.empty() : tensor<2x4x64x32xbf16>
  %l = tensor.empty() : tensor<2x4x64xf32>
  // expected-error @+1 {{'gacc.attention' op takes a key bias of 'f32' [2, 64]}}
  %r:2 = gacc.attention %q, %q, %q key_bias %b into %o, %l scale = 1.0
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>,
        tensor<2x32xf32> into tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
  return
}

// -----
func.func @f(%q: tensor<2x4x64x32xbf16>, %o: memref<2x4x64x32xbf16>) {
  %l = tensor.empty() : tensor<2x4x64xf32>
  // expected-error @+1 {{'gacc.attention' op takes static tensors or static memrefs, not both}}
  gacc.attention %q, %q, %q into %o, %l scale = 1.0
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>
      into memref<2x4x64x32xbf16>, tensor<2x4x64xf32>
  return
}

// -----
func.func @f(%q: tensor<2x4x64x32xbf16>, %r: tensor<2x4x64xf32>) {
  %e = tensor.empty() : tensor<2x4x64x32xf16>
  // expected-error @+1 {{'gacc.attention_grad' op writes 'tensor<2x4x64x32xbf16>' where it writes queries}}
  %g:3 = gacc.attention_grad %q, %q, %q, %q, %r, %r into %e, %q, %q scale = 1.0
      : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>,
        tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>, tensor<2x4x64xf32>
      into tensor<2x4x64x32xf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>
      -> tensor<2x4x64x32xf16>, tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16>
  return
}
