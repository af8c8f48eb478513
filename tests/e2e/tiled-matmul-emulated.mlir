// The tiled matmul kernels of gacc-cuda-tile-matmuls, run on the CPU by
// gacc-cuda-emulate-launches (shared-memory tiles, barriers, per-thread
// accumulators), equal plain loops exactly on small integers: edges that
// are not multiples of the 64x64 or 128x128 tile or of K's step (16, 32),
// either operand transposed, a broadcast batch, two batch loops of which
// each operand reads one, f16 operands accumulating in f32 (the
// tensor-core kernel: its mma.sync computed lane by lane from the
// fragments' PTX layouts), f16 operands into f16 (the SGEMM kernel, its
// 16-byte loads fewer than its threads), C accumulated into (C += A·B),
// and C's fill taken into the kernel (C = v + A·B, C never read); more
// row tiles than the grouped block order's 8 (its last group smaller), K
// of one slice (cp.async's stages ahead all zeros). Again with the
// tensor-core kernel's other shapes: 8 warps, 64 of K per slice, 3
// stages; and 2 stages with 128x256 tiles where C is that wide.
// RUN: gacc-opt %s --gacc-cuda-tile-matmuls --gacc-cuda-emulate-launches \
// RUN:   --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:   --lower-affine --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:   --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm \
// RUN:   --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s
// RUN: gacc-opt %s --gacc-cuda-tile-matmuls="warps=8 mma-depth=64 async-stages=3" --gacc-cuda-emulate-launches \
// RUN:   --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:   --lower-affine --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:   --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm \
// RUN:   --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s
// RUN: gacc-opt %s --gacc-cuda-tile-matmuls="async-stages=2 wide-tiles=1" --gacc-cuda-emulate-launches \
// RUN:   --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:   --lower-affine --convert-vector-to-llvm --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:   --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm \
// RUN:   --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s

// Also: the rewrite made kernels out of exactly the ten contractions,
// and took in the six fills just before them (the references' stay).
// RUN: gacc-opt %s --gacc-cuda-tile-matmuls | FileCheck %s --check-prefix=KERNELS
// KERNELS-COUNT-10: gpu.launch blocks
// KERNELS-NOT: gpu.launch blocks
// RUN: gacc-opt %s --gacc-cuda-tile-matmuls | grep -c linalg.fill | FileCheck %s --check-prefix=FILLS
// FILLS: 6

// CHECK: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#nk = affine_map<(m, n, k) -> (n, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkn = affine_map<(b, m, n, k) -> (k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#b0mk = affine_map<(b0, b1, m, n, k) -> (b0, m, k)>
#b1kn = affine_map<(b0, b1, m, n, k) -> (b1, k, n)>
#bbmn = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
#none2 = affine_map<(i, j) -> ()>
#none3 = affine_map<(i, j, k) -> ()>

func.func private @printF32(f32)
func.func private @printNewline()

// x[i, j] = (3i + j) mod 7, or (5i + 3j + k) mod 7 in 3-D.
func.func @fill2(%m: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%m : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %s = arith.muli %i, %c3 : index
    %t = arith.addi %s, %j : index
    %r = arith.remui %t, %c7 : index
    %ri = arith.index_cast %r : index to i32
    %f = arith.sitofp %ri : i32 to f32
    linalg.yield %f : f32
  }
  return
}

func.func @fill3(%m: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%m : memref<?x?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %s = arith.muli %i, %c5 : index
    %t = arith.muli %j, %c3 : index
    %u = arith.addi %s, %t : index
    %v = arith.addi %u, %k : index
    %r = arith.remui %v, %c7 : index
    %ri = arith.index_cast %r : index to i32
    %f = arith.sitofp %ri : i32 to f32
    linalg.yield %f : f32
  }
  return
}

func.func @print_max_difference2(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %d = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %d[] : memref<f32>
  linalg.generic {indexing_maps = [#id2, #id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%d : memref<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    %e = math.absf %s : f32
    %m = arith.maximumf %o, %e : f32
    linalg.yield %m : f32
  }
  %v = memref.load %d[] : memref<f32>
  call @printF32(%v) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @print_max_difference3(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>) {
  %d = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %d[] : memref<f32>
  linalg.generic {indexing_maps = [#id3, #id3, #none3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%d : memref<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    %e = math.absf %s : f32
    %m = arith.maximumf %o, %e : f32
    linalg.yield %m : f32
  }
  %v = memref.load %d[] : memref<f32>
  call @printF32(%v) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}

// C += A·B^T (a linalg.contract), and its reference: the same sum as a
// linalg.generic, which the rewrite does not take (it takes named
// contractions only).
func.func @transposed_rhs() {
  %a = memref.alloc() : memref<70x20xf32>
  %b = memref.alloc() : memref<90x20xf32>
  %c = memref.alloc() : memref<70x90xf32>
  %r = memref.alloc() : memref<70x90xf32>
  %ad = memref.cast %a : memref<70x20xf32> to memref<?x?xf32>
  %bd = memref.cast %b : memref<90x20xf32> to memref<?x?xf32>
  %cd = memref.cast %c : memref<70x90xf32> to memref<?x?xf32>
  %rd = memref.cast %r : memref<70x90xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  call @fill2(%cd) : (memref<?x?xf32>) -> ()
  call @fill2(%rd) : (memref<?x?xf32>) -> ()
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%a, %b : memref<70x20xf32>, memref<90x20xf32>) outs(%c : memref<70x90xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<70x20xf32>, memref<90x20xf32>) outs(%r : memref<70x90xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// C = 0.5 + A^T·B with f16 operands, accumulated in f32.
func.func @transposed_lhs_f16() {
  %a32 = memref.alloc() : memref<33x130xf32>
  %b32 = memref.alloc() : memref<33x17xf32>
  %a = memref.alloc() : memref<33x130xf16>
  %b = memref.alloc() : memref<33x17xf16>
  %c = memref.alloc() : memref<130x17xf32>
  %r = memref.alloc() : memref<130x17xf32>
  %ad = memref.cast %a32 : memref<33x130xf32> to memref<?x?xf32>
  %bd = memref.cast %b32 : memref<33x17xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a32 : memref<33x130xf32>) outs(%a : memref<33x130xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b32 : memref<33x17xf32>) outs(%b : memref<33x17xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  // C's fill (just before its matmul) is taken into the kernel.
  %half = arith.constant 0.5 : f32
  linalg.fill ins(%half : f32) outs(%r : memref<130x17xf32>)
  linalg.fill ins(%half : f32) outs(%c : memref<130x17xf32>)
  linalg.contract indexing_maps = [#km, #kn, #mn]
      ins(%a, %b : memref<33x130xf16>, memref<33x17xf16>) outs(%c : memref<130x17xf32>)
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<33x130xf16>, memref<33x17xf16>) outs(%r : memref<130x17xf32>) {
  ^bb0(%p: f16, %q: f16, %o: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %t = arith.mulf %pe, %qe : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  %cd = memref.cast %c : memref<130x17xf32> to memref<?x?xf32>
  %rd = memref.cast %r : memref<130x17xf32> to memref<?x?xf32>
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// C[b] += A[b]·B, B broadcast over the batch of 3 (the batch is
// blockIdx.z).
func.func @broadcast_batch() {
  %a = memref.alloc() : memref<3x65x18xf32>
  %b = memref.alloc() : memref<18x66xf32>
  %c = memref.alloc() : memref<3x65x66xf32>
  %r = memref.alloc() : memref<3x65x66xf32>
  %ad = memref.cast %a : memref<3x65x18xf32> to memref<?x?x?xf32>
  %bd = memref.cast %b : memref<18x66xf32> to memref<?x?xf32>
  %cd = memref.cast %c : memref<3x65x66xf32> to memref<?x?x?xf32>
  %rd = memref.cast %r : memref<3x65x66xf32> to memref<?x?x?xf32>
  call @fill3(%ad) : (memref<?x?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  call @fill3(%cd) : (memref<?x?x?xf32>) -> ()
  call @fill3(%rd) : (memref<?x?x?xf32>) -> ()
  linalg.contract indexing_maps = [#bmk, #bkn, #bmn]
      ins(%a, %b : memref<3x65x18xf32>, memref<18x66xf32>) outs(%c : memref<3x65x66xf32>)
  linalg.generic {indexing_maps = [#bmk, #bkn, #bmn], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x65x18xf32>, memref<18x66xf32>) outs(%r : memref<3x65x66xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  call @print_max_difference3(%cd, %rd) : (memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  return
}

// C[b0, b1] += A[b0]·B[b1]: each operand reads one of the two batch loops
// (blockIdx.z enumerates both), as the contraction of a matmul whose
// operands' batch dimensions stretch ([2, 1, M, K] x [3, K, N]) reads them.
func.func @two_batches() {
  %a = memref.alloc() : memref<2x20x9xf32>
  %b = memref.alloc() : memref<3x9x70xf32>
  %c = memref.alloc() : memref<2x3x20x70xf32>
  %r = memref.alloc() : memref<2x3x20x70xf32>
  %c3 = memref.collapse_shape %c [[0, 1], [2], [3]] : memref<2x3x20x70xf32> into memref<6x20x70xf32>
  %r3 = memref.collapse_shape %r [[0, 1], [2], [3]] : memref<2x3x20x70xf32> into memref<6x20x70xf32>
  %ad = memref.cast %a : memref<2x20x9xf32> to memref<?x?x?xf32>
  %bd = memref.cast %b : memref<3x9x70xf32> to memref<?x?x?xf32>
  %cd = memref.cast %c3 : memref<6x20x70xf32> to memref<?x?x?xf32>
  %rd = memref.cast %r3 : memref<6x20x70xf32> to memref<?x?x?xf32>
  call @fill3(%ad) : (memref<?x?x?xf32>) -> ()
  call @fill3(%bd) : (memref<?x?x?xf32>) -> ()
  call @fill3(%cd) : (memref<?x?x?xf32>) -> ()
  call @fill3(%rd) : (memref<?x?x?xf32>) -> ()
  linalg.contract indexing_maps = [#b0mk, #b1kn, #bbmn]
      ins(%a, %b : memref<2x20x9xf32>, memref<3x9x70xf32>) outs(%c : memref<2x3x20x70xf32>)
  linalg.generic {indexing_maps = [#b0mk, #b1kn, #bbmn], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x20x9xf32>, memref<3x9x70xf32>) outs(%r : memref<2x3x20x70xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  }
  call @print_max_difference3(%cd, %rd) : (memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  return
}

// C = 1.25 + A·B, large enough for several tiles each way and 50 K
// steps; C's fill is taken into the kernel.
func.func @several_tiles() {
  %a = memref.alloc() : memref<200x800xf32>
  %b = memref.alloc() : memref<800x150xf32>
  %c = memref.alloc() : memref<200x150xf32>
  %r = memref.alloc() : memref<200x150xf32>
  %ad = memref.cast %a : memref<200x800xf32> to memref<?x?xf32>
  %bd = memref.cast %b : memref<800x150xf32> to memref<?x?xf32>
  %cd = memref.cast %c : memref<200x150xf32> to memref<?x?xf32>
  %rd = memref.cast %r : memref<200x150xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  %init = arith.constant 1.25 : f32
  linalg.fill ins(%init : f32) outs(%r : memref<200x150xf32>)
  linalg.fill ins(%init : f32) outs(%c : memref<200x150xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<200x800xf32>, memref<800x150xf32>) outs(%c : memref<200x150xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<200x800xf32>, memref<800x150xf32>) outs(%r : memref<200x150xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  }
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// C = A·Bᵀ and C = A·B with f16 operands, C 200x150: the tensor-core
// kernel's 128x128 tiles (warps of 64x64) with edges both ways, three
// steps of 32 through K, 8 halves loaded at a time (B's rows of K as they
// are, B's columns across the rows of its shared tile).
func.func @large_tiles_f16() {
  %a32 = memref.alloc() : memref<200x96xf32>
  %bt32 = memref.alloc() : memref<150x96xf32>
  %b32 = memref.alloc() : memref<96x152xf32>
  %a = memref.alloc() : memref<200x96xf16>
  %bt = memref.alloc() : memref<150x96xf16>
  %b = memref.alloc() : memref<96x152xf16>
  %c = memref.alloc() : memref<200x150xf32>
  %r = memref.alloc() : memref<200x150xf32>
  %c2 = memref.alloc() : memref<200x152xf32>
  %r2 = memref.alloc() : memref<200x152xf32>
  %ad = memref.cast %a32 : memref<200x96xf32> to memref<?x?xf32>
  %btd = memref.cast %bt32 : memref<150x96xf32> to memref<?x?xf32>
  %bd = memref.cast %b32 : memref<96x152xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%btd) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a32 : memref<200x96xf32>) outs(%a : memref<200x96xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bt32 : memref<150x96xf32>) outs(%bt : memref<150x96xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b32 : memref<96x152xf32>) outs(%b : memref<96x152xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<200x150xf32>)
  linalg.fill ins(%zero : f32) outs(%r2 : memref<200x152xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<200x150xf32>)
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%a, %bt : memref<200x96xf16>, memref<150x96xf16>) outs(%c : memref<200x150xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<200x96xf16>, memref<150x96xf16>) outs(%r : memref<200x150xf32>) {
  ^bb0(%p: f16, %q: f16, %o: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %t = arith.mulf %pe, %qe : f32
    %u = arith.addf %t, %o : f32
    linalg.yield %u : f32
  }
  linalg.fill ins(%zero : f32) outs(%c2 : memref<200x152xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<200x96xf16>, memref<96x152xf16>) outs(%c2 : memref<200x152xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<200x96xf16>, memref<96x152xf16>) outs(%r2 : memref<200x152xf32>) {
  ^bb0(%p: f16, %q: f16, %o: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %t = arith.mulf %pe, %qe : f32
    %u = arith.addf %t, %o : f32
    linalg.yield %u : f32
  }
  %cd = memref.cast %c : memref<200x150xf32> to memref<?x?xf32>
  %rd = memref.cast %r : memref<200x150xf32> to memref<?x?xf32>
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  %c2d = memref.cast %c2 : memref<200x152xf32> to memref<?x?xf32>
  %r2d = memref.cast %r2 : memref<200x152xf32> to memref<?x?xf32>
  call @print_max_difference2(%c2d, %r2d) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// C = A·B all in f16 (the SGEMM kernel: 16-bit operands into a 16-bit C do
// not go to the tensor cores), K 64 contiguous: 128 vectors of 8 halves
// per tile of A, fewer than the kernel's 256 threads, so element by
// element.
func.func @f16_into_f16() {
  %a32 = memref.alloc() : memref<72x64xf32>
  %b32 = memref.alloc() : memref<64x40xf32>
  %a = memref.alloc() : memref<72x64xf16>
  %b = memref.alloc() : memref<64x40xf16>
  %c = memref.alloc() : memref<72x40xf16>
  %r = memref.alloc() : memref<72x40xf16>
  %ad = memref.cast %a32 : memref<72x64xf32> to memref<?x?xf32>
  %bd = memref.cast %b32 : memref<64x40xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a32 : memref<72x64xf32>) outs(%a : memref<72x64xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b32 : memref<64x40xf32>) outs(%b : memref<64x40xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%r : memref<72x40xf16>)
  linalg.fill ins(%zero : f16) outs(%c : memref<72x40xf16>)
  linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%a, %b : memref<72x64xf16>, memref<64x40xf16>) outs(%c : memref<72x40xf16>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<72x64xf16>, memref<64x40xf16>) outs(%r : memref<72x40xf16>) {
  ^bb0(%p: f16, %q: f16, %o: f16):
    %t = arith.mulf %p, %q : f16
    %u = arith.addf %t, %o : f16
    linalg.yield %u : f16
  }
  %c32 = memref.alloc() : memref<72x40xf32>
  %r32 = memref.alloc() : memref<72x40xf32>
  linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %r : memref<72x40xf16>, memref<72x40xf16>) outs(%c32, %r32 : memref<72x40xf32>, memref<72x40xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32, %p: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    linalg.yield %xe, %ye : f32, f32
  }
  %cd = memref.cast %c32 : memref<72x40xf32> to memref<?x?xf32>
  %rd = memref.cast %r32 : memref<72x40xf32> to memref<?x?xf32>
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// C = A·Bᵀ in f32 over the first 640 rows (the SGEMM's 64x64 tiles: 10
// row tiles, 5 column tiles) and over all 1200 with f16 operands (the
// tensor-core kernel's 128x128 tiles: 10 row tiles, 3 column tiles; or
// 128x256 with wide-tiles: 2), K 32: blocks take their tiles in groups of
// 8 row tiles down each column, the last group 2; every C element must be
// computed exactly once. One slice of K, fewer than cp.async's stages.
func.func @grouped_tiles() {
  %a32 = memref.alloc() : memref<1200x32xf32>
  %b32 = memref.alloc() : memref<264x32xf32>
  %a = memref.alloc() : memref<1200x32xf16>
  %b = memref.alloc() : memref<264x32xf16>
  %c = memref.alloc() : memref<1200x264xf32>
  %r = memref.alloc() : memref<1200x264xf32>
  %ad = memref.cast %a32 : memref<1200x32xf32> to memref<?x?xf32>
  %bd = memref.cast %b32 : memref<264x32xf32> to memref<?x?xf32>
  call @fill2(%ad) : (memref<?x?xf32>) -> ()
  call @fill2(%bd) : (memref<?x?xf32>) -> ()
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<1200x264xf32>)
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a32, %b32 : memref<1200x32xf32>, memref<264x32xf32>) outs(%r : memref<1200x264xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %u = arith.addf %t, %o : f32
    linalg.yield %u : f32
  }
  %cd = memref.cast %c : memref<1200x264xf32> to memref<?x?xf32>
  %rd = memref.cast %r : memref<1200x264xf32> to memref<?x?xf32>
  %c640 = memref.subview %c[0, 0] [640, 264] [1, 1] : memref<1200x264xf32> to memref<640x264xf32, strided<[264, 1]>>
  %r640 = memref.subview %r[0, 0] [640, 264] [1, 1] : memref<1200x264xf32> to memref<640x264xf32, strided<[264, 1]>>
  %a640 = memref.subview %a32[0, 0] [640, 32] [1, 1] : memref<1200x32xf32> to memref<640x32xf32, strided<[32, 1]>>
  linalg.fill ins(%zero : f32) outs(%c640 : memref<640x264xf32, strided<[264, 1]>>)
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%a640, %b32 : memref<640x32xf32, strided<[32, 1]>>, memref<264x32xf32>)
      outs(%c640 : memref<640x264xf32, strided<[264, 1]>>)
  %cc = memref.alloc() : memref<640x264xf32>
  %rc = memref.alloc() : memref<640x264xf32>
  memref.copy %c640, %cc : memref<640x264xf32, strided<[264, 1]>> to memref<640x264xf32>
  memref.copy %r640, %rc : memref<640x264xf32, strided<[264, 1]>> to memref<640x264xf32>
  %ccd = memref.cast %cc : memref<640x264xf32> to memref<?x?xf32>
  %rcd = memref.cast %rc : memref<640x264xf32> to memref<?x?xf32>
  call @print_max_difference2(%ccd, %rcd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a32 : memref<1200x32xf32>) outs(%a : memref<1200x32xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b32 : memref<264x32xf32>) outs(%b : memref<264x32xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<1200x264xf32>)
  linalg.contract indexing_maps = [#mk, #nk, #mn]
      ins(%a, %b : memref<1200x32xf16>, memref<264x32xf16>) outs(%c : memref<1200x264xf32>)
  call @print_max_difference2(%cd, %rd) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

func.func @main() {
  call @transposed_rhs() : () -> ()
  call @transposed_lhs_f16() : () -> ()
  call @broadcast_batch() : () -> ()
  call @two_batches() : () -> ()
  call @several_tiles() : () -> ()
  call @large_tiles_f16() : () -> ()
  call @f16_into_f16() : () -> ()
  call @grouped_tiles() : () -> ()
  return
}
