// The block reductions of gacc-cuda-block-reductions, run on the CPU by
// gacc-cuda-emulate-launches (strided per-thread sums, a tree in workgroup
// memory, barriers), give the same results as plain loops (exact on small
// integers): a row sum into initialized outputs, a softmax-like chain
// (several elements per thread at a time, then the rest), a maximum over two
// reduction loops, a whole tensor of bf16 values summed in f32 into a
// scalar, a bias-gradient-like sum over the leading loops into a 1x1xN
// output, a layer-norm-like chain fused into one kernel in an arena
// whose places are reused as the memory plan reuses them, and row sums
// whose places are reached two ways (two get_globals of one global; the
// arena and the arena a loop carries) next to an op that writes over their
// input (exact dyadic values; the emulation runs blocks last first, so a
// block that wrote over what another had yet to read would show).
// RUN: gacc-opt %s --gacc-cuda-block-reductions --gacc-cuda-emulate-launches \
// RUN:   --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:   --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
// RUN:   --convert-arith-to-llvm --convert-index-to-llvm --convert-func-to-llvm \
// RUN:   --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s
// The same program with plain loops prints the same.
// RUN: gacc-opt %s --convert-linalg-to-loops --convert-scf-to-cf \
// RUN:   --expand-strided-metadata --lower-affine --finalize-memref-to-llvm \
// RUN:   --convert-math-to-llvm --convert-arith-to-llvm --convert-index-to-llvm \
// RUN:   --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s
// Every reduction became a kernel.
// RUN: gacc-opt %s --gacc-cuda-block-reductions | FileCheck %s --check-prefix=KERNELS
// KERNELS-COUNT-7: gpu.launch blocks
// KERNELS-NOT: gpu.launch blocks
// In @carried, the fills join the row sums through another get_global of
// the same global and through the arena a loop carries; the op that writes
// over rows of the input that other blocks have yet to read stays out.
// RUN: gacc-opt %s --gacc-cuda-block-reductions | FileCheck %s --check-prefix=CARRIED
// CARRIED-LABEL: func.func @carried
// CARRIED-NOT: linalg.
// CARRIED: gpu.launch blocks
// CARRIED-NOT: linalg.
// CARRIED: gpu.terminator
// CARRIED-NEXT: }
// CARRIED-NEXT: memref.view
// CARRIED-NEXT: linalg.generic
// CARRIED-NOT: gpu.launch
// CARRIED: return

// CHECK: 3298
// CHECK-NEXT: 3301
// CHECK-NEXT: 3304
// CHECK-NEXT: -1805
// CHECK-NEXT: -1797
// CHECK-NEXT: 86
// CHECK-NEXT: 91
// CHECK-NEXT: 1195
// CHECK-NEXT: 2480
// CHECK-NEXT: 5406
// CHECK-NEXT: 66685.5
// CHECK-NEXT: 65553
// CHECK-NEXT: 64512
// CHECK-NEXT: 64544
// CHECK-NEXT: 66780
// CHECK-NEXT: 64512
// CHECK-NEXT: 189
// CHECK-NEXT: 192
// CHECK-NEXT: 820
// CHECK-NEXT: 1023
// CHECK-NEXT: 1021

#id2 = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
#row = affine_map<(i, j) -> (i)>
#first = affine_map<(i, j, k) -> (i)>
#scalar = affine_map<(i, j) -> ()>
#bias = affine_map<(i, j, k) -> (0, 0, k)>
#stat = affine_map<(i, j) -> (i, 0)>

func.func private @printF32(f32)
func.func private @printNewline()

func.func @print(%v: f32) {
  call @printF32(%v) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}

// x[i, j] = (3i + j) mod 7, x[i, j, k] = (5i + 3j + k) mod 97.
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
    %c97 = arith.constant 97 : index
    %s = arith.muli %i, %c5 : index
    %t = arith.muli %j, %c3 : index
    %u = arith.addi %s, %t : index
    %v = arith.addi %u, %k : index
    %r = arith.remui %v, %c97 : index
    %ri = arith.index_cast %r : index to i32
    %f = arith.sitofp %ri : i32 to f32
    linalg.yield %f : f32
  }
  return
}

memref.global "private" @rowsums : memref<128x1xf32> = uninitialized

// Row sums of x and of x² (x as @fill2 makes it, at 32 KiB), the first into
// a global, the second at byte 0 of the arena; then x + both sums written
// at 16 KiB: its row p is x's row p - 64.
func.func @carried(%arena: memref<98304xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %o16k = arith.constant 16384 : index
  %o32k = arith.constant 32768 : index
  %carried = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %arena) -> (memref<98304xi8>) {
    scf.yield %a : memref<98304xi8>
  }
  %x = memref.view %arena[%o32k][] : memref<98304xi8> to memref<128x64xf32>
  %xd = memref.cast %x : memref<128x64xf32> to memref<?x?xf32>
  call @fill2(%xd) : (memref<?x?xf32>) -> ()
  %g = memref.get_global @rowsums : memref<128x1xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<128x1xf32>)
  %sums = memref.get_global @rowsums : memref<128x1xf32>
  linalg.generic {indexing_maps = [#id2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x64xf32>) outs(%sums : memref<128x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  %t = memref.view %arena[%c0][] : memref<98304xi8> to memref<128x1xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<128x1xf32>)
  %squares = memref.view %carried[%c0][] : memref<98304xi8> to memref<128x1xf32>
  linalg.generic {indexing_maps = [#id2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x64xf32>) outs(%squares : memref<128x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %p, %out : f32
    linalg.yield %s : f32
  }
  %shifted = memref.view %carried[%o16k][] : memref<98304xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#id2, #stat, #stat, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sums, %squares : memref<128x64xf32>, memref<128x1xf32>, memref<128x1xf32>)
      outs(%shifted : memref<128x64xf32>) {
  ^bb0(%in: f32, %s: f32, %q: f32, %o: f32):
    %a = arith.addf %in, %s : f32
    %b = arith.addf %a, %q : f32
    linalg.yield %b : f32
  }
  %c5 = arith.constant 5 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c127 = arith.constant 127 : index
  %s0 = memref.load %sums[%c0, %c0] : memref<128x1xf32>
  %s1 = memref.load %sums[%c127, %c0] : memref<128x1xf32>
  %q0 = memref.load %squares[%c5, %c0] : memref<128x1xf32>
  %y0 = memref.load %shifted[%c127, %c63] : memref<128x64xf32>
  %y1 = memref.load %shifted[%c64, %c5] : memref<128x64xf32>
  call @print(%s0) : (f32) -> ()
  call @print(%s1) : (f32) -> ()
  call @print(%q0) : (f32) -> ()
  call @print(%y0) : (f32) -> ()
  call @print(%y1) : (f32) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // Row sums of 1100 elements, accumulated into ones: 256 threads, 4
  // elements each at a time, then the last 76.
  %x = memref.alloc() : memref<3x1100xf32>
  %xd = memref.cast %x : memref<3x1100xf32> to memref<?x?xf32>
  call @fill2(%xd) : (memref<?x?xf32>) -> ()
  %rows = memref.alloc() : memref<3xf32>
  linalg.fill ins(%one : f32) outs(%rows : memref<3xf32>)
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x1100xf32>) outs(%rows : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  %r0 = memref.load %rows[%c0] : memref<3xf32>
  %r1 = memref.load %rows[%c1] : memref<3xf32>
  %r2 = memref.load %rows[%c2] : memref<3xf32>
  call @print(%r0) : (f32) -> ()
  call @print(%r1) : (f32) -> ()
  call @print(%r2) : (f32) -> ()

  // A softmax-like chain over 1024 rows of 600, one kernel: the row
  // maximum, x - max (elementwise: 2 elements per thread at a time, then
  // the last 88), its row sums.
  %sx = memref.alloc() : memref<1024x600xf32>
  %sxd = memref.cast %sx : memref<1024x600xf32> to memref<?x?xf32>
  call @fill2(%sxd) : (memref<?x?xf32>) -> ()
  %smax = memref.alloc() : memref<1024xf32>
  %z = memref.alloc() : memref<1024x600xf32>
  %zsum = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%ninf : f32) outs(%smax : memref<1024xf32>)
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sx : memref<1024x600xf32>) outs(%smax : memref<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sx, %smax : memref<1024x600xf32>, memref<1024xf32>) outs(%z : memref<1024x600xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  linalg.fill ins(%zero : f32) outs(%zsum : memref<1024xf32>)
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : memref<1024x600xf32>) outs(%zsum : memref<1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  }
  %z0 = memref.load %zsum[%c0] : memref<1024xf32>
  %c1023 = arith.constant 1023 : index
  %z1 = memref.load %zsum[%c1023] : memref<1024xf32>
  call @print(%z0) : (f32) -> ()
  call @print(%z1) : (f32) -> ()

  // Maximum over two reduction loops (20 x 30: 2 elements per thread at a
  // time, then the last 88; the loops' indices from one).
  %y = memref.alloc() : memref<2x20x30xf32>
  %yd = memref.cast %y : memref<2x20x30xf32> to memref<?x?x?xf32>
  call @fill3(%yd) : (memref<?x?x?xf32>) -> ()
  %maxes = memref.alloc() : memref<2xf32>
  linalg.fill ins(%ninf : f32) outs(%maxes : memref<2xf32>)
  linalg.generic {indexing_maps = [#id3, #first], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%y : memref<2x20x30xf32>) outs(%maxes : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  %m0 = memref.load %maxes[%c0] : memref<2xf32>
  %m1 = memref.load %maxes[%c1] : memref<2xf32>
  call @print(%m0) : (f32) -> ()
  call @print(%m1) : (f32) -> ()

  // bf16 values summed in f32 into a scalar.
  %hf = memref.alloc() : memref<4x100xf32>
  %hfd = memref.cast %hf : memref<4x100xf32> to memref<?x?xf32>
  call @fill2(%hfd) : (memref<?x?xf32>) -> ()
  %h = memref.alloc() : memref<4x100xbf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hf : memref<4x100xf32>) outs(%h : memref<4x100xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %total = memref.alloc() : memref<f32>
  memref.store %zero, %total[] : memref<f32>
  linalg.generic {indexing_maps = [#id2, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%h : memref<4x100xbf16>) outs(%total : memref<f32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.addf %out, %e : f32
    linalg.yield %s : f32
  }
  %t = memref.load %total[] : memref<f32>
  call @print(%t) : (f32) -> ()

  // A bias gradient: sums over the leading 8 x 10 loops into 1x1x40.
  %g = memref.alloc() : memref<8x10x40xf32>
  %gd = memref.cast %g : memref<8x10x40xf32> to memref<?x?x?xf32>
  call @fill3(%gd) : (memref<?x?x?xf32>) -> ()
  %bias = memref.alloc() : memref<1x1x40xf32>
  linalg.fill ins(%zero : f32) outs(%bias : memref<1x1x40xf32>)
  linalg.generic {indexing_maps = [#id3, #bias], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%g : memref<8x10x40xf32>) outs(%bias : memref<1x1x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  %c39 = arith.constant 39 : index
  %b0 = memref.load %bias[%c0, %c0, %c0] : memref<1x1x40xf32>
  %b39 = memref.load %bias[%c0, %c0, %c39] : memref<1x1x40xf32>
  call @print(%b0) : (f32) -> ()
  call @print(%b39) : (f32) -> ()

  // In one arena: u = 2t over t's place, then the chain sum = Σ_j u,
  // c = 8u - sum/8, sq = Σ_j c² (where sum was), y = 2c + sq (where u
  // was). The doubling stays out of the kernel: sum's place is t's.
  %c8 = arith.constant 8.0 : f32
  %c0125 = arith.constant 0.125 : f32
  %c2f = arith.constant 2.0 : f32
  %o32k = arith.constant 32768 : index
  %o64k = arith.constant 65536 : index
  %arena = memref.alloc() : memref<98304xi8>
  %tv = memref.view %arena[%c0][] : memref<98304xi8> to memref<128x64xf32>
  %tvd = memref.cast %tv : memref<128x64xf32> to memref<?x?xf32>
  call @fill2(%tvd) : (memref<?x?xf32>) -> ()
  %u = memref.view %arena[%o32k][] : memref<98304xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%tv : memref<128x64xf32>) outs(%u : memref<128x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %c2f : f32
    linalg.yield %d : f32
  }
  %sum = memref.view %arena[%c0][] : memref<98304xi8> to memref<128x1xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<128x1xf32>)
  linalg.generic {indexing_maps = [#id2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%u : memref<128x64xf32>) outs(%sum : memref<128x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  %cv = memref.view %arena[%o64k][] : memref<98304xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#id2, #stat, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%u, %sum : memref<128x64xf32>, memref<128x1xf32>) outs(%cv : memref<128x64xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %a = arith.mulf %in, %c8 : f32
    %b = arith.mulf %s, %c0125 : f32
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  %sq = memref.view %arena[%c0][] : memref<98304xi8> to memref<128x1xf32>
  linalg.fill ins(%zero : f32) outs(%sq : memref<128x1xf32>)
  linalg.generic {indexing_maps = [#id2, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%cv : memref<128x64xf32>) outs(%sq : memref<128x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %p, %out : f32
    linalg.yield %s : f32
  }
  %yv = memref.view %arena[%o32k][] : memref<98304xi8> to memref<128x64xf32>
  linalg.generic {indexing_maps = [#id2, #stat, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%cv, %sq : memref<128x64xf32>, memref<128x1xf32>) outs(%yv : memref<128x64xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %a = arith.mulf %in, %c2f : f32
    %d = arith.addf %a, %s : f32
    linalg.yield %d : f32
  }
  %c5 = arith.constant 5 : index
  %c17 = arith.constant 17 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %c127 = arith.constant 127 : index
  %y0 = memref.load %yv[%c0, %c0] : memref<128x64xf32>
  %y1 = memref.load %yv[%c5, %c17] : memref<128x64xf32>
  %y2 = memref.load %yv[%c127, %c63] : memref<128x64xf32>
  %y3 = memref.load %yv[%c64, %c1] : memref<128x64xf32>
  %q0 = memref.load %sq[%c0, %c0] : memref<128x1xf32>
  %q1 = memref.load %sq[%c127, %c0] : memref<128x1xf32>
  call @print(%y0) : (f32) -> ()
  call @print(%y1) : (f32) -> ()
  call @print(%y2) : (f32) -> ()
  call @print(%y3) : (f32) -> ()
  call @print(%q0) : (f32) -> ()
  call @print(%q1) : (f32) -> ()
  call @carried(%arena) : (memref<98304xi8>) -> ()
  return
}
