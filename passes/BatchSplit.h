//===- BatchSplit.h - a model specialized to a micro-batch ------*- C++ -*-===//
//
// Gradient accumulation runs the model on micro-batches. This analysis
// follows the batch dimension from the inputs (dimension 0) through every
// op and rebuilds the model for a smaller batch. It refuses, with a located
// error, every op whose result depends on how the batch is split: any
// reduction, normalization, contraction, reshape or slice that mixes
// examples. The loss (a cross_entropy or mse_loss result) is the one
// reduction over examples allowed; the micro-batch model returns its sum,
// which the accumulator normalizes by the global count.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_BATCHSPLIT_H
#define GACC_PASSES_BATCHSPLIT_H

#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {

/// Builds `name`, a copy of `model` for batch `micro` instead of the
/// global `batch`: its arguments are the gacc.input tensors (declaration
/// order, dimension 0 of size `micro`), it reads parameters with gacc.load,
/// and it returns the loss summed over its examples, then the model's other
/// results (each with the batch in dimension 0).
FailureOr<func::FuncOp> specializeToMicroBatch(func::FuncOp model,
                                               int64_t batch, int64_t micro,
                                               StringRef name);

/// Rebuilds the model of `step` and its input declarations for `batch`
/// examples per rank (the same analysis; the loss keeps its reduction);
/// the steps are left as they are.
LogicalResult resizeModelBatch(TrainStepOp step, int64_t batch);

/// Rebuilds the model of `step` and its input declarations for a global
/// batch of `batch` examples (split over the step's ranks, which must
/// divide it) and sets the batch size of every step of that model; a
/// micro-batch size above the new batch of a rank becomes that batch.
LogicalResult resizeBatch(TrainStepOp step, int64_t batch);

} // namespace mlir::gacc

#endif // GACC_PASSES_BATCHSPLIT_H
