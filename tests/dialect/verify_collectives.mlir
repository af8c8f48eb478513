// Verifier rules of the collectives: shard shapes, element types, ranks,
// the root.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'gacc.reduce_scatter' op dimension 0 of size 6 does not split evenly over 4 ranks}}
  %0 = gacc.reduce_scatter sum %x dim = 0 ranks = 4 : tensor<6x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'gacc.reduce_scatter' op expected the shard type 'tensor<2x4xf32>', got 'tensor<4x4xf32>'}}
  %0 = gacc.reduce_scatter sum %x dim = 0 ranks = 4 : tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'gacc.reduce_scatter' op dim 2 is out of range for rank 2}}
  %0 = gacc.reduce_scatter mean %x dim = 2 ranks = 4 : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.all_gather' op expected the shard type 'tensor<2x2xf32>', got 'tensor<2x4xf32>'}}
  %0 = gacc.all_gather %x dim = 1 ranks = 2 : tensor<2x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.all_gather' op result element type 'f16' differs from the operand's ('f32')}}
  %0 = gacc.all_gather %x dim = 0 ranks = 2 : tensor<2x4xf32> -> tensor<4x4xf16>
  return
}

// -----

func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.all_reduce' op attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = gacc.all_reduce sum %x ranks = 0 : tensor<2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'gacc.collective_broadcast' op root 2 is not one of the 2 ranks}}
  %0 = gacc.collective_broadcast %x root = 2 ranks = 2 : tensor<2x4xf32>
  return
}
