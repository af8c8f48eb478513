// RUN: gacc-opt %s --gacc-split-fills | FileCheck %s

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Two matmuls accumulate into the same zeros: each gets its own fill,
// right before it. The original stays for its other use.
// CHECK-LABEL: func.func @two_matmuls
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<2x2xf32>)
// CHECK: linalg.contract {{.*}} outs(%[[Z1]] : tensor<2x2xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<2x2xf32>)
// CHECK: linalg.contract {{.*}} outs(%[[Z2]] : tensor<2x2xf32>)
// CHECK: return {{.*}}, %[[Z]]
func.func @two_matmuls(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m1 = linalg.contract indexing_maps = [#a, #b, #c]
      ins(%x, %y : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m2 = linalg.contract indexing_maps = [#a, #b, #c]
      ins(%x, %y : tensor<2x3xf32>, tensor<3x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m1, %m2, %z : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// A fill with one use is left alone.
// CHECK-LABEL: func.func @one_use
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @one_use() -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %z : tensor<2xf32>
}

// An empty tensor that CSE shared between two writers: each writer gets its
// own, right before it, so that bufferization sees two unrelated buffers.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} outs(%[[E1]] : tensor<4xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.generic {{.*}} outs(%[[E2]] : tensor<4xf32>)
// CHECK: return %[[A]], %[[B]]
#id = affine_map<(d0) -> (d0)>
func.func @shared_empty(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
