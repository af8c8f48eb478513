// RUN: gacc-opt %s -split-input-file --gacc-cuda-tile-matmuls --canonicalize | FileCheck %s
// RUN: not gacc-opt %s -split-input-file --gacc-cuda-tile-matmuls=async-stages=1 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: gacc-cuda-tile-matmuls: async-stages must be 0 (no cp.async) or 2 to 8 (20480 bytes of shared memory each, 163 KB at most), not 1
// RUN: not gacc-opt %s -split-input-file --gacc-cuda-tile-matmuls="mma-depth=64 async-stages=5" 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: error: gacc-cuda-tile-matmuls: async-stages must be 0 (no cp.async) or 2 to 4 (36864 bytes of shared memory each, 163 KB at most), not 5
// RUN: gacc-opt %s -split-input-file --gacc-cuda-tile-matmuls="warps=8 mma-depth=64 async-stages=3" --canonicalize | FileCheck %s --check-prefix=SHAPE
// RUN: not gacc-opt %s -split-input-file --gacc-cuda-tile-matmuls=warps=6 2>&1 | FileCheck %s --check-prefix=BADSHAPE
// BADSHAPE: error: gacc-cuda-tile-matmuls: warps must be 4 or 8 and mma-depth 32 or 64

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// x·wᵀ (a linear layer): 2x4 blocks of 16x16 threads for a 70x200 C, two
// stages of 16x64 tiles of each operand in workgroup memory, a 4x4
// accumulator per thread, 49 steps of 16 through K; loads past the edges
// are zeros and stores past them skipped. K is contiguous in both operands
// and 784 a multiple of 4: each thread loads 4 floats at a time (16 bytes),
// one vector of each operand per step, into its staging registers, and
// stores them into the k-major tiles one by one. The first slice goes into
// stage 0 before the loop; in the loop, the next slice is loaded before
// the multiplication of this stage's tiles and stored into the other
// stage's after it, then one barrier.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: memref<70x784xf32>, %[[W:.*]]: memref<200x784xf32>, %[[Y:.*]]: memref<70x200xf32>)
// CHECK-NOT: linalg.contract
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c4, %{{[a-z0-9_]+}} = %c2, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: workgroup(%[[TA:[a-z0-9_]+]] : memref<2x16x64xf32, #gpu.address_space<workgroup>>, %[[TB:[a-z0-9_]+]] : memref<2x16x64xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%[[SA:[a-z0-9_]+]] : memref<4xf32, #gpu.address_space<private>>, %[[SB:[a-z0-9_]+]] : memref<4xf32, #gpu.address_space<private>>, %[[ACC:[a-z0-9_]+]] : memref<4x4xf32, #gpu.address_space<private>>)
// CHECK-COUNT-16: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.if
// CHECK: vector.load %[[X]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<70x784xf32>, vector<4xf32>
// CHECK: else
// CHECK: vector.store %{{.*}}, %[[SA]][%c0]
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<200x784xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[SB]][%c0]
// CHECK: vector.load %[[SA]][%c0]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TA]][%c0,
// CHECK: vector.load %[[SB]][%c0]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TB]][%c0,
// CHECK: gpu.barrier
// CHECK: scf.for %[[K0:[a-z0-9_]+]] = %c0 to %c784 step %c16 {
// CHECK: %[[SLICE:.*]] = arith.divui %[[K0]], %c16
// CHECK: %[[STAGE:.*]] = arith.remui %[[SLICE]], %c2
// CHECK: %[[NEXT:.*]] = arith.addi %[[K0]], %c16
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %c784
// CHECK: scf.if %[[MORE]] {
// CHECK: vector.load %[[X]]
// CHECK: vector.store %{{.*}}, %[[SA]][%c0]
// CHECK: vector.load %[[W]][
// CHECK: vector.store %{{.*}}, %[[SB]][%c0]
// CHECK: }
// CHECK: scf.for %{{[a-z0-9_]+}} = %c0 to %c16 step %c1 {
// CHECK-COUNT-4: memref.load %[[TA]][%[[STAGE]],
// CHECK-COUNT-16: arith.mulf
// CHECK: }
// CHECK: scf.if %[[MORE]] {
// CHECK: %[[AFTER:.*]] = arith.addi %[[STAGE]], %c1
// CHECK: %[[OTHER:.*]] = arith.remui %[[AFTER]], %c2
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TA]][%[[OTHER]],
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TB]][%[[OTHER]],
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-COUNT-16: scf.if
// CHECK: gpu.terminator
func.func @linear(%x: memref<70x784xf32>, %w: memref<200x784xf32>, %y: memref<70x200xf32>) {
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<70x784xf32>, memref<200x784xf32>) outs(%y : memref<70x200xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// C's fill just before the matmul (a view between them touches no memory)
// is taken into the kernel: each element of C is stored once, as the fill's
// value plus its sum, and C is never read. A fill of another buffer, or one
// with a copy after it, stays.
// CHECK-LABEL: func.func @filled
// CHECK-SAME: (%[[X:.*]]: memref<70x784xf32>, %[[W:.*]]: memref<200x784xf32>, %[[ARENA:.*]]: memref<?xi8>, %[[OTHER:.*]]: memref<70x200xf32>, %[[COPY:.*]]: memref<70x200xf32>)
// CHECK-DAG: %[[V:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[Y:.*]] = memref.view %[[ARENA]]
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[Y]]
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[V]] : f32
// CHECK-NEXT: memref.store %[[S]], %[[Y]]
// CHECK-NOT: memref.load %[[Y]]
// CHECK: gpu.terminator
// CHECK: linalg.fill ins(%[[V]] : f32) outs(%[[OTHER]]
// CHECK: memref.copy
// CHECK: gpu.launch
// CHECK: memref.load %[[OTHER]]
func.func @filled(%x: memref<70x784xf32>, %w: memref<200x784xf32>, %arena: memref<?xi8>,
                  %other: memref<70x200xf32>, %copy: memref<70x200xf32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 0.25 : f32
  %y = memref.view %arena[%c0][] : memref<?xi8> to memref<70x200xf32>
  linalg.fill ins(%v : f32) outs(%y : memref<70x200xf32>)
  %unused = memref.view %arena[%c0][] : memref<?xi8> to memref<200xf32>
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<70x784xf32>, memref<200x784xf32>) outs(%y : memref<70x200xf32>)
  linalg.fill ins(%v : f32) outs(%other : memref<70x200xf32>)
  memref.copy %y, %copy : memref<70x200xf32> to memref<70x200xf32>
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<70x784xf32>, memref<200x784xf32>) outs(%other : memref<70x200xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// bf16 operands into f32 go to the tensor cores: 4 warps (32x4 threads),
// each accumulating 2x4 m16n8 tiles (4 floats a lane each) in private
// memory; per 32 elements of K, 16 mma.sync m16n8k16. The shared tiles are
// laid out as the operands are in memory: A's, contiguous along K, in rows
// of K (64x40: 32 elements and 8 of padding); B's, contiguous along N,
// k-major (32x72). Both move 16 bytes at a time, so cp.async copies them
// from global memory straight into the tiles (no staging registers), into
// 4 stages: the first 3 slices before the loop, a commit group each (K is
// 64: the third slice is all zeros, none of its bytes read), then a wait
// for the first and a barrier. Each trip starts the copies of the slice 3
// ahead into the stage multiplied last, multiplies this stage, waits until
// at most 2 groups are in flight (the next slice has landed) and meets
// the block at the barrier; after the loop, a wait for all the copies
// (the last slices' zeros). Per 16 of K, each warp loads the fragments of
// each of its 2 m16 tiles of A and of each pair of its n8 tiles of B (four
// 8x8 matrices each, one ldmatrix, transposed from B's k-major tile) into
// private memory (registers), two consecutive elements of a row packed
// into each i32 register, then computes its 8 mma.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME: (%[[AIN:[^:]*]]: memref<8x64xbf16>, %[[BIN:[^:]*]]: memref<64x8xbf16>
// CHECK-DAG: %[[WARPS:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[LANES:.*]] = arith.constant 32 : index
// CHECK: gpu.launch blocks({{[^)]*}}) in ({{[^)]*}}) threads({{[^)]*}}) in (%{{[^ ]*}} = %[[LANES]], %{{[^ ]*}} = %[[WARPS]], %{{[^ ]*}} = %{{[^)]*}})
// CHECK-SAME: workgroup(%[[A:.*]] : memref<4x64x40xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4x32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%{{.*}} : memref<2x4x4xf32, #gpu.address_space<private>>, %[[F:.*]] : memref<4x8xbf16, #gpu.address_space<private>>)
// CHECK: %[[ROWIN:.*]] = arith.cmpi ult, %[[ROW:.*]], %c8 : index
// CHECK: %[[KIN:.*]] = arith.cmpi ult, %[[K:.*]], %c64 : index
// CHECK: %[[SAFEROW:.*]] = arith.select %[[ROWIN]], %[[ROW]], %c0 : index
// CHECK: %[[SAFEK:.*]] = arith.select %[[KIN]], %[[K]], %c0 : index
// CHECK: %[[INSIDE:.*]] = arith.andi %[[ROWIN]], %[[KIN]] : i1
// CHECK: %[[ACOUNT:.*]] = arith.select %[[INSIDE]], %c8, %c0 : index
// CHECK: nvgpu.device_async_copy %[[AIN]][%[[SAFEROW]], %[[SAFEK]]], %[[A]][%c0, %[[ROW]], %[[K]]], 8, %[[ACOUNT]] {bypassL1}
// CHECK: nvgpu.device_async_copy %[[AIN]]{{.*}}, %[[A]][%c0,
// CHECK: nvgpu.device_async_copy %[[BIN]]{{.*}}, %[[B]][%c0,
// CHECK: nvgpu.device_async_copy %[[BIN]]{{.*}}, %[[B]][%c0,
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}[%c1,
// CHECK: nvgpu.device_async_create_group
// CHECK-COUNT-4: nvgpu.device_async_copy {{.*}}[%c2,
// CHECK: %[[THIRD:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[THIRD]] {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[K0:.*]] = %c0 to %c64 step %c32
// CHECK: %[[SLICE:.*]] = arith.divui %[[K0]], %c32
// CHECK: %[[AHEAD:.*]] = arith.addi %[[SLICE]], %c3
// CHECK: %[[INTO:.*]] = arith.remui %[[AHEAD]], %c4
// CHECK: nvgpu.device_async_copy %[[AIN]]{{.*}}, %[[A]][%[[INTO]],
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK: %[[STAGE:.*]] = arith.remui %[[SLICE]], %c4
// CHECK: nvgpu.ldmatrix %[[A]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: vector.store %{{.*}}, %[[F]][%c0, %c0] : memref<4x8xbf16, #gpu.address_space<private>>, vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[F]][%c0, %c6]
// CHECK: nvgpu.ldmatrix %[[A]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK: vector.store %{{.*}}, %[[F]][%c1, %c0]
// CHECK: nvgpu.ldmatrix %[[B]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: vector.store %{{.*}}, %[[F]][%c2, %c0]
// CHECK: nvgpu.ldmatrix %[[B]][%[[STAGE]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK: vector.store %{{.*}}, %[[F]][%c3, %c0]
// CHECK: vector.load %[[F]][%c0, %c0]
// CHECK: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: vector.load %[[F]][%c2, %c0]
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-15: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvgpu.device_async_wait %[[GROUP]] {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: nvgpu.device_async_wait %[[THIRD]] {numGroups = 0 : i32}
// The kernel's other shapes (tuning knobs: on the H100 neither beat the
// default, bench/RESULTS.md): 8 warps as 2x4, each 32x16 of the 64x64
// tile (2x2 m16n8 tiles), 64 of K per shared tile (rows of 64 + 8), 3
// stages; K being 64, one slice, 4 mma steps of 4 tiles per warp.
// Warp w's piece starts at row 32 (w / 4), column 16 (w % 4).
// SHAPE-LABEL: func.func @bf16
// SHAPE: gpu.launch blocks({{[^)]*}}) in ({{[^)]*}}) threads(%{{[^,]*}}, %[[WARP:[^,]*]], %{{[^)]*}}) in (%{{[^ ]*}} = %c32, %{{[^ ]*}} = %c8, %{{[^)]*}})
// SHAPE-SAME: workgroup(%{{.*}} : memref<3x64x72xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<3x64x72xbf16, #gpu.address_space<workgroup>>)
// SHAPE-SAME: private(%{{.*}} : memref<2x2x4xf32, #gpu.address_space<private>>, %{{.*}} : memref<3x8xbf16, #gpu.address_space<private>>)
// SHAPE: %[[WROW:.*]] = arith.divui %[[WARP]], %c4 : index
// SHAPE-NEXT: arith.muli %[[WROW]], %c32 : index
// SHAPE-NEXT: %[[WCOL:.*]] = arith.remui %[[WARP]], %c4 : index
// SHAPE-NEXT: arith.muli %[[WCOL]], %c16 : index
// SHAPE: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// SHAPE-COUNT-16: nvvm.mma.sync
// SHAPE-NOT: nvvm.mma.sync
// SHAPE: gpu.terminator
func.func @bf16(%a: memref<8x64xbf16>, %b: memref<64x8xbf16>, %c: memref<8x8xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<8x64xbf16>, memref<64x8xbf16>) outs(%c : memref<8x8xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Where an operand cannot move 16 bytes at a time (K = 60 is no multiple
// of 8 halves), the tensor-core kernel keeps the register pipeline of
// @linear: staging registers, two stages, no cp.async.
// CHECK-LABEL: func.func @bf16_unaligned
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[A:.*]] : memref<2x64x40xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<2x32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%{{.*}} : memref<16xbf16, #gpu.address_space<private>>, %{{.*}} : memref<16xbf16, #gpu.address_space<private>>,
// CHECK-NOT: nvgpu.device_async
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.device_async
func.func @bf16_unaligned(%a: memref<8x60xbf16>, %b: memref<60x8xbf16>, %c: memref<8x8xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<8x60xbf16>, memref<60x8xbf16>) outs(%c : memref<8x8xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Element by element where 16 bytes would not stay aligned or whole: an
// odd row length (GPT-2's 50257 classes), a view at an offset of 2 floats,
// a dimension that is not innermost (B[n][k] read along N).
// The other operands are vectors.
// CHECK-LABEL: func.func @unaligned
// CHECK-SAME: (%[[LOGITS:[^:]*]]: memref<16x50257xf32>, %[[W:[^:]*]]: memref<50257x8xf32>, %[[VIEW:[^:]*]]: memref<16x64xf32, strided<[64, 1], offset: 2>>, %[[V:[^:]*]]: memref<64x8xf32>, %[[AT:[^:]*]]: memref<16x64xf32>, %[[BT:[^:]*]]: memref<64x8xf32, strided<[1, 64]>>
// CHECK-NOT: vector.load %[[LOGITS]][
// CHECK-NOT: vector.load %[[VIEW]][
// CHECK-NOT: vector.load %[[BT]][
// CHECK: vector.load %[[W]][
// CHECK-NOT: vector.load %[[LOGITS]][
// CHECK-NOT: vector.load %[[VIEW]][
// CHECK-NOT: vector.load %[[BT]][
// CHECK: vector.load %[[V]][
// CHECK-NOT: vector.load %[[LOGITS]][
// CHECK-NOT: vector.load %[[VIEW]][
// CHECK-NOT: vector.load %[[BT]][
// CHECK: vector.load %[[AT]][
// CHECK-NOT: vector.load %[[BT]][
// CHECK: return
func.func @unaligned(%logits: memref<16x50257xf32>, %w: memref<50257x8xf32>,
                     %view: memref<16x64xf32, strided<[64, 1], offset: 2>>, %v: memref<64x8xf32>,
                     %at: memref<16x64xf32>, %bt: memref<64x8xf32, strided<[1, 64]>>, %y: memref<16x8xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%logits, %w : memref<16x50257xf32>, memref<50257x8xf32>) outs(%y : memref<16x8xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%view, %v : memref<16x64xf32, strided<[64, 1], offset: 2>>, memref<64x8xf32>) outs(%y : memref<16x8xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%at, %bt : memref<16x64xf32>, memref<64x8xf32, strided<[1, 64]>>) outs(%y : memref<16x8xf32>)
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// Dynamic shapes keep their loops (the kernel's grid and bounds are
// static).
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: gpu.launch
// CHECK: linalg.contract
func.func @dynamic(%a: memref<?x8xf32>, %b: memref<8x8xf32>, %c: memref<?x8xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<?x8xf32>, memref<8x8xf32>) outs(%c : memref<?x8xf32>)
  return
}

// -----

// An embedding's gradient (gacc.embedding_gradient: one_hot(ids)ᵀ · dy, the
// ids read from the batch arena): a thread per column of C and a range of
// its rows (here one row in each of 5 blocks), adding the row of dy of
// each id in its range in position order (ids outside it add nothing), the
// bf16 rows widened. The one-hot and the product go; the zero fill stays.
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#hot = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#hotT = affine_map<(d0, d1, d2) -> (d2, d0)>
#dy = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding_gradient
// CHECK: %[[IDS:.*]] = memref.view
// CHECK-NOT: linalg.generic
// CHECK: linalg.fill
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[IDS]] {{\[\[}}0, 1]] : memref<2x3xi32> into memref<6xi32>
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c5, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: threads(%[[TX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c128, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK: %[[END:.*]] = arith.minui
// CHECK: scf.if
// CHECK: scf.for %[[P:.*]] = %c0 to %c6 step %c1
// CHECK: %[[RAW:.*]] = memref.load %[[FLAT]][%[[P]]]
// CHECK: %[[ID:.*]] = arith.index_cast %[[RAW]]
// CHECK-DAG: arith.cmpi sge, %[[ID]], %[[BY]]
// CHECK-DAG: arith.cmpi slt, %[[ID]], %[[END]]
// CHECK: scf.if
// CHECK: %[[ROW:.*]] = memref.load %arg2[%[[P]], %[[TX]]] : memref<6x4xbf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[ROW]] : bf16 to f32
// CHECK: %[[OLD:.*]] = memref.load %arg3[%[[ID]], %[[TX]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[WIDE]]
// CHECK: memref.store %[[SUM]], %arg3[%[[ID]], %[[TX]]]
// CHECK-NOT: linalg.contract
// CHECK: return
func.func @embedding_gradient(%batch: memref<?xi8> {gacc.arena = "batch"}, %hot: memref<2x3x5xbf16>, %dy: memref<6x4xbf16>, %c: memref<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %ids = memref.view %batch[%c0][] : memref<?xi8> to memref<2x3xi32>
  %zero = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : bf16
  %fzero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#ids, #hot], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : memref<2x3xi32>) outs(%hot : memref<2x3x5xbf16>) {
  ^bb0(%id: i32, %o: bf16):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i32
    %hit = arith.cmpi eq, %id, %vi : i32
    %x = arith.select %hit, %one, %zero : bf16
    linalg.yield %x : bf16
  }
  %flat = memref.collapse_shape %hot [[0, 1], [2]] : memref<2x3x5xbf16> into memref<6x5xbf16>
  linalg.fill ins(%fzero : f32) outs(%c : memref<5x4xf32>)
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xbf16>, memref<6x4xbf16>) outs(%c : memref<5x4xf32>)
      {gacc.embedding_gradient}
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#tr = affine_map<(m, n) -> (n, m)>

// Epilogues. The rounding to bf16 and the bias add that read C just after
// a bf16 linear layer run in the kernel, where C's element is in
// registers: the kernel loads the bias at C's column and stores the bf16
// result; C itself, in the workspace and read by nothing later (the next
// use of its bytes fills them), is never stored. When C is read later (the
// copy), the kernel stores C and the result. The view made
// between the matmul and its epilogue moves up, before the kernel.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[X:[^:]*]]: memref<64x128xbf16>, %[[W:[^:]*]]: memref<256x128xbf16>, %[[BIAS:[^:]*]]: memref<256xbf16>, %[[ARENA:[^:]*]]: memref<?xi8> {gacc.arena = "workspace"}, %[[COPY:[^:]*]]: memref<64x256xf32>)
// CHECK: %[[C:.*]] = memref.view %[[ARENA]]{{.*}} to memref<64x256xf32>
// CHECK: %[[Y:.*]] = memref.view %[[ARENA]]{{.*}} to memref<64x256xbf16>
// CHECK: gpu.launch
// CHECK-NOT: memref.store %{{.*}}, %[[C]][
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}} : f32
// CHECK-NOT: memref.store %{{.*}}, %[[C]][
// CHECK: %[[B:.*]] = memref.load %[[BIAS]][%{{.*}}] : memref<256xbf16>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[R]], %[[B]] : bf16
// CHECK-NEXT: memref.store %[[OUT]], %[[Y]]
// CHECK-NOT: memref.store %{{.*}}, %[[C]][
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: memref.store %[[SUM2:.*]], %[[C]]
// CHECK: memref.load %[[BIAS]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %[[C]], %[[COPY]]
func.func @epilogue(%x: memref<64x128xbf16>, %w: memref<256x128xbf16>, %bias: memref<256xbf16>,
                    %arena: memref<?xi8> {gacc.arena = "workspace"}, %copy: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %shift = arith.constant 65536 : index
  %zero = arith.constant 0.0 : f32
  %c = memref.view %arena[%c0][] : memref<?xi8> to memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x256xf32>)
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x128xbf16>, memref<256x128xbf16>) outs(%c : memref<64x256xf32>)
  %y = memref.view %arena[%shift][] : memref<?xi8> to memref<64x256xbf16>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x256xf32>, memref<256xbf16>) outs(%y : memref<64x256xbf16>) {
  ^bb0(%in: f32, %b: bf16, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    %s = arith.addf %r, %b : bf16
    linalg.yield %s : bf16
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<64x256xf32>)
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x128xbf16>, memref<256x128xbf16>) outs(%c : memref<64x256xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x256xf32>, memref<256xbf16>) outs(%y : memref<64x256xbf16>) {
  ^bb0(%in: f32, %b: bf16, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    %s = arith.addf %r, %b : bf16
    linalg.yield %s : bf16
  }
  memref.copy %c, %copy : memref<64x256xf32> to memref<64x256xf32>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#tr = affine_map<(m, n) -> (n, m)>

// What stays an op of its own: an op that reads C transposed, one that
// writes over the matmul's operand (blocks still read it while others
// would store), and one after a copy (an op with memory effects between).
// CHECK-LABEL: func.func @no_epilogue
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK: linalg.generic
// CHECK: gpu.launch
// CHECK: memref.copy
// CHECK: linalg.generic
func.func @no_epilogue(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %c: memref<64x64xf32>,
                       %y: memref<64x64xf32>, %other: memref<64x64xf32>) {
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  memref.copy %c, %other : memref<64x64xf32> to memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>

// An f32 (SGEMM) epilogue whose body reads its loop indices (a causal
// mask's) and yields a value made outside it. C is kept where its bytes
// are not the step's own: an argument, or the state or io arena, which the
// caller reads after the step.
// CHECK-LABEL: func.func @epilogue_kept
// CHECK-SAME: (%[[X:[^:]*]]: memref<64x64xf32>, %[[W:[^:]*]]: memref<64x64xf32>, %[[C:[^:]*]]: memref<64x64xf32>, %[[Y:[^:]*]]: memref<64x64xf32>, %[[IO:[^:]*]]: memref<?xi8> {gacc.arena = "io"})
// CHECK-DAG: %[[NEG:.*]] = arith.constant -1.000000e+04 : f32
// CHECK: gpu.launch
// CHECK: memref.load %[[C]][
// CHECK-NEXT: %[[SUM:.*]] = arith.addf
// CHECK-NEXT: memref.store %[[SUM]], %[[C]][%[[M:.*]], %[[N:.*]]]
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpi ugt, %[[N]], %[[M]] : index
// CHECK-NEXT: %[[MASKED:.*]] = arith.select %[[ABOVE]], %[[NEG]], %[[SUM]] : f32
// CHECK-NEXT: memref.store %[[MASKED]], %[[Y]][%[[M]], %[[N]]]
// CHECK: %[[C2:.*]] = memref.view %[[IO]]
// CHECK: gpu.launch
// CHECK: memref.load %[[C2]]
// CHECK-NEXT: %[[SUM2:.*]] = arith.addf
// CHECK-NEXT: memref.store %[[SUM2]], %[[C2]]
// CHECK-NEXT: memref.store %[[NEG]], %[[Y]]
// CHECK-NOT: linalg.generic
func.func @epilogue_kept(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %c: memref<64x64xf32>,
                         %y: memref<64x64xf32>, %io: memref<?xi8> {gacc.arena = "io"}) {
  %c0 = arith.constant 0 : index
  %neg = arith.constant -1.0e4 : f32
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %above = arith.cmpi ugt, %j, %i : index
    %s = arith.select %above, %neg, %in : f32
    linalg.yield %s : f32
  }
  %c2 = memref.view %io[%c0][] : memref<?xi8> to memref<64x64xf32>
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%c2 : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2 : memref<64x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %neg : f32
  }
  return
}

// -----

#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#nk = affine_map<(b, m, n, k) -> (n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(b, m, n) -> (b, m, n)>

// A batched matmul (a projection of [2, 64, 128] activations) whose
// epilogue adds the residual in place: the residual is both an input and
// the result, element for element, so each thread reads and writes only
// its own element. C, in the workspace and never read again, is not
// stored: its view goes; the batch index from blockIdx.z reaches the
// residual's loads.
// CHECK-LABEL: func.func @residual_in_place
// CHECK-SAME: (%[[X:[^:]*]]: memref<2x64x128xf32>, %[[W:[^:]*]]: memref<128x128xf32>, %[[R:[^:]*]]: memref<2x64x128xf32>, %[[ARENA:[^:]*]]: memref<?xi8> {gacc.arena = "workspace"})
// CHECK-NOT: memref.view
// CHECK: gpu.launch blocks(%{{[^,]*}}, %{{[^,]*}}, %[[BZ:[^)]*]]) in (%{{[^ ]*}} = %c2, %{{[^ ]*}} = %c1, %{{[^ ]*}} = %c2)
// CHECK: %[[OLD:.*]] = memref.load %[[R]][%[[BZ]], %[[M:.*]], %[[N:.*]]]
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %{{.*}}, %[[OLD]] : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[R]][%[[BZ]], %[[M]], %[[N]]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @residual_in_place(%x: memref<2x64x128xf32>, %w: memref<128x128xf32>,
                             %r: memref<2x64x128xf32>,
                             %arena: memref<?xi8> {gacc.arena = "workspace"}) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %c = memref.view %arena[%c0][] : memref<?xi8> to memref<2x64x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x64x128xf32>)
  linalg.contract indexing_maps = [#bmk, #nk, #bmn]
      ins(%x, %w : memref<2x64x128xf32>, memref<128x128xf32>) outs(%c : memref<2x64x128xf32>)
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %r : memref<2x64x128xf32>, memref<2x64x128xf32>) outs(%r : memref<2x64x128xf32>) {
  ^bb0(%in: f32, %res: f32, %out: f32):
    %s = arith.addf %in, %res : f32
    linalg.yield %s : f32
  }
  return
}
