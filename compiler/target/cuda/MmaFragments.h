//===- MmaFragments.h - mma.sync operands in private memory -----*- C++ -*-===//
//
// The tensor-core kernels (TileMatmuls, FlashAttention) multiply m16n8k16
// tiles of f16 or bf16 into f32 with mma.sync, their A and B fragments
// read from shared tiles with ldmatrix. Fragments pass through a private
// buffer (registers once LLVM promotes it), as values must across the
// barriers of the CPU emulation of ldmatrix and mma.sync. In PTX's
// layouts, with g = lane / 4 and t = lane % 4: register r of A holds
// A[g + 8 (r % 2)][2t + 8 (r / 2) + e], register r of B holds
// B[2t + 8r + e][g], e = 0, 1 (the low half first); element i of C is
// C[g + 8 (i / 2)][2t + i % 2].
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_CUDA_MMAFRAGMENTS_H
#define GACC_COMPILER_TARGET_CUDA_MMAFRAGMENTS_H

#include "compiler/target/cuda/KernelIndexing.h"

namespace mlir::gacc {

constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

class MmaFragments {
public:
  /// `slots` fragments of four registers of `element` (f16 or bf16) per
  /// thread of `launch`.
  MmaFragments(KernelIndexBuilder &k, gpu::LaunchOp launch, int64_t slots,
               Type element);

  /// Four 8x8 matrices of `tile` into `slot`, one ldmatrix: this lane gives
  /// the address `at` of row lane % 8 of matrix lane / 8; `transpose` reads
  /// them transposed (ldmatrix.trans, from a k-major tile).
  void load(Value tile, ValueRange at, bool transpose, int64_t slot);
  /// Register `reg` of `slot` from two f32 values, rounded (an
  /// accumulator's elements as an operand).
  void store(Value low, Value high, int64_t slot, int64_t reg);
  /// The four registers of `slot`: vector<2xf16>, or i32 for bf16 (NVVM's
  /// operand types).
  SmallVector<Value> registers(int64_t slot);
  /// B's two registers of n8 tile `half` of the pair of n8 tiles in `slot`.
  SmallVector<Value> pair(int64_t slot, int64_t half);
  /// acc[at..., 0..4) += A · B for one m16n8k16 tile.
  void mma(ArrayRef<Value> a, ArrayRef<Value> b, Value acc,
           ArrayRef<int64_t> at);

private:
  KernelIndexBuilder &k;
  Type element;
  Value buffer;
};

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CUDA_MMAFRAGMENTS_H
