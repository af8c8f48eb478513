// RUN: gacc-opt %s --split-input-file --gacc-split-reductions="max-outputs=64 parallelism=64 partial-bytes=64 lane-bytes=64" | FileCheck %s

// lane-bytes (the CPU's 64): sums whose innermost reductions run over
// contiguous memory accumulate in 16 lanes of f32 (8 of f64), a parallel
// innermost loop LLVM vectorizes, then each output's lanes are added in
// order.

// The gradient norm's sum of squares of a 3x3 convolution's weight: split
// into 64 partial sums of 36864 elements (8 x 512 x 3 x 3, collapsed), each
// summed in 16 lanes; the lanes into the partial sums, those into the total.
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LANES:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[LINE:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: %[[W:.*]]: memref<512x512x3x3xf32>, %[[S:.*]]: memref<f32>)
// CHECK-DAG: %[[BUFFER:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-DAG: %[[PARTIAL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK: %[[CHUNKS:.*]] = memref.expand_shape %[[W]] {{\[\[}}0, 1], [2], [3], [4]] output_shape [64, 8, 512, 3, 3]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[CHUNKS]] {{\[\[}}0], [1, 2, 3, 4]] : memref<64x8x512x3x3xf32> into memref<64x36864xf32>
// CHECK: %[[IN_LANES:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2]] output_shape [64, 2304, 16] : memref<64x36864xf32> into memref<64x2304x16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[BUFFER]] : memref<64x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #[[LANES]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[IN_LANES]] : memref<64x2304x16xf32>) outs(%[[BUFFER]] : memref<64x16xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {indexing_maps = [#[[ALL]], #[[LINE]]], iterator_types = ["parallel", "reduction"]} ins(%[[BUFFER]] : memref<64x16xf32>) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PARTIAL]] : memref<64x16xf32>) outs(%[[S]] : memref<f32>)
func.func @sum_of_squares(%w: memref<512x512x3x3xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%w : memref<512x512x3x3xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.mulf %in, %in : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// Batch norm's statistics: 64 channels (not split: as many outputs as
// partial sums wanted), each over N x H x W; H x W (256, contiguous) in 16
// lanes inside the loop over N, a broadcast input (the mean) left as it is.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[MEAN:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-DAG: #[[BY_CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (0, d0, 0, 0)>
// CHECK-LABEL: func.func @channel_variance(
// CHECK-SAME: %[[X_ARG:.*]]: memref<32x64x16x16xf32>, %[[M_ARG:.*]]: memref<1x64x1x1xf32>, %[[V:.*]]: memref<1x64x1x1xf32>)
// CHECK: %[[BUFFER:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[X_ARG]] {{\[\[}}0], [1], [2, 3]]
// CHECK: %[[ROWS:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1], [2, 3]] output_shape [32, 64, 16, 16]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[MEAN]], #[[BY_CHANNEL]]], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%[[ROWS]], %[[M_ARG]] : memref<32x64x16x16xf32>, memref<1x64x1x1xf32>) outs(%[[BUFFER]] : memref<64x16xf32>)
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}}#[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%[[BUFFER]] : memref<64x16xf32>) outs(%[[V]] : memref<1x64x1x1xf32>)
func.func @channel_variance(%x: memref<32x64x16x16xf32>, %m: memref<1x64x1x1xf32>, %v: memref<1x64x1x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x, %m : memref<32x64x16x16xf32>, memref<1x64x1x1xf32>) outs(%v : memref<1x64x1x1xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %d = arith.subf %in, %mean : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %sq, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left as they are: a sum over a transposed (not contiguous) input, one
// whose body reads an inner loop's index, and one of fewer than two
// multiples of 16 (2 x 2 positions).
// CHECK-LABEL: func.func @not_in_lanes(
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: memref.alloca
func.func @not_in_lanes(%t: memref<64x256xf32, strided<[1, 64]>>, %a: memref<64x256xf32>, %b: memref<32x64x2x2xf32>, %o1: memref<64xf32>, %o2: memref<64xf32>, %o3: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t : memref<64x256xf32, strided<[1, 64]>>) outs(%o1 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<64x256xf32>) outs(%o2 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %p = arith.mulf %in, %f : f32
    %r = arith.addf %p, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%b : memref<32x64x2x2xf32>) outs(%o3 : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}
