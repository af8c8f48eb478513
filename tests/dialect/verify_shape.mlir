// Verifier rules of matmul, broadcast, reductions, reshape, transpose, slice
// and concat.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'gacc.matmul' op operands must have rank at least 2, got 1 and 2}}
  %0 = gacc.matmul %a, %b : tensor<4xf32>, tensor<4x3xf32> -> tensor<3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x4xf32>, %b: tensor<4x3xf16>) {
  // expected-error @+1 {{'gacc.matmul' op operand element types differ: 'f32' vs 'f16'}}
  %0 = gacc.matmul %a, %b : tensor<2x4xf32>, tensor<4x3xf16> -> tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{'gacc.matmul' op contracting dimensions differ: 4 vs 5}}
  %0 = gacc.matmul %a, %b : tensor<2x4xf32>, tensor<5x3xf32> -> tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'gacc.matmul' op contracting dimensions differ: 4 vs 3}}
  %0 = gacc.matmul %a, %b transpose_rhs : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  return
}

// -----
func.func @f(%a: tensor<3x2x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'gacc.matmul' op batch dimensions are not broadcastable}}
  %0 = gacc.matmul %a, %b : tensor<3x2x4xf32>, tensor<2x4x5xf32> -> tensor<3x2x5xf32>
  return
}

// -----
func.func @f(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'gacc.matmul' op result type 'tensor<2x4xf32>' differs from the expected 'tensor<2x3xf32>'}}
  %0 = gacc.matmul %a, %b : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  return
}

// -----
func.func @f(%a: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.broadcast' op cannot broadcast 'tensor<3xf32>' to 'tensor<2x4xf32>'}}
  %0 = gacc.broadcast %a : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.broadcast' op cannot broadcast 'tensor<2x3xf32>' to 'tensor<3xf32>'}}
  %0 = gacc.broadcast %a : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----
func.func @f(%a: tensor<3xf32>) {
  // expected-error @+1 {{'gacc.broadcast' op element type must not change}}
  %0 = gacc.broadcast %a : tensor<3xf32> -> tensor<2x3xf16>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reduce_sum' op expects at least one axis}}
  %0 = gacc.reduce_sum %a axes = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reduce_mean' op axis 2 is out of range for rank 2}}
  %0 = gacc.reduce_mean %a axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reduce_max' op axis -1 is out of range for rank 2}}
  %0 = gacc.reduce_max %a axes = [-1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reduce_sum' op axes must be strictly increasing}}
  %0 = gacc.reduce_sum %a axes = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reduce_sum' op result type 'tensor<3xf32>' differs from the expected 'tensor<2xf32>'}}
  %0 = gacc.reduce_sum %a axes = [1] : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reshape' op element count changes from 6 to 8}}
  %0 = gacc.reshape %a : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.reshape' op element type must not change}}
  %0 = gacc.reshape %a : tensor<2x3xf32> -> tensor<6xf64>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.transpose' op permutation has 3 entries for rank 2}}
  %0 = gacc.transpose %a perm = [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.transpose' op permutation must list each dimension exactly once}}
  %0 = gacc.transpose %a perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.transpose' op result type 'tensor<2x3xf32>' differs from the expected 'tensor<3x2xf32>'}}
  %0 = gacc.transpose %a perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.slice' op expects one offset and one size per dimension (rank 2)}}
  %0 = gacc.slice %a offsets = [0] sizes = [1] : tensor<2x3xf32> -> tensor<1xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.slice' op slice [2, 4) of dimension 1 is out of bounds [0, 3)}}
  %0 = gacc.slice %a offsets = [0, 2] sizes = [2, 2] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.slice' op slice [0, 0) of dimension 0 is out of bounds [0, 2)}}
  %0 = gacc.slice %a offsets = [0, 0] sizes = [0, 3] : tensor<2x3xf32> -> tensor<0x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.slice' op result type 'tensor<1x3xf32>' differs from the expected 'tensor<1x2xf32>'}}
  %0 = gacc.slice %a offsets = [1, 1] sizes = [1, 2] : tensor<2x3xf32> -> tensor<1x3xf32>
  return
}

// -----
func.func @f() {
  // expected-error @+1 {{'gacc.concat' op expects at least one input}}
  %0 = "gacc.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.concat' op axis 2 is out of range for rank 2}}
  %0 = gacc.concat %a, %a axis = 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'gacc.concat' op inputs must share rank and element type}}
  %0 = gacc.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<2x3xf16> -> tensor<2x6xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{'gacc.concat' op inputs differ in dimension 0, which is not the concatenation axis}}
  %0 = gacc.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x6xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.concat' op result type 'tensor<2x5xf32>' differs from the expected 'tensor<2x6xf32>'}}
  %0 = gacc.concat %a, %a axis = 1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x5xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.pad' op expects one low and one high padding per dimension (rank 2)}}
  %0 = gacc.pad %a low = [1] high = [1] : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.pad' op padding must be non-negative}}
  %0 = gacc.pad %a low = [-1, 0] high = [0, 0] : tensor<2x3xf32> -> tensor<1x3xf32>
  return
}

// -----
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'gacc.pad' op result type 'tensor<2x3xf32>' differs from the expected 'tensor<3x3xf32>'}}
  %0 = gacc.pad %a low = [1, 0] high = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
