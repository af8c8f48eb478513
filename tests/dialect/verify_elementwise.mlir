// Verifier rules of the elementwise ops: broadcasting, element types, select
// and dropout.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{operand shapes are not broadcastable: 'tensor<4x3xf32>' and 'tensor<5xf32>'}}
  %0 = gacc.add %a, %b : tensor<4x3xf32>, tensor<5xf32>
  return
}

// -----
func.func @f(%a: tensor<2x4x3xf32>, %b: tensor<3x1x3xf32>) {
  // expected-error @+1 {{operand shapes are not broadcastable}}
  %0 = gacc.mul %a, %b : tensor<2x4x3xf32>, tensor<3x1x3xf32>
  return
}

// -----
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'f16'}}
  %0 = gacc.sub %a, %b : tensor<4xf32>, tensor<4xf16>
  return
}

// -----
func.func @f(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'gacc.div' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = gacc.div %a, %b : tensor<4xi32>, tensor<4xi32>
  return
}

// -----
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'gacc.add' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'gacc.add' op failed to infer returned types}}
  %0 = "gacc.add"(%a, %b) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.exp' op requires the same type for all operands and results}}
  %0 = "gacc.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----
func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{'gacc.relu' op operand #0 must be statically shaped tensor}}
  %0 = gacc.relu %a : tensor<?xf32>
  return
}

// -----
func.func @f(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = gacc.select %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%c: tensor<3x3xi1>, %a: tensor<2x4x4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{operand shapes are not broadcastable: 'tensor<3x3xi1>' and 'tensor<2x4x4xf32>'}}
  %0 = gacc.select %c, %a, %b : tensor<3x3xi1>, tensor<2x4x4xf32>, tensor<f32>
  return
}

// -----
func.func @f(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<f64>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'f64'}}
  %0 = gacc.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f64>
  return
}

// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.dropout' op rate must be in [0, 1), got 1.0}}
  %0 = gacc.dropout %a rate = 1.0 seed = 1 : tensor<4xf32>
  return
}

// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.dropout' op rate must be in [0, 1), got -0.1}}
  %0 = gacc.dropout %a rate = -0.1 seed = 1 : tensor<4xf32>
  return
}

// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::gacc::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Gacc_GeluApproximationAttr parameter 'value'}}
  %0 = gacc.gelu %a approximation = sigmoid : tensor<4xf32>
  return
}

// -----
func.func @f(%a: tensor<4x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{operand shapes are not broadcastable}}
  %0 = gacc.compare lt %a, %b : tensor<4x3xf32>, tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{operand element types differ: 'i32' vs 'i64'}}
  %0 = gacc.compare eq %a, %b : tensor<4xi32>, tensor<4xi64>
  return
}

// -----
func.func @f(%a: tensor<4xi1>) {
  // expected-error @+1 {{gacc.compare compares floats or integer ids, not masks: 'tensor<4xi1>'}}
  %0 = gacc.compare eq %a, %a : tensor<4xi1>, tensor<4xi1>
  return
}

// -----
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::gacc::ComparePredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Gacc_ComparePredicateAttr parameter 'value'}}
  %0 = gacc.compare approx %a, %a : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'gacc.cast' op requires the same shape for all operands and results}}
  %0 = gacc.cast %a : tensor<4x3xf32> to tensor<3x4xf16>
  return
}

// -----

func.func @f(%a: tensor<4x3xi32>) {
  // expected-error @+1 {{'gacc.cast' op operand #0 must be statically shaped tensor of}}
  %0 = gacc.cast %a : tensor<4x3xi32> to tensor<4x3xf16>
  return
}
