// RUN: gacc-opt %s --split-input-file --gacc-cpu-split-reductions | FileCheck %s
// RUN: gacc-opt %s --split-input-file --gacc-cpu-split-reductions=min-elements=10000000 | FileCheck %s --check-prefix=SMALL

// The sum of squares of a 512x4608 weight (the gradient norm's term): 64
// partial sums of 36864 elements each in row-major order (each in its own
// cache line of a stack buffer), a parallel loop, then their sum into what
// the output held.
// CHECK-DAG: #[[CHUNKS_MAP:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PARTIAL_MAP:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[SUM_MAP:.*]] = affine_map<(d0) -> (d0, 0)>
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: %[[W:.*]]: memref<512x4608xf32>, %[[S:.*]]: memref<f32>)
// CHECK: %[[PARTIAL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[W]] {{\[\[}}0, 1]] : memref<512x4608xf32> into memref<2359296xf32>
// CHECK: %[[CHUNKS:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [64, 36864] : memref<2359296xf32> into memref<64x36864xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[CHUNKS_MAP]], #[[PARTIAL_MAP]]], iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : memref<64x36864xf32>) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[SUM_MAP]], {{.*}}], iterator_types = ["reduction"]} ins(%[[PARTIAL]] : memref<64x16xf32>) outs(%[[S]] : memref<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[ADDED:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[ADDED]]
// SMALL-LABEL: func.func @sum_of_squares(
// SMALL-NOT: memref.alloca
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @sum_of_squares(%w: memref<512x4608xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %sum = arith.addf %sq, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A scalar input (a loss scale) is read as it was; 100000 = 2^5 · 5^5
// elements split into 50 chunks of 2000.
// CHECK-LABEL: func.func @scaled(
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [50, 2000] : memref<100000xf32> into memref<50x2000xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<50x2000xf32>, memref<f32>) outs(%{{.*}} : memref<50x16xf32>)
#id1 = affine_map<(d0) -> (d0)>
#none1 = affine_map<(d0) -> ()>
func.func @scaled(%g: memref<100000xf32>, %scale: memref<f32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id1, #none1, #none1], iterator_types = ["reduction"]}
      ins(%g, %scale : memref<100000xf32>, memref<f32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %y = arith.mulf %x, %k : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A contiguous view at an offset (a slot of an arena) is split as well; in
// a loop (the micro-batches), the stack buffer is the function's, made
// once, and cleared before each sum. f64 partial sums are 8 to a line.
// CHECK-LABEL: func.func @in_loop(
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x8xf64>
// CHECK: scf.for
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [64, 4096] : memref<262144xf64, strided<[1], offset: 262144>> into memref<64x4096xf64, strided<[4096, 1], offset: 262144>>
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
#id4 = affine_map<(d0) -> (d0)>
#none4 = affine_map<(d0) -> ()>
func.func @in_loop(%arena: memref<524288xf64>, %s: memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.subview %arena[262144] [262144] [1] : memref<524288xf64> to memref<262144xf64, strided<[1], offset: 262144>>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [#id4, #none4], iterator_types = ["reduction"]}
        ins(%v : memref<262144xf64, strided<[1], offset: 262144>>) outs(%s : memref<f64>) {
    ^bb0(%x: f64, %acc: f64):
      %sum = arith.addf %x, %acc : f64
      linalg.yield %sum : f64
    }
  }
  return
}

// -----

// Not split: a maximum, a sum into a row (a parallel loop already), a sum
// that reads its index, a count with no divisor up to 64 (a prime), a
// strided input, a body that reads the running sum twice, and a scalar
// input that is the output (read anew each iteration).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: memref.alloca
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#none2 = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0) -> (d0)>
#none3 = affine_map<(d0) -> ()>
func.func @kept(%w: memref<512x4608xf32>, %p: memref<100003xf32>,
                %v: memref<512x4608xf32, strided<[9216, 1]>>,
                %s: memref<f32>, %r: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%r : memref<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %y = arith.mulf %x, %fi : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id3, #none3], iterator_types = ["reduction"]}
      ins(%p : memref<100003xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%v : memref<512x4608xf32, strided<[9216, 1]>>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.mulf %x, %acc : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w, %s : memref<512x4608xf32>, memref<f32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %y = arith.mulf %x, %k : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}
