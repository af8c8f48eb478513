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

/// The gradient of an embedding table, `one_hot(ids)ᵀ · dy`, as targets
/// that add rows of dy instead of multiplying see it.
struct EmbeddingGradient {
  /// The generic that wrote the product's lhs, whose only input is `ids`.
  linalg::GenericOp oneHot;
  /// Read from the batch arena, which the step never writes or frees: still
  /// there at the product, after the one-hot, their last reader as far as
  /// buffer planning knew.
  Value ids;
  /// Nothing but the product reads the one-hot (a planned workspace view
  /// may be shared with other lifetimes), so that it can go.
  bool oneHotOnlyUse;
};

/// `op` as an embedding's gradient: a contraction marked
/// gacc.embedding_gradient (loops (v, d, p), C[v, d] += A[p, v] · B[p, d])
/// whose A the one-hot of contiguous batch ids wrote, through reshaping
/// views, as the nearest op before it that touches A. std::nullopt when
/// the IR is not that.
std::optional<EmbeddingGradient> getEmbeddingGradient(linalg::LinalgOp op);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_COMMON_CONTRACTIONS_H
