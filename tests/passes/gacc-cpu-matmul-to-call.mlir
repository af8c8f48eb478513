// RUN: gacc-opt %s -gacc-cpu-matmul-to-call | FileCheck %s

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK: func.func private @gacc_cpu_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32)
// CHECK-LABEL: func.func @marked
func.func @marked(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  // CHECK-DAG: %[[A:.*]] = memref.cast %arg0 : memref<4x3xf32> to memref<*xf32>
  // CHECK-DAG: %[[B:.*]] = memref.cast %arg1 : memref<5x3xf32> to memref<*xf32>
  // CHECK-DAG: %[[C:.*]] = memref.cast %arg2 : memref<4x5xf32> to memref<*xf32>
  // CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%[[A]], %[[B]], %[[C]], %[[NO]], %[[YES]])
  // CHECK-NOT: linalg.generic
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Other element types keep their loops.
// CHECK-LABEL: func.func @half
func.func @half(%a: memref<4x3xf16>, %b: memref<5x3xf16>, %c: memref<4x5xf16>) {
  // CHECK: linalg.generic
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf16>, memref<5x3xf16>) outs(%c : memref<4x5xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  return
}

// A reduction that is not a matmul body stays a loop.
// CHECK-LABEL: func.func @not_a_product
func.func @not_a_product(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  // CHECK: linalg.generic
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
