//===- Passes.h - gacc passes -------------------------------------*- C++ -*-===//
#ifndef GACC_PASSES_PASSES_H
#define GACC_PASSES_PASSES_H

#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The attribute on a gradient function that names, in order, the
/// parameters its trailing results are the gradients of.
inline constexpr llvm::StringLiteral kGradientsAttrName = "gacc.gradients";

} // namespace mlir::gacc

#endif // GACC_PASSES_PASSES_H
