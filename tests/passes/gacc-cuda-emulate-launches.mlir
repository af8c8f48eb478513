// RUN: gacc-opt %s -split-input-file --gacc-cuda-emulate-launches -verify-diagnostics | FileCheck %s

// A block reduction: every thread loads into workgroup and private memory,
// a uniform loop halves the active threads with a barrier per round, thread
// 0 writes the block's sum. Each barrier ends a thread loop; the uniform
// loop runs once per block around its thread loop; workgroup memory is one
// buffer, private memory a row per thread; ids become loop indices, the
// blocks running last first.
// CHECK-LABEL: func.func @block_sum
// CHECK-SAME: (%[[IN:.*]]: memref<1024xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<256xf32>
// CHECK: %[[MINE:.*]] = memref.alloc(%{{.*}}) : memref<?x1xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[LAST:.*]] = arith.subi %[[C4]], %{{.*}}
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C4]]
// CHECK: %[[BX:.*]] = arith.subi %[[LAST]], %[[I]]
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

// -----

// A warp's mma.sync: each lane stores its fragments (bf16 pairs unpacked
// from their i32 registers) into workgroup memory, a row per thread; after
// a barrier it sums its 4 elements of D over the 16 k from its warp's
// fragments, into private memory; after another barrier the result is
// read back. All of it inside thread loops split at the two barriers.
// CHECK-LABEL: func.func @mma
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<32x8xbf16>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<32x4xbf16>
// CHECK-DAG: %[[C:.*]] = memref.alloc() : memref<32x4xf32>
// CHECK-DAG: %[[D:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: scf.parallel
// CHECK: llvm.bitcast %{{.*}} : i32 to vector<2xbf16>
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: llvm.insertvalue
// CHECK-NOT: nvvm.mma.sync
func.func @mma(%a: memref<32x4xi32>, %b: memref<32x2xi32>, %d: memref<32x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %a0 = memref.load %a[%tx, %c0] : memref<32x4xi32>
    %a1 = memref.load %a[%tx, %c1] : memref<32x4xi32>
    %a2 = memref.load %a[%tx, %c2] : memref<32x4xi32>
    %a3 = memref.load %a[%tx, %c3] : memref<32x4xi32>
    %b0 = memref.load %b[%tx, %c0] : memref<32x2xi32>
    %b1 = memref.load %b[%tx, %c1] : memref<32x2xi32>
    %r = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%zero, %zero, %zero, %zero]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
       shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d0, %d[%tx, %c0] : memref<32x4xf32>
    gpu.terminator
  }
  return
}

// -----

// Only the mma.sync TileMatmuls emits can be emulated.
func.func @other_mma(%a0: vector<2xf16>, %b0: vector<2xf16>, %c: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{'nvvm.mma.sync' op cannot be emulated (only m16n8k16, row-col, f16 or bf16 into f32)}}
    %r = nvvm.mma.sync A[%a0, %a0] B[%b0] C[%c, %c, %c, %c]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.terminator
  }
  return
}

// -----

// cp.async (what TileMatmuls' pipeline emits): each thread copies 8 halves
// of a row into workgroup memory, or zeros where it copies 0 elements (a
// row past the matrix), then waits and meets the block at the barrier. On
// the CPU the copy is made when issued, element by element, each element
// past the count a zero; the commit group and the wait go.
// CHECK-LABEL: func.func @async_copy
// CHECK: %[[TILE:.*]] = memref.alloc() : memref<4x8xf16>
// CHECK: scf.parallel
// CHECK: arith.select
// CHECK: %[[COUNT:.*]] = arith.select %{{.*}}, %c8, %c0
// CHECK: %[[IN:.*]] = arith.cmpi ult, %c0{{.*}}, %[[COUNT]] : index
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (f16) {
// CHECK: memref.load %{{.*}} : memref<3x8xf16>
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f16
// CHECK: memref.store %[[V]], %[[TILE]]
// CHECK-COUNT-7: memref.store %{{.*}}, %[[TILE]]
// CHECK-NOT: nvgpu.
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: memref.load %[[TILE]]
func.func @async_copy(%in: memref<3x8xf16>, %out: memref<4x8xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<4x8xf16, #gpu.address_space<workgroup>>) {
    %inside = arith.cmpi ult, %tx, %c3 : index
    %row = arith.select %inside, %tx, %c0 : index
    %count = arith.select %inside, %c8, %c0 : index
    %t = nvgpu.device_async_copy %in[%row, %c0], %tile[%tx, %c0], 8, %count {bypassL1}
        : memref<3x8xf16> to memref<4x8xf16, #gpu.address_space<workgroup>>
    %g = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %g {numGroups = 0 : i32}
    gpu.barrier
    %other = arith.subi %c3, %tx : index
    %v = memref.load %tile[%other, %c1] : memref<4x8xf16, #gpu.address_space<workgroup>>
    memref.store %v, %out[%tx, %c1] : memref<4x8xf16>
    gpu.terminator
  }
  return
}
