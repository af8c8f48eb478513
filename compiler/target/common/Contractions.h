//===- Contractions.h - named contractions read as matmuls ------*- C++ -*-===//
//
// convert-gacc-to-linalg lowers gacc.matmul to a named contraction
// (linalg.contract) and keeps it named; the targets that lower matmuls
// their own way (BLAS calls, tiled kernels) read its indexing maps here.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_COMMON_CONTRACTIONS_H
#define GACC_COMPILER_TARGET_COMMON_CONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::gacc {

/// How a contraction reads its operands as matrices.
struct MatmulShape {
  bool transposeLhs, transposeRhs;
};

/// The shape of `op` when it is a named floating-point contraction
/// (`ContractionOpInterface`: linalg.contract, linalg.matmul,
/// linalg.batch_matmul, ...) laid out as gacc.matmul's: loops
/// (batch..., m, n, k), C[batch..., m, n] += A[..., m|k, k|m] ·
/// B[..., k|n, n|k], each of A and B reading an increasing subsequence of
/// the batch loops (the others broadcast). Otherwise std::nullopt.
std::optional<MatmulShape> getMatmulShape(linalg::LinalgOp op);

/// The batch loops `map` (an operand's map of such a contraction) reads,
/// in order: its results but the last two.
SmallVector<unsigned> getBatchLoops(AffineMap map);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_COMMON_CONTRACTIONS_H
