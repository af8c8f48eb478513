// RUN: gacc-opt %s --gacc-accumulate-in-place --split-input-file | FileCheck %s

#mm_a = affine_map<(d0, d1, d2) -> (d2, d0)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id1 = affine_map<(d0) -> (d0)>

// A weight gradient `acc + aᵀ·b` becomes a matmul into the accumulator; a
// bias gradient `acc + g` writes into the accumulator; the zero splat
// initializers become fills.
// CHECK-LABEL: func.func @accumulate
// CHECK-DAG: %[[W0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK-DAG: %[[B0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[W:.*]] = %[[W0]], %[[B:.*]] = %[[B0]])
// CHECK: %[[DW:.*]] = linalg.contract
// CHECK-SAME: outs(%[[W]] : tensor<4x3xf32>)
// CHECK: %[[DB:.*]] = linalg.generic
// CHECK-SAME: ins(%[[B]], %{{.*}} : tensor<3xf32>, tensor<3xf32>) outs(%[[B]] : tensor<3xf32>)
// CHECK: scf.yield %[[DW]], %[[DB]]
func.func @accumulate(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>, %g: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %w0 = arith.constant dense<0.0> : tensor<4x3xf32>
  %b0 = arith.constant dense<0.0> : tensor<3xf32>
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%w = %w0, %bias = %b0)
      -> (tensor<4x3xf32>, tensor<3xf32>) {
    %e = tensor.empty() : tensor<4x3xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %mm = linalg.contract indexing_maps = [#mm_a, #mm_b, #mm_c]
        ins(%a, %b : tensor<8x4xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    %sum = linalg.generic {indexing_maps = [#id2, #id2, #id2],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %mm : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    %eb = tensor.empty() : tensor<3xf32>
    %bsum = linalg.generic {indexing_maps = [#id1, #id1, #id1],
                            iterator_types = ["parallel"]}
        ins(%bias, %g : tensor<3xf32>, tensor<3xf32>) outs(%eb : tensor<3xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>
    scf.yield %sum, %bsum : tensor<4x3xf32>, tensor<3xf32>
  }
  return %r#0, %r#1 : tensor<4x3xf32>, tensor<3xf32>
}

// -----

// Not a sum of the accumulator: a matmul whose initial value is not zero,
// and an update that reads the accumulator transposed, stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<3x3xf32>)
// CHECK-NOT: outs(%arg
// CHECK: scf.yield %[[SUM]]
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @untouched(%g: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %w0 = arith.constant dense<0.0> : tensor<3x3xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%w = %w0) -> tensor<3x3xf32> {
    %e = tensor.empty() : tensor<3x3xf32>
    %sum = linalg.generic {indexing_maps = [#t, #id, #id],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %g : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<3x3xf32>
    scf.yield %sum : tensor<3x3xf32>
  }
  return %r : tensor<3x3xf32>
}

// -----

// A contraction that starts from ones is not a sum's term alone: the sum
// stays.
// CHECK-LABEL: func.func @ones
// CHECK: linalg.contract
// CHECK-NOT: outs(%arg
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: scf.yield %[[SUM]]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @ones(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  %w0 = arith.constant dense<0.0> : tensor<2x2xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%w = %w0) -> tensor<2x2xf32> {
    %e = tensor.empty() : tensor<2x2xf32>
    %f = linalg.fill ins(%one : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %mm = linalg.contract indexing_maps = [#a, #b, #c]
        ins(%x, %y : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id, #id],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %mm : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<2x2xf32>
    scf.yield %sum : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}
