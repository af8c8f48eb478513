//===- Passes.h - CPU target passes -------------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_CPU_PASSES_H
#define GACC_COMPILER_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/target/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/target/cpu/Passes.h.inc"

/// The attribute convert-gacc-to-linalg puts on matmul contractions: a
/// dictionary with unit entries `transpose_lhs` and `transpose_rhs`.
inline constexpr llvm::StringLiteral kMatmulAttrName = "gacc.matmul";

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CPU_PASSES_H
