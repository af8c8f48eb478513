// RUN: gacc-opt %s -split-input-file --gacc-cuda-block-reductions --canonicalize | FileCheck %s

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Softmax's row maximum: a block of 256 threads per row; each thread takes
// the maximum of elements t, t + 256, ... from -inf, a tree of 8 rounds
// in workgroup memory halves the active threads, thread 0 folds the total
// into the output.
// CHECK-LABEL: func.func @row_max
// CHECK-SAME: (%[[X:.*]]: memref<1024x300xf32>, %[[M:.*]]: memref<1024xf32>)
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch blocks(%[[ROW:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c1024, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: threads(%[[T:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c256, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: workgroup(%[[P:[a-z0-9_]+]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[OWN:.*]] = scf.for %[[R:.*]] = %[[T]] to %c300 step %c256 iter_args(%[[ACC:.*]] = %[[NINF]])
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[R]]]
// CHECK: arith.maximumf %[[ACC]], %[[V]]
// CHECK: memref.store %[[OWN]], %[[P]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[ROUND:.*]] = %c0 to %c8 step %c1 {
// CHECK: %[[HALF:.*]] = arith.shrui %c128, %[[ROUND]]
// CHECK: arith.cmpi ult, %[[T]], %[[HALF]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi eq, %[[T]], %c0
// CHECK: memref.load %[[M]][%[[ROW]]]
// CHECK: memref.store %{{.*}}, %[[M]][%[[ROW]]]
func.func @row_max(%x: memref<1024x300xf32>, %m: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x300xf32>) outs(%m : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Ten classes per row: a loop in each row's thread is better.
// CHECK-LABEL: func.func @few_elements
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @few_elements(%x: memref<64x10xf32>, %m: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x10xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// The output is read by more than the combiner: not a plain reduction.
// CHECK-LABEL: func.func @output_read_twice
// CHECK-NOT: gpu.launch
func.func @output_read_twice(%x: memref<4x300xf32>, %m: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x300xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %o, %a : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}
