// RUN: gacc-opt %s --gacc-cuda-device-allocations | FileCheck %s

// The host's allocations (a scratch value, a buffer the plan left to the
// heap) become device memory, freed as device memory.
// CHECK-LABEL: func.func @host
// CHECK: %[[S:.*]] = gpu.alloc () : memref<f32>
// CHECK: %[[B:.*]] = gpu.alloc (%{{.*}}) : memref<?x4xf32>
// CHECK: gpu.dealloc %[[B]] : memref<?x4xf32>
// CHECK: gpu.dealloc %[[S]] : memref<f32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @host(%n: index) {
  %scratch = memref.alloc() : memref<f32>
  %buffer = memref.alloc(%n) : memref<?x4xf32>
  memref.dealloc %buffer : memref<?x4xf32>
  memref.dealloc %scratch : memref<f32>
  return
}
