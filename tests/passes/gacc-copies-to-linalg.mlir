// RUN: gacc-opt %s --gacc-copies-to-linalg | FileCheck %s

// A copy becomes linalg.copy, which the kernel mapping turns into a kernel.
// CHECK-LABEL: func.func @copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<10x256xf32>) outs(%{{.*}} : memref<10x256xf32>)
func.func @copy(%a: memref<10x256xf32>, %b: memref<10x256xf32>) {
  memref.copy %a, %b : memref<10x256xf32> to memref<10x256xf32>
  return
}
