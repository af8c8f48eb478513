// Verifier rules of gacc.param, gacc.input, gacc.load and gacc.constant.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'gacc.param' op initializer 'kaiming_uniform' needs at least 2 dimensions to compute fan-in and fan-out}}
gacc.param @b : tensor<8xf32> = #gacc.init<kaiming_uniform>

// -----
// expected-error @+1 {{'gacc.param' op initializer 'xavier_normal' needs at least 2 dimensions}}
gacc.param @b : tensor<f32> = #gacc.init<xavier_normal>

// -----
// expected-error @+1 {{'gacc.param' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
gacc.param @w : tensor<2x2xi32> = #gacc.init<zeros>

// -----
// expected-error @+1 {{'gacc.param' op attribute 'type' failed to satisfy constraint}}
gacc.param @w : tensor<?x2xf32> = #gacc.init<zeros>

// -----
func.func @f() {
  // expected-error @+1 {{'gacc.param' op expects parent op 'builtin.module'}}
  "gacc.param"() <{sym_name = "w", type = tensor<2xf32>, init = #gacc.init<zeros>}> : () -> ()
  return
}

// -----
// expected-error @+1 {{'gacc.input' op needs a batch dimension (rank at least 1)}}
gacc.input @x : tensor<f32> features

// -----
// expected-error @+1 {{'gacc.input' op 'features' input must have a float element type}}
gacc.input @x : tensor<4x3xi32> features

// -----
// expected-error @+1 {{'gacc.input' op 'labels' input must have an i32 or i64 element type}}
gacc.input @y : tensor<4xf32> labels

// -----
// expected-error @+1 {{'gacc.input' op 'tokens' input must have an i32 or i64 element type}}
gacc.input @t : tensor<4x8xi16> tokens

// -----
// expected-error @+1 {{'gacc.input' op 'mask' input must have an i1 or float element type}}
gacc.input @m : tensor<4x8xi32> mask

// -----
// expected-error @+1 {{'gacc.input' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor}}
gacc.input @x : tensor<?x3xf32> features

// -----
// The second error points at the token after the bad keyword: the end of
// this split.
// expected-error @+2 {{expected ::mlir::gacc::InputKind to be one of: features, labels, tokens, mask}}
// expected-error @+3 {{failed to parse Gacc_InputKindAttr parameter 'value'}}
gacc.input @x : tensor<4x3xf32> images

// -----
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'gacc.load' op 'missing' does not name a gacc.param or gacc.input}}
  %0 = gacc.load @missing : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
func.func @g() -> tensor<2xf32> {
  %c = gacc.constant dense<1.0> : tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'gacc.load' op 'g' does not name a gacc.param or gacc.input}}
  %0 = gacc.load @g : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
gacc.param @w : tensor<2x3xf32> = #gacc.init<zeros>
func.func @f() -> tensor<3x2xf32> {
  // expected-error @+1 {{'gacc.load' op result type 'tensor<3x2xf32>' differs from the declared type 'tensor<2x3xf32>'}}
  %0 = gacc.load @w : tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----
func.func @f() -> tensor<3xf32> {
  // expected-error @+1 {{'gacc.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "gacc.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
