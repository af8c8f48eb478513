//===- ZeroCollectives.cpp - the collectives of a ZeRO step ---------------===//

#include "passes/ZeroCollectives.h"

using namespace mlir;
using namespace mlir::gacc;

Value ZeroCollectives::gather(OpBuilder &b, Location loc, Value shard,
                              RankedTensorType whole) const {
  return buildAllGather(b, loc, shard, whole, getRanks());
}

Value ZeroCollectives::reduceLoss(OpBuilder &b, Location loc,
                                  Value loss) const {
  if (getRanks() == 1)
    return loss;
  return AllReduceOp::create(b, loc, loss, CollectiveReduction::sum,
                             getRanks());
}

Value ZeroCollectives::reduceEvalLoss(OpBuilder &b, Location loc, Value loss,
                                      func::FuncOp model) const {
  if (getRanks() == 1)
    return loss;
  Operation *lossOp =
      model.getBody().front().getTerminator()->getOperand(0).getDefiningOp();
  auto ce = dyn_cast_or_null<CrossEntropyOp>(lossOp);
  auto mse = dyn_cast_or_null<MseLossOp>(lossOp);
  bool sum = (ce && ce.getReduction() == LossReduction::sum) ||
             (mse && mse.getReduction() == LossReduction::sum);
  return AllReduceOp::create(
      b, loc, loss, sum ? CollectiveReduction::sum : CollectiveReduction::mean,
      getRanks());
}

Value ZeroCollectives::reduceGradient(OpBuilder &b, Location loc, Value grad,
                                      RankedTensorType param) const {
  // (gacc-build-step verified that such a gradient is this rank's shard.)
  if (reducedPerMicroBatch)
    return grad;
  if (shardsOptimizerState(zero))
    return buildReduceScatter(b, loc, grad, getRanks());
  if (getRanks() > 1)
    return AllReduceOp::create(b, loc, grad, CollectiveReduction::sum,
                               getRanks());
  return grad;
}

Value ZeroCollectives::sumOverShards(OpBuilder &b, Location loc,
                                     Value sum) const {
  if (!shardsOptimizerState(zero) || getRanks() == 1)
    return sum;
  return AllReduceOp::create(b, loc, sum, CollectiveReduction::sum,
                             getRanks());
}

Value ZeroCollectives::localShard(OpBuilder &b, Location loc, Value whole,
                                  Value rank) const {
  return buildLocalShard(b, loc, whole, rank, getRanks());
}
