//===- ZeroCollectives.h - the collectives of a ZeRO step -------*- C++ -*-===//
//
// Where a data-parallel step of ZeRO stage S on N ranks (Zero.h)
// communicates, as gacc-build-step asks at each point of the step it
// assembles: each parameter gathered whole right before each use (stage 3),
// each gradient reduced where the backward computes it (summed in stage 0,
// reduce-scattered to this rank's shard in stages 1-3), the sums of the
// gradient norm and overflow probe over the shards, the optimizer run on
// this rank's shard of parameters every rank holds whole (stages 1-2) and
// the updated shards gathered again, and the losses. On one rank each is
// the identity.
//
// These are helpers of gacc-build-step rather than a pass of their own: the
// collectives sit inside what that pass builds and change its types. A
// ZeRO-3 gather replaces a parameter read inside the inlined model (the
// slot holds a shard, the model reads the whole, and gacc.load always has
// the parameter's type); a gradient is reduced after it is unscaled and
// before the norm, and stage 1 keeps the rank's own whole gradient in its
// slot while updating shards from the reduced one, so the update is built
// on shard types. A pass before gacc-build-step would reduce before
// unscaling (other numbers); one after would find the step ill-typed
// without them.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_ZEROCOLLECTIVES_H
#define GACC_PASSES_ZEROCOLLECTIVES_H

#include "passes/Zero.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gacc {

class ZeroCollectives {
public:
  explicit ZeroCollectives(TrainStepOp step)
      : zero(step.getEffectiveZero()),
        reducedPerMicroBatch(step.reducesGradientsPerMicroBatch()) {}

  int64_t getRanks() const { return zero.getRanks(); }

  /// The whole tensor of type `whole` from every rank's `shard`: a ZeRO-3
  /// parameter right before one use, or (stages 1-2) a parameter after
  /// each rank updated its shard.
  Value gather(OpBuilder &b, Location loc, Value shard,
               RankedTensorType whole) const;

  /// The training loss of the whole batch from this rank's (which
  /// gacc-accumulate normalized by the global count): their sum.
  Value reduceLoss(OpBuilder &b, Location loc, Value loss) const;
  /// The evaluation loss of the whole batch from this rank's, which is over
  /// its examples: their mean (exact, but for token_mean over unequal
  /// numbers of targets), or their sum for a sum-reduced loss of `model`.
  Value reduceEvalLoss(OpBuilder &b, Location loc, Value loss,
                       func::FuncOp model) const;

  /// The gradient this rank's optimizer uses, from the rank's own `grad` of
  /// `param`: the sum over the ranks (stage 0) or this rank's shard of it
  /// (stages 1-3). A gradient that gacc-accumulate reduced already (stages
  /// 2-3 with several micro-batches: a shard) stays as it is.
  Value reduceGradient(OpBuilder &b, Location loc, Value grad,
                       RankedTensorType param) const;
  /// Whether a gradient slot keeps this rank's own gradient, whole and not
  /// reduced (stage 1), rather than what reduceGradient returns.
  bool keepsLocalGradient() const {
    return shardsOptimizerState(zero) && !shardsGradients(zero);
  }
  /// A sum over what every rank's shards contribute (squares of the
  /// reduced gradients for the norm, the overflow probe, the row and column
  /// sums of an optimizer that reads them): stages 1-3; stage 0's reduced
  /// gradients and updates are whole on every rank.
  Value sumOverShards(OpBuilder &b, Location loc, Value sum) const;

  /// Whether each rank updates its flat shard of each parameter (stages
  /// 1-3).
  bool updatesShards() const { return shardsOptimizerState(zero); }
  /// Whether each rank updates its shard of parameters that every rank
  /// holds whole (stages 1-2): localShard before, gather after.
  bool updatesShardsOfWholeParameters() const {
    return shardsOptimizerState(zero) && !shardsParameters(zero);
  }
  /// This rank's shard of `whole`; `rank` is an index.
  Value localShard(OpBuilder &b, Location loc, Value whole, Value rank) const;

private:
  ZeroAttr zero;
  bool reducedPerMicroBatch;
};

} // namespace mlir::gacc

#endif // GACC_PASSES_ZEROCOLLECTIVES_H
