// Verifier rules of frozen parameters, gacc.assign and gacc.batch_norm.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @f(%v: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.assign' op 'w' is a trainable gacc.param: only a frozen one is assigned (the optimizer updates the others)}}
  gacc.assign @w, %v : tensor<3xf32>
  return
}

// -----
gacc.input @x : tensor<3xf32> features
func.func @f(%v: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.assign' op 'x' does not name a gacc.param}}
  gacc.assign @x, %v : tensor<3xf32>
  return
}

// -----
gacc.param @s : tensor<3xf32> = #gacc.init<zeros> frozen
func.func @f(%v: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.assign' op value type 'tensor<4xf32>' differs from the declared type 'tensor<3xf32>' of 's'}}
  gacc.assign @s, %v : tensor<4xf32>
  return
}

// -----
gacc.param @s : tensor<3xf32> = #gacc.init<zeros> frozen
func.func @f(%v: tensor<3xf32>) {
  gacc.assign @s, %v : tensor<3xf32>
  // expected-error @+1 {{'gacc.assign' op assigns 's' a second time in this function}}
  gacc.assign @s, %v : tensor<3xf32>
  return
}

// -----
gacc.param @s : tensor<3xf32> = #gacc.init<zeros> frozen
func.func @f(%v: tensor<3xf32>, %c: i1) {
  scf.if %c {
    // expected-error @+1 {{'gacc.assign' op expects parent op 'func.func'}}
    gacc.assign @s, %v : tensor<3xf32>
  }
  return
}

// -----
func.func @f(%x: tensor<8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'gacc.batch_norm' op input must have rank at least 2 (N x C x ...), got 1}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<8xf32>, tensor<8xf32>
  return
}

// -----
func.func @f(%x: tensor<8x4xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.batch_norm' op scale, bias and running statistics must be [C] = [4] (dimension 1 of the input), got 'tensor<3xf32>'}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<8x4xf32>, tensor<3xf32>
  return
}

// -----
func.func @f(%x: tensor<8x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.batch_norm' op momentum must be in [0, 1], got 1.5}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.5 epsilon = 1.0e-5 : tensor<8x4xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%x: tensor<8x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.batch_norm' op epsilon must be positive}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 0.0 : tensor<8x4xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%x: tensor<1x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'gacc.batch_norm' op needs more than 1 value per channel in training ('tensor<1x4xf32>'): the unbiased variance divides by n - 1}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<1x4xf32>, tensor<4xf32>
  return
}

// -----
func.func @f(%x: tensor<1x4xf32>, %w: tensor<4xf32>) -> tensor<1x4xf32> {
  // One example is fine in inference.
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 1.0e-5 inference : tensor<1x4xf32>, tensor<4xf32>
  return %y#0 : tensor<1x4xf32>
}

// -----
func.func @f(%x: tensor<8x4xf32>, %w: tensor<4xf16>) {
  // expected-error @+1 {{'gacc.batch_norm' op scale and input element types differ: 'f16' vs 'f32'}}
  %y:3 = gacc.batch_norm %x, %w, %w, %w, %w momentum = 1.0e-1 epsilon = 1.0e-5 : tensor<8x4xf32>, tensor<4xf16>
  return
}
