// RUN: gacc-opt %s -convert-gacc-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

// Broadcasting lives in the indexing maps: the [3] operand reads d1, the
// stretched [1, 3] one reads (0, d1).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add
func.func @add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK: arith.addf
  %y = gacc.add %a, %b : tensor<2x3xf32>, tensor<3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A transposed, batch-broadcast matmul is one named contraction: its maps
// do the transpose and the broadcast, and it starts from zeros.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>) -> tensor<2x3x5xf32> {
  // CHECK: %[[Z:.*]] = linalg.fill
  // CHECK: linalg.contract indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%arg0, %arg1 : tensor<2x3x4xf32>, tensor<5x4xf32>) outs(%[[Z]] : tensor<2x3x5xf32>)
  // CHECK-NOT: linalg.generic
  %y = gacc.matmul %x, %w transpose_rhs : tensor<2x3x4xf32>, tensor<5x4xf32> -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A stretched batch dimension of size 1 reads no loop (the maps of
// linalg.contract are projected permutations): it is collapsed away, and
// the lhs reads batch loop d0 only, the rhs d1 only.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @stretched
func.func @stretched(%q: tensor<2x1x8x4xf32>, %k: tensor<3x4x8xf32>) -> tensor<2x3x8x8xf32> {
  // CHECK: %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : tensor<2x1x8x4xf32> into tensor<2x8x4xf32>
  // CHECK: linalg.contract indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[Q]], %arg1 : tensor<2x8x4xf32>, tensor<3x4x8xf32>)
  %y = gacc.matmul %q, %k : tensor<2x1x8x4xf32>, tensor<3x4x8xf32> -> tensor<2x3x8x8xf32>
  return %y : tensor<2x3x8x8xf32>
}

// -----

// bf16 operands accumulate in f32 (the contraction widens them); the
// result is rounded once.
// CHECK-LABEL: func.func @bf16
func.func @bf16(%x: tensor<8x4xbf16>, %w: tensor<8x2xbf16>) -> tensor<4x2xbf16> {
  // CHECK: %[[C:.*]] = linalg.contract {{.*}} ins(%arg0, %arg1 : tensor<8x4xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>)
  // CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<4x2xf32>) outs(%{{.*}} : tensor<4x2xbf16>)
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  %y = gacc.matmul %x, %w transpose_lhs : tensor<8x4xbf16>, tensor<8x2xbf16> -> tensor<4x2xbf16>
  return %y : tensor<4x2xbf16>
}

// -----

// The dynamic map's codes: the bucket of the key that orders floats as
// integers gives the last map value at most x after two comparisons, then
// the nearer of it and the next, all without branches.
// CHECK-LABEL: func.func @quantize_dynamic
func.func @quantize_dynamic(%x: tensor<16xf32>) -> tensor<16xf32> {
  // The signed map starts at -0.99297 (0xBF7E3333).
  // CHECK-DAG: %[[MAP:.*]] = arith.constant dense<"0x33337EBF{{.*}}"> : tensor<256xf32>
  // CHECK-DAG: %[[STARTS:.*]] = arith.constant dense<"0x{{.*}}"> : tensor<32768xi8>
  // CHECK: linalg.generic
  // CHECK: arith.bitcast %{{.*}} : f32 to i32
  // CHECK: arith.shrui
  // CHECK: tensor.extract %[[STARTS]]
  // CHECK-COUNT-2: arith.cmpf ole
  // CHECK: arith.cmpf olt
  // CHECK: arith.trunci %{{.*}} : i32 to i8
  // CHECK-NOT: scf.if
  %c = gacc.quantize_dynamic %x signed : tensor<16xf32> -> tensor<16xi8>
  // The unsigned map runs from 0 to 1 (0x3F800000).
  // CHECK: %[[UMAP:.*]] = arith.constant dense<"0x00000000{{.*}}0000803F"> : tensor<256xf32>
  // CHECK: linalg.generic
  // CHECK: arith.extui %{{.*}} : i8 to i32
  // CHECK: tensor.extract %[[UMAP]]
  %y = gacc.dequantize_dynamic %c : tensor<16xi8> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// Ids compare as signed integers (-100, an ignored target, is below 0).
// CHECK-LABEL: func.func @compare_ids
func.func @compare_ids(%ids: tensor<8xi32>, %zero: tensor<i32>) -> tensor<8xi1> {
  // CHECK: linalg.generic
  // CHECK: arith.cmpi sge
  %y = gacc.compare ge %ids, %zero : tensor<8xi32>, tensor<i32>
  return %y : tensor<8xi1>
}

// -----

// CHECK-LABEL: func.func @reduce_max
func.func @reduce_max(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: arith.constant 0xFF800000 : f32
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
  // CHECK: arith.maximumf
  %y = gacc.reduce_max %x axes = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// A bf16 sum (a bias gradient in a bf16 step) adds in f32 and rounds once;
// a bf16 maximum, exact in any type, stays bf16.
// CHECK-LABEL: func.func @reduce_sum_bf16
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<8x16x32xbf16>) outs(%[[ACC]] : tensor<32xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[ADDED:.*]] = arith.addf %[[WIDE]], %[[OUT]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x1x1xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NEXT: arith.maximumf %{{.*}} : bf16
func.func @reduce_sum_bf16(%x: tensor<8x16x32xbf16>) -> (tensor<32xbf16>, tensor<8x1x1xbf16>) {
  %s = gacc.reduce_sum %x axes = [0, 1] : tensor<8x16x32xbf16> -> tensor<32xbf16>
  %m = gacc.reduce_max %x axes = [1, 2] keepdims : tensor<8x16x32xbf16> -> tensor<8x1x1xbf16>
  return %s, %m : tensor<32xbf16>, tensor<8x1x1xbf16>
}

// -----

// A transpose is a generic reading the input through the permutation (so
// that fusion folds it away); a reshape is a collapse and/or an expansion
// (which fusion folds through), runs of dimensions of equal size, a unit
// dimension joining the run before it.
// CHECK-DAG: #[[PERM:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>, tensor<1x2xf32>, tensor<4x3xf32>) {
  // CHECK: linalg.generic {indexing_maps = [#[[PERM]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: linalg.yield %[[IN]]
  %t = gacc.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %r = gacc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  // CHECK: tensor.extract_slice %{{.*}}[1, 1] [1, 2] [1, 1]
  %s = gacc.slice %x offsets = [1, 1] sizes = [1, 2] : tensor<2x3xf32> -> tensor<1x2xf32>
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1, 0] [2, 3] [1, 1]
  %p = gacc.pad %x low = [1, 0] high = [1, 0] : tensor<2x3xf32> -> tensor<4x3xf32>
  return %t, %r, %s, %p : tensor<3x2xf32>, tensor<6xf32>, tensor<1x2xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @regroup
func.func @regroup(%x: tensor<4x6x5xf32>, %s: tensor<1x1xf32>) -> (tensor<4x1x2x3x5xf32>, tensor<8x3x5xf32>, tensor<f32>) {
  // Adding a unit dimension and splitting one: only an expansion.
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3], [4]] output_shape [4, 1, 2, 3, 5]
  %a = gacc.reshape %x : tensor<4x6x5xf32> -> tensor<4x1x2x3x5xf32>
  // Regrouping 4x6 as 8x3: a collapse, then an expansion.
  // CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x6x5xf32> into tensor<24x5xf32>
  // CHECK: tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [8, 3, 5]
  %b = gacc.reshape %x : tensor<4x6x5xf32> -> tensor<8x3x5xf32>
  // To rank 0 there is no grouping: tensor.reshape.
  // CHECK: tensor.reshape
  %c = gacc.reshape %s : tensor<1x1xf32> -> tensor<f32>
  return %a, %b, %c : tensor<4x1x2x3x5xf32>, tensor<8x3x5xf32>, tensor<f32>
}

// -----

// Embedding rows are read with clamped ids.
// CHECK-LABEL: func.func @embedding
func.func @embedding(%t: tensor<5x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  // CHECK: linalg.generic
  // CHECK: arith.index_cast
  // CHECK: arith.maxsi
  // CHECK: arith.minsi
  // CHECK: tensor.extract %arg0
  %y = gacc.embedding %t, %i : tensor<5x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Composite ops must be decomposed first.
func.func @composite(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{failed to legalize operation 'gacc.softmax'}}
  %y = gacc.softmax %x axis = 1 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Dropout hashes (seed, counter, row-major index) with splitmix64 and keeps
// the element when the top 24 bits clear rate * 2^24.
// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<2x3xf32>, %step: tensor<i64>) -> tensor<2x3xf32> {
  // CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<i64>)
  // CHECK: arith.constant -7046029254386353131 : i64
  // CHECK: arith.shrui
  // CHECK: arith.cmpi uge, %{{.*}}, %c4194304_i64
  // CHECK: arith.constant 1.33333337 : f32
  // CHECK: arith.select
  %y = gacc.dropout %x counter %step rate = 0.25 seed = 3 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// im2col pads the image once with the padding value (a fill and the image
// inserted), then reads each column element from the padded image, with no
// bounds to check, over loops [N, C, KH, KW, OH, OW] (no index divides)
// collapsed to the columns' shape; col2im sums, per pixel, the column
// elements that read it (a gather over the unrolled window, no scatter).
// CHECK-LABEL: func.func @im2col
// CHECK: %[[FILLED:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x6x6xf32>)
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %arg0 into %[[FILLED]][0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
// CHECK: %[[LOOPS:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x2x2x3x3xf32>)
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK-NOT: arith.select
// CHECK: tensor.extract %[[PADDED]]
// CHECK-NOT: arith.select
// CHECK: tensor.collapse_shape %[[LOOPS]] {{\[\[}}0], [1], [2, 3], [4, 5]] : tensor<1x2x2x2x3x3xf32> into tensor<1x2x4x9xf32>
func.func @im2col(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x9xf32> {
  %y = gacc.im2col %x kernel = [2, 2] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x4x9xf32>
  return %y : tensor<1x2x4x9xf32>
}
// CHECK-LABEL: func.func @col2im
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract %{{.*}} : tensor<1x2x4x9xf32>
func.func @col2im(%c: tensor<1x2x4x9xf32>) -> tensor<1x2x4x4xf32> {
  %y = gacc.col2im %c kernel = [2, 2] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<1x2x4x9xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
