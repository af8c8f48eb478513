// RUN: gacc-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --gacc-cuda-device-allocations | FileCheck %s

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

// -----

// The function's stack buffers (gacc-split-reductions' partial sums) live
// on the device from the function's start to each of its returns; private
// memory inside a kernel stays.
// CHECK-LABEL: func.func @partials
// CHECK: %[[P:.*]] = gpu.alloc () : memref<2048xf32>
// CHECK: gpu.launch
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: gpu.dealloc %[[P]] : memref<2048xf32>
// CHECK-NEXT: return
// CHECK: gpu.dealloc %[[P]] : memref<2048xf32>
// CHECK-NEXT: return
func.func @partials(%early: i1) {
  %partials = memref.alloca() : memref<2048xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %private = memref.alloca() : memref<4xf32>
    "test.use"(%partials, %private) : (memref<2048xf32>, memref<4xf32>) -> ()
    gpu.terminator
  }
  cf.cond_br %early, ^early, ^late
^early:
  return
^late:
  return
}

// -----

// Anywhere else a stack buffer of the host would be reallocated each time
// round: refused.
func.func @in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{on a GPU's host only at a function's start}}
    %buffer = memref.alloca() : memref<4xf32>
    "test.use"(%buffer) : (memref<4xf32>) -> ()
  }
  return
}
