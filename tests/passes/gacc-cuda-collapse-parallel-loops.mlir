// RUN: gacc-opt %s --gacc-cuda-collapse-parallel-loops --canonicalize | FileCheck %s

// A 64x10 loop nest becomes one loop over its 640 points; the loop inside
// (a reduction a thread runs) is left alone.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[C640:.*]] = arith.constant 640 : index
// CHECK: scf.parallel (%[[IJ:.*]]) = (%{{.*}}) to (%[[C640]])
// CHECK-DAG: arith.remsi %[[IJ]]
// CHECK-DAG: arith.divsi %[[IJ]]
// CHECK: scf.for
// CHECK-NOT: scf.parallel
func.func @row_max(%in: memref<64x10x4xf32>, %out: memref<64x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c10) step (%c1, %c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      %x = memref.load %in[%i, %j, %k] : memref<64x10x4xf32>
      %m = memref.load %out[%i, %j] : memref<64x10xf32>
      %y = arith.maximumf %x, %m : f32
      memref.store %y, %out[%i, %j] : memref<64x10xf32>
    }
  }
  return
}
