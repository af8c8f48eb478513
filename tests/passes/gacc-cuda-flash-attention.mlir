// RUN: gacc-opt %s -split-input-file -verify-diagnostics --gacc-cuda-flash-attention | FileCheck %s

// The forward: a block of 4 warps per 64 queries of each (batch, head)
// (2 x 6 blocks), Q, K and V tiles of 64 rows padded by 8 elements and the
// quads' partial maxima and sums in workgroup memory; per thread the
// scores (8 n8 tiles), the output (4 n8 tiles, head size 32) and each
// row's maximum and sum. Causal: the loop over key tiles stops at the
// block's own. Per key tile: two barriers around the tiles' loads, the
// scores (K = 32: 2 x 8 mma.sync), the quads' maxima after a barrier, the
// probabilities (exp) into the product with V (K = 64: 4 x 4 mma.sync, B
// read transposed). Then each row's sum over its quad, the output divided
// by it and stored, and the log-sum-exp from one lane of the quad.
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch blocks
// CHECK-SAME: = %c2, %{{.*}} = %c6, %{{.*}} = %c1{{.*}}) threads
// CHECK-SAME: = %c32, %{{.*}} = %c4, %{{.*}} = %c1) workgroup(%[[QT:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[KT:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[QUAD:.*]] : memref<4x16x4xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%[[S:.*]] : memref<8x4xf32, #gpu.address_space<private>>, %[[O:.*]] : memref<4x4xf32, #gpu.address_space<private>>, %{{.*}} : memref<2x8xbf16, #gpu.address_space<private>>, %[[STATE:.*]] : memref<2x2xf32, #gpu.address_space<private>>)
// CHECK: vector.load %arg0{{.*}} : memref<2x3x128x32xbf16>, vector<8xbf16>
// CHECK: arith.minui
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: vector.load %arg1
// CHECK: vector.load %arg2
// CHECK: gpu.barrier
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK: memref.store %{{.*}}, %[[QUAD]]
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK: nvgpu.ldmatrix %[[VT]][{{.*}}] {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK: }
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg3[
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %arg4[
// CHECK: gpu.terminator
// CHECK-NOT: gacc.attention
func.func @forward(%q: memref<2x3x128x32xbf16>, %k: memref<2x3x128x32xbf16>,
                   %v: memref<2x3x128x32xbf16>, %o: memref<2x3x128x32xbf16>,
                   %lse: memref<2x3x128xf32>) {
  gacc.attention %q, %k, %v into %o, %lse scale = 0.17677669529663687 causal
      : memref<2x3x128x32xbf16>, memref<2x3x128x32xbf16>, memref<2x3x128x32xbf16>
      into memref<2x3x128x32xbf16>, memref<2x3x128xf32>
  return
}

// -----

// The backward: dQ's kernel (a block per 64 queries, Q and dO tiles kept,
// K and V loaded per key tile) and dK's and dV's (a block per 64 keys, all
// query tiles: not causal). The key bias is read per key in both.
// CHECK-LABEL: func.func @backward
// CHECK: gpu.launch
// CHECK-SAME: private(%{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<2x8xf16, {{.*}}>, %{{.*}} : memref<2x2xf32, {{.*}}>)
// CHECK-NOT: arith.minui
// CHECK: memref.load %arg6[
// CHECK: memref.store %{{.*}}, %arg7[
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-SAME: private(%{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<8x4xf32, {{.*}}>, %{{.*}} : memref<2x8xf16, {{.*}}>)
// CHECK: memref.load %arg6[
// CHECK: memref.store %{{.*}}, %arg8[
// CHECK: memref.store %{{.*}}, %arg9[
// CHECK: gpu.terminator
// CHECK-NOT: gacc.attention_grad
func.func @backward(%q: memref<1x2x64x64xf16>, %k: memref<1x2x128x64xf16>,
                    %v: memref<1x2x128x64xf16>, %do: memref<1x2x64x64xf16>,
                    %lse: memref<1x2x64xf32>, %delta: memref<1x2x64xf32>,
                    %bias: memref<1x128xf32>, %dq: memref<1x2x64x64xf16>,
                    %dk: memref<1x2x128x64xf16>, %dv: memref<1x2x128x64xf16>) {
  gacc.attention_grad %q, %k, %v, %do, %lse, %delta key_bias %bias
      into %dq, %dk, %dv scale = 1.250000e-01
      : memref<1x2x64x64xf16>, memref<1x2x128x64xf16>, memref<1x2x128x64xf16>,
        memref<1x2x64x64xf16>, memref<1x2x64xf32>, memref<1x2x64xf32>,
        memref<1x128xf32> into memref<1x2x64x64xf16>, memref<1x2x128x64xf16>,
        memref<1x2x128x64xf16>
  return
}

// -----

func.func @f32(%q: memref<1x1x64x16xf32>, %o: memref<1x1x64x16xf32>,
               %lse: memref<1x1x64xf32>) {
  // expected-error @+1 {{'gacc.attention' op cannot run on CUDA: it has f32 or f64 operands (the kernels take f16 and bf16)}}
  gacc.attention %q, %q, %q into %o, %lse scale = 1.0
      : memref<1x1x64x16xf32>, memref<1x1x64x16xf32>, memref<1x1x64x16xf32>
      into memref<1x1x64x16xf32>, memref<1x1x64xf32>
  return
}

// -----

func.func @length(%q: memref<1x1x96x16xbf16>, %o: memref<1x1x96x16xbf16>,
                  %lse: memref<1x1x96xf32>) {
  // expected-error @+1 {{'gacc.attention' op cannot run on CUDA: it has lengths that are not multiples of 64}}
  gacc.attention %q, %q, %q into %o, %lse scale = 1.0
      : memref<1x1x96x16xbf16>, memref<1x1x96x16xbf16>, memref<1x1x96x16xbf16>
      into memref<1x1x96x16xbf16>, memref<1x1x96xf32>
  return
}
