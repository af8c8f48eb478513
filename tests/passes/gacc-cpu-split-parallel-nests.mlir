// RUN: gacc-opt %s --split-input-file --gacc-cpu-split-parallel-nests | FileCheck %s
// RUN: gacc-opt %s --split-input-file --gacc-cpu-split-parallel-nests=min-chunk-work=1000000 | FileCheck %s --check-prefix=LARGE

// An elementwise nest over 1024x128 computes rows [lo, hi) of subviews; the
// row index it reads counts from lo; chunks of 32768 iterations are 256 rows.
// Its call passes the whole range.
// CHECK-LABEL: func.func private @elementwise(
// CHECK-SAME: %[[A:.*]]: memref<1024x128xf32>, %[[B:.*]]: memref<1024x128xf32>, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK-SAME: gacc.parallel_grain = 256 : i64
// CHECK: %[[N:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK: %[[SA:.*]] = memref.subview %[[A]][%[[LO]], 0] [%[[N]], 128] [1, 1]
// CHECK: %[[SB:.*]] = memref.subview %[[B]][%[[LO]], 0] [%[[N]], 128] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[SA]] : {{.*}}) outs(%[[SB]] : {{.*}})
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[ROW:.*]] = arith.addi %[[I]], %[[LO]]
// CHECK: arith.index_cast %[[ROW]]
// CHECK-LABEL: func.func @step(
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: call @elementwise(%{{.*}}, %{{.*}}, %[[C0]], %[[C1024]])
// LARGE-LABEL: func.func private @elementwise(
// LARGE-NOT: gacc.parallel_grain
// LARGE-LABEL: func.func @step(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @elementwise(%a: memref<1024x128xf32>, %b: memref<1024x128xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1024x128xf32>) outs(%b : memref<1024x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %r = arith.addf %x, %f : f32
    linalg.yield %r : f32
  }
  return
}
func.func @step(%a: memref<1024x128xf32>, %b: memref<1024x128xf32>) {
  call @elementwise(%a, %b) : (memref<1024x128xf32>, memref<1024x128xf32>) -> ()
  return
}

// -----

// A sum over rows (loop 0 reduces) is split by columns: each column's sum
// keeps its order. The transposed input reads loop 1 as its dimension 0.
// CHECK-LABEL: func.func private @column_sums(
// CHECK-SAME: %[[IN:.*]]: memref<512x256xf32>, %[[T:.*]]: memref<256x512xf32>, %[[OUT:.*]]: memref<256xf32>, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK-SAME: gacc.parallel_grain = 64 : i64
// CHECK: memref.subview %[[IN]][0, %[[LO]]] [512, %{{.*}}] [1, 1]
// CHECK: memref.subview %[[T]][%[[LO]], 0] [%{{.*}}, 512] [1, 1]
// CHECK: memref.subview %[[OUT]][%[[LO]]] [%{{.*}}] [1]
func.func private @column_sums(%in: memref<512x256xf32>, %t: memref<256x512xf32>, %out: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in, %t : memref<512x256xf32>, memref<256x512xf32>) outs(%out : memref<256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Nests too small for two chunks, and loops read through an expression
// (a window: loop 0 in d0 + d1) or reduced, are left as they are; loop 1
// is then the one split.
// CHECK-LABEL: func.func private @small(
// CHECK-NOT: gacc.parallel_grain
// CHECK-LABEL: func.func private @window(
// CHECK-SAME: %[[IN:.*]]: memref<1100x512xf32>, %[[W:.*]]: memref<77xf32>, %[[OUT:.*]]: memref<1024x512xf32>, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK-SAME: gacc.parallel_grain = 1 : i64
// CHECK: memref.subview %[[IN]][0, %[[LO]]]
// CHECK-NOT: memref.subview %[[W]]
// CHECK: memref.subview %[[OUT]][0, %[[LO]]]
func.func private @small(%a: memref<64x64xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%a : memref<64x64xf32>)
  return
}
func.func private @window(%in: memref<1100x512xf32>, %w: memref<77xf32>, %out: memref<1024x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 + d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in, %w : memref<1100x512xf32>, memref<77xf32>) outs(%out : memref<1024x512xf32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %p = arith.mulf %x, %k : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
