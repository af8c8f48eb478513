// RUN: gacc-opt %s -split-input-file --gacc-cuda-emulate-launches -verify-diagnostics | FileCheck %s

// A block reduction: every thread loads into workgroup and private memory,
// a uniform loop halves the active threads with a barrier per round, thread
// 0 writes the block's sum. Each barrier ends a thread loop; the uniform
// loop runs once per block around its thread loop; workgroup memory is one
// buffer, private memory a row per thread; ids become loop indices.
// CHECK-LABEL: func.func @block_sum
// CHECK-SAME: (%[[IN:.*]]: memref<1024xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<256xf32>
// CHECK: %[[MINE:.*]] = memref.alloc(%{{.*}}) : memref<?x1xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %[[C4]]
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[TX:.*]]) = {{.*}} to (%{{.*}}, %{{.*}}, %[[C256]])
// CHECK: %[[ROW:.*]] = memref.subview %[[MINE]][%{{.*}}, 0] [1, 1] [1, 1]
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[X:.*]] = memref.load %[[IN]][%[[I]]]
// CHECK: memref.store %[[X]], %[[ROW]]
// CHECK: memref.store %[[X]], %[[PARTIAL]][%[[TX]]]
// CHECK: scf.reduce
// CHECK: scf.for %[[ROUND:.*]] =
// CHECK-NEXT: %{{.*}} = arith.shrui %[[C128:.*]], %[[ROUND]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[TX2:.*]]) =
// CHECK: arith.cmpi ult, %[[TX2]]
// CHECK: memref.load %[[PARTIAL]]
// CHECK: scf.reduce
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[TX3:.*]]) =
// The private value survives the barriers in its row.
// CHECK: %[[ROW3:.*]] = memref.subview %[[MINE]]
// CHECK: arith.cmpi eq, %[[TX3]]
// CHECK: memref.load %[[ROW3]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[BX]]]
// CHECK: memref.dealloc %[[PARTIAL]]
// CHECK: memref.dealloc %[[MINE]]
// CHECK-NOT: gpu.
func.func @block_sum(%in: memref<1024xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%partial : memref<256xf32, #gpu.address_space<workgroup>>)
             private(%mine : memref<1xf32, #gpu.address_space<private>>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %bdim = gpu.block_dim x
    %base = arith.muli %bx, %bdim : index
    %i = arith.addi %base, %tx : index
    %x = memref.load %in[%i] : memref<1024xf32>
    memref.store %x, %mine[%c0] : memref<1xf32, #gpu.address_space<private>>
    memref.store %x, %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.for %round = %c0 to %c8 step %c1 {
      %half = arith.shrui %c128, %round : index
      %active = arith.cmpi ult, %tx, %half : index
      scf.if %active {
        %j = arith.addi %tx, %half : index
        %a = memref.load %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %partial[%j] : memref<256xf32, #gpu.address_space<workgroup>>
        %s = arith.addf %a, %b : f32
        memref.store %s, %partial[%tx] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %total = memref.load %partial[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      %own = memref.load %mine[%c0] : memref<1xf32, #gpu.address_space<private>>
      %sum = arith.addf %total, %own : f32
      memref.store %sum, %out[%bx] : memref<4xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier under a condition on the thread: not every thread reaches it.
func.func @divergent_barrier(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %c128 = arith.constant 128 : index
    %low = arith.cmpi ult, %tx, %c128 : index
    // expected-error @below {{'scf.if' op holds a gpu.barrier but depends on the thread}}
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A loaded value is live across a barrier: it would need private memory.
func.func @value_across_barrier(%in: memref<256xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %in[%tx] : memref<256xf32>
    gpu.barrier
    // expected-error @below {{'memref.store' op uses a value computed before a gpu.barrier}}
    memref.store %x, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A loop with a barrier that carries a per-thread value.
func.func @carried_across_barrier(%out: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    // expected-error @below {{'scf.for' op holding a gpu.barrier cannot carry values}}
    %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
      gpu.barrier
      scf.yield %acc : f32
    }
    memref.store %sum, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
