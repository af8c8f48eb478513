// RUN: gacc-opt %s -split-input-file --gacc-cuda-host-memory-to-kernels -verify-diagnostics | FileCheck %s

// Scalar code on memory between two kernels (a loss sum's update, a loop
// without parallel dimensions) moves into one launch of one thread, after
// the first kernel and before the second; the value the second kernel uses
// passes through a scratch buffer, freed at the return. Views and
// allocations stay on the host.
// CHECK-LABEL: func.func @scalar_code
// CHECK-SAME: (%[[ARENA:.*]]: memref<?xi8>, %[[SCALE:.*]]: f32)
// CHECK: %[[SCRATCH:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[V:.*]][%{{.*}}] : memref<256xf32>
// CHECK: gpu.terminator
// CHECK: %[[SUM:.*]] = memref.view %[[ARENA]]
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK: memref.load %[[SUM]][]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK: memref.store %{{.*}}, %[[SUM]][]
// CHECK: %[[SCALED:.*]] = arith.mulf
// CHECK: memref.store %[[SCALED]], %[[SCRATCH]][]
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NEXT: %[[RELOADED:.*]] = memref.load %[[SCRATCH]][]
// CHECK: arith.mulf %{{.*}}, %[[RELOADED]]
// CHECK: memref.dealloc %[[SCRATCH]]
// CHECK-NEXT: return
func.func @scalar_code(%arena: memref<?xi8>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %v = memref.view %arena[%c0][] : memref<?xi8> to memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = arith.constant 1.0 : f32
    memref.store %x, %v[%tx] : memref<256xf32>
    gpu.terminator
  }
  %sum = memref.view %arena[%c1024][] : memref<?xi8> to memref<f32>
  %old = memref.load %sum[] : memref<f32>
  %total = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %old) -> f32 {
    %e = memref.load %v[%i] : memref<256xf32>
    %a = arith.addf %acc, %e : f32
    scf.yield %a : f32
  }
  memref.store %total, %sum[] : memref<f32>
  %scaled = arith.mulf %total, %scale : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %e = memref.load %v[%tx] : memref<256xf32>
    %m = arith.mulf %e, %scaled : f32
    memref.store %m, %v[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A loaded value decides the trip count of a loop that holds kernels: the
// host would need to read device memory.
func.func @host_reads_for_control(%n: memref<index>, %v: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{'memref.load' op reads or writes memory outside the step's kernels}}
  %count = memref.load %n[] : memref<index>
  scf.for %i = %c0 to %count step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %x = arith.constant 1.0 : f32
      memref.store %x, %v[%i] : memref<256xf32>
      gpu.terminator
    }
  }
  return
}

// -----

// A kernel reading a constant global of the host (an accumulator's zeros,
// through a view) gets the global and the view in its body: outlining then
// gives the kernel module its own copy, in device memory.
memref.global "private" constant @zeros : memref<4x8xf32> = dense<0.0>
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @kernel_reads_host_constants
// CHECK-NOT: memref.get_global
// CHECK: gpu.launch
// CHECK-DAG: %[[ZEROS:.*]] = memref.get_global @zeros
// CHECK-DAG: %[[ROW:.*]] = memref.subview %[[ZEROS]][1, 0] [1, 8] [1, 1]
// CHECK-DAG: %[[TABLE:.*]] = memref.get_global @table
// CHECK: memref.load %[[ROW]]
// CHECK: memref.load %[[TABLE]]
// CHECK: gpu.terminator
func.func @kernel_reads_host_constants(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zeros = memref.get_global @zeros : memref<4x8xf32>
  %row = memref.subview %zeros[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  %table = memref.get_global @table : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %z = memref.load %row[%tx] : memref<8xf32, strided<[1], offset: 8>>
    %t = memref.load %table[%c0] : memref<4xf32>
    %s = arith.addf %z, %t : f32
    memref.store %s, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}

// -----

// A view of a view of a global moves into the kernel that reads it with
// the global. A view of what a loop carries, even a global unchanged, stays
// on the host with the loop (which is not a view), as does a view of an
// allocation.
memref.global "private" constant @grid : memref<2x4xf32> = dense<1.0>
// CHECK-LABEL: func.func @views_of_globals
// CHECK: %[[GRID:.*]] = memref.get_global @grid
// CHECK: %[[BUF:.*]] = memref.alloc()
// CHECK: %[[BUF_FLAT:.*]] = memref.collapse_shape %[[BUF]]
// CHECK: %[[CARRIED:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[GRID]])
// CHECK: %[[ROW:.*]] = memref.subview %[[CARRIED]][1, 0] [1, 4] [1, 1]
// CHECK-NOT: memref.collapse_shape
// CHECK: gpu.launch
// CHECK-DAG: %[[OWN:.*]] = memref.get_global @grid
// CHECK-DAG: %[[FLAT:.*]] = memref.collapse_shape %[[OWN]]
// CHECK-DAG: %[[CAST:.*]] = memref.cast %[[FLAT]]
// CHECK: memref.load %[[CAST]]
// CHECK: memref.load %[[BUF_FLAT]]
// CHECK: memref.load %[[ROW]]
// CHECK: gpu.terminator
func.func @views_of_globals(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %grid = memref.get_global @grid : memref<2x4xf32>
  %flat = memref.collapse_shape %grid [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %cast = memref.cast %flat : memref<8xf32> to memref<?xf32>
  %buf = memref.alloc() : memref<2x4xf32>
  %buf_flat = memref.collapse_shape %buf [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %carried = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %grid) -> (memref<2x4xf32>) {
    scf.yield %a : memref<2x4xf32>
  }
  %row = memref.subview %carried[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %g = memref.load %cast[%tx] : memref<?xf32>
    %b = memref.load %buf_flat[%tx] : memref<8xf32>
    %r = memref.load %row[%c0] : memref<4xf32, strided<[1], offset: 4>>
    %s = arith.addf %g, %b : f32
    %t = arith.addf %s, %r : f32
    memref.store %t, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
