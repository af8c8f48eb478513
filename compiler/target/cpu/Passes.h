//===- Passes.h - CPU target passes -------------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_CPU_PASSES_H
#define GACC_COMPILER_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/target/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/target/cpu/Passes.h.inc"

struct MatmulShape {
  bool transposeLhs, transposeRhs;
};

/// Recognizes the contraction convert-gacc-to-linalg emits for gacc.matmul
/// (on tensors or buffers): loops (batch..., m, n, k) with k the only
/// reduction, C[batch..., m, n] += A[batch..., m|k, k|m] * B[batch..., k|n,
/// n|k], batch dimensions looped or broadcast; A and B may be narrower than C
/// and widened in the body (f16/bf16 operands, f32 accumulation). Returns
/// the transposes.
std::optional<MatmulShape> matchMatmul(linalg::GenericOp op);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CPU_PASSES_H
