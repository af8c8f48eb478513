// RUN: gacc-opt %s -split-input-file -gacc-cpu-collapse-nests | FileCheck %s

// An SGD update over a 3x3 kernel's weight: one loop over all elements,
// the learning rate read once before it.
// CHECK-LABEL: func.func private @update
// CHECK: %[[LR:.*]] = memref.load %arg2[] : memref<f32>
// CHECK-DAG: %[[G:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1, 2, 3]] : memref<8x4x3x3xf32> into memref<288xf32>
// CHECK-DAG: %[[W:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : memref<8x4x3x3xf32> into memref<288xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-SAME: ins(%[[G]], %arg2 : memref<288xf32>, memref<f32>) outs(%[[W]] : memref<288xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32, %[[OUT:.*]]: f32):
// CHECK: arith.mulf %[[IN]], %[[LR]] : f32
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar4 = affine_map<(d0, d1, d2, d3) -> ()>
func.func private @update(%w: memref<8x4x3x3xf32>, %g: memref<8x4x3x3xf32>, %lr: memref<f32>) {
  linalg.generic {indexing_maps = [#id4, #scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %lr : memref<8x4x3x3xf32>, memref<f32>) outs(%w : memref<8x4x3x3xf32>) {
  ^bb0(%a: f32, %l: f32, %o: f32):
    %0 = arith.mulf %a, %l : f32
    %1 = arith.subf %o, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Named ops are generalized first: a fill is one loop.
// CHECK-LABEL: func.func private @fill
// CHECK: %[[W:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1, 2, 3]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-SAME: ins(%arg0 : f32) outs(%[[W]] : memref<288xf32>)
func.func private @fill(%v: f32, %w: memref<8x4x3x3xf32>) {
  linalg.fill ins(%v : f32) outs(%w : memref<8x4x3x3xf32>)
  return
}

// -----

// A batch norm's per-channel operand, broadcast through constant indices
// of unit dimensions, is read through a view without them; H x W becomes
// one loop of 256, N and C stay apart (C is read alone).
// CHECK-LABEL: func.func private @per_channel
// CHECK-DAG: %[[S:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1, 2, 3]] : memref<1x64x1x1xf32> into memref<64xf32>
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<32x64x16x16xf32> into memref<32x64x256xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID3:.*]], #[[C:.*]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]] : memref<32x64x256xf32>, memref<64xf32>)
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
func.func private @per_channel(%x: memref<32x64x16x16xf32>, %s: memref<1x64x1x1xf32>, %y: memref<32x64x16x16xf32>) {
  linalg.generic {indexing_maps = [#id4, #channel, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<32x64x16x16xf32>, memref<1x64x1x1xf32>) outs(%y : memref<32x64x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.subf %a, %b : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Reductions merge with reductions only, and a strided view's gap keeps
// its loops apart: here rows of a 16-wide buffer read 8 at a time.
// CHECK-LABEL: func.func private @row_sums
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1], [2, 3]] : memref<4x2x3x8xf32> into memref<8x24xf32>
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-LABEL: func.func private @strided
// CHECK-NOT: memref.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func private @row_sums(%x: memref<4x2x3x8xf32>, %s: memref<4x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : memref<4x2x3x8xf32>) outs(%s : memref<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  }
  return
}
func.func private @strided(%x: memref<4x8xf32, strided<[16, 1]>>, %y: memref<4x8xf32>) {
  linalg.copy ins(%x : memref<4x8xf32, strided<[16, 1]>>) outs(%y : memref<4x8xf32>)
  return
}

// -----

// Loops whose index the body reads stay apart (an im2col-like gather);
// loops it does not read still merge. A 0-d operand the nest also writes
// is not hoisted.
// CHECK-LABEL: func.func private @indexed
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: linalg.index 1 : index
// CHECK-LABEL: func.func private @written_scalar
// CHECK-NOT: memref.load
// CHECK: linalg.generic
func.func private @indexed(%out: memref<2x3x8xf32>, %image: memref<10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%out : memref<2x3x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 2 : index
    %v = memref.load %image[%i] : memref<10xf32>
    linalg.yield %v : f32
  }
  return
}
func.func private @written_scalar(%x: memref<4x4xf32>, %acc: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x4xf32>) outs(%acc : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  }
  return
}
