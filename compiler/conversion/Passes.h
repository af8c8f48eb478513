//===- Passes.h - gacc conversion passes --------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_CONVERSION_PASSES_H
#define GACC_COMPILER_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/conversion/Passes.h.inc"

/// Patterns lowering each family of primitive gacc ops.
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);
void populateStructuredToLinalgPatterns(RewritePatternSet &patterns);
void populateShapeToTensorPatterns(RewritePatternSet &patterns);
void populateIndexOpsToLinalgPatterns(RewritePatternSet &patterns);
/// Collectives to calls of the runtime's communicator.
void populateCollectivesToCallsPatterns(RewritePatternSet &patterns);

} // namespace mlir::gacc

#endif // GACC_COMPILER_CONVERSION_PASSES_H
