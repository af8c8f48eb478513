//===- Zero.h - ZeRO data parallelism: how state is sharded -----*- C++ -*-===//
//
// ZeRO (Rajbhandari et al. 2020) splits a data-parallel step's state over
// its ranks: stage 1 the optimizer state, stage 2 the gradients too, stage 3
// the parameters too. As DeepSpeed does, a tensor is sharded flat: its n
// elements, in row-major order, padded with zeros to a multiple of the
// ranks N, and rank r holds elements [r·s, (r+1)·s) with s = ceil(n/N).
// The step layout, gacc-build-step and the runtime share these rules.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_ZERO_H
#define GACC_PASSES_ZERO_H

#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {

/// Elements of each rank's shard of a tensor of `numElements`.
inline int64_t shardSize(int64_t numElements, int64_t ranks) {
  return (numElements + ranks - 1) / ranks;
}

/// The 1-D type of one rank's shard of `full`.
RankedTensorType shardType(RankedTensorType full, int64_t ranks);

/// What a stage keeps a shard of, per rank.
inline bool shardsOptimizerState(ZeroAttr zero) { return zero.getStage() >= 1; }
inline bool shardsGradients(ZeroAttr zero) { return zero.getStage() >= 2; }
inline bool shardsParameters(ZeroAttr zero) { return zero.getStage() >= 3; }

/// Sets the step's ZeRO `stage` and `ranks` (on every step of its module,
/// which share the inputs) and rebuilds its model and input declarations
/// for each rank's share of the batch (which `ranks` must divide). A step
/// already distributed keeps its ranks.
LogicalResult distributeStep(TrainStepOp step, int64_t stage, int64_t ranks);

/// `full` flattened and padded with zeros to ranks · shardSize elements.
Value buildPaddedFlat(OpBuilder &b, Location loc, Value full, int64_t ranks);
/// Every rank's shard of `full`, reduced (summed) over the ranks: rank r
/// gets shard r of the sum.
Value buildReduceScatter(OpBuilder &b, Location loc, Value full,
                         int64_t ranks);
/// The full tensor of type `full` from every rank's `shard`.
Value buildAllGather(OpBuilder &b, Location loc, Value shard,
                     RankedTensorType full, int64_t ranks);
/// This rank's shard of `full`, which every rank holds whole; `rank` is an
/// index.
Value buildLocalShard(OpBuilder &b, Location loc, Value full, Value rank,
                      int64_t ranks);

/// A run of `length` consecutive items (elements, or rows of them) of a
/// flattened tensor, from item `start` (an index, at most `maxStart`), seen
/// in groups of `groupSize` items (the rows of a matrix, the matrices of a
/// batch of them): the `count` groups a run can overlap, from group
/// `first`. An update that reads rows or columns of a parameter (Adafactor's
/// factored moments) sees its flat shard so: the run is the shard, whose
/// start depends on the rank.
class GroupWindow {
public:
  GroupWindow(OpBuilder &b, Location loc, Value start, int64_t maxStart,
              int64_t length, int64_t groupSize);
  /// The groups of elements that rank `rank` (an index) of `ranks` holds in
  /// its flat shard of `shardElements` elements.
  static GroupWindow ofShard(OpBuilder &b, Location loc, Value rank,
                             int64_t ranks, int64_t shardElements,
                             int64_t groupSize);

  /// [count, groupSize, ...]: `run` ([length, ...]) in its groups, zeros
  /// elsewhere.
  Value spread(Value run) const;
  /// The run ([length, ...]) from its groups ([count, groupSize, ...]).
  Value collect(Value groups) const;
  /// [paddedGroups, ...]: `perGroup` ([count, ...]) at group `first`, zeros
  /// elsewhere; summed over the ranks, every group's total.
  Value place(Value perGroup) const;
  /// [count, ...]: the run's groups of `all` ([groups, ...], no more than
  /// paddedGroups), zeros past its end.
  Value take(Value all) const;

  /// The first group, an index, and at most which one it is.
  Value first;
  int64_t maxFirst;
  int64_t count;
  /// Groups that every window lies in.
  int64_t paddedGroups;

private:
  OpBuilder &b;
  Location loc;
  /// The run's start in its first group, an index.
  Value offset;
  int64_t length, groupSize;
};

} // namespace mlir::gacc

#endif // GACC_PASSES_ZERO_H
