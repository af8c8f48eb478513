//===- Zero.cpp - ZeRO data parallelism --------------------------------------===//

#include "passes/Zero.h"
#include "dialects/gacc/GaccBuilders.h"
#include "passes/BatchSplit.h"
#include "passes/Passes.h"
#include "mlir/IR/Verifier.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_ZERO
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

RankedTensorType gacc::shardType(RankedTensorType full, int64_t ranks) {
  return RankedTensorType::get({shardSize(full.getNumElements(), ranks)},
                               full.getElementType());
}

LogicalResult gacc::distributeStep(TrainStepOp step, int64_t stage,
                                   int64_t ranks) {
  ZeroAttr current = step.getEffectiveZero();
  if (current.getRanks() != 1 && static_cast<int64_t>(current.getRanks()) != ranks)
    return step.emitOpError("is already distributed over ")
           << current.getRanks() << " ranks";
  auto zero = ZeroAttr::getChecked([&] { return step.emitOpError(); },
                                   step.getContext(), static_cast<uint64_t>(stage),
                                   static_cast<uint64_t>(ranks));
  if (!zero)
    return failure();
  if (step.getBatchSize() % ranks != 0)
    return step.emitOpError("batch_size (")
           << step.getBatchSize() << ") must divide evenly over " << ranks
           << " ranks";
  if (current.getRanks() == 1 && ranks != 1) {
    int64_t rankBatch = step.getBatchSize() / ranks;
    if (step.getMicroBatchSize() && *step.getMicroBatchSize() > rankBatch)
      return step.emitOpError("micro_batch_size (")
             << *step.getMicroBatchSize()
             << ") exceeds the batch of each of " << ranks << " ranks ("
             << rankBatch << ")";
    if (failed(resizeModelBatch(step, rankBatch)))
      return failure();
  }
  // The inputs are the module's: every step reads the same slice.
  for (TrainStepOp other :
       step->getParentOfType<ModuleOp>().getOps<TrainStepOp>())
    other.setZeroAttr(zero);
  return mlir::verify(step->getParentOp());
}

Value gacc::buildPaddedFlat(OpBuilder &b, Location loc, Value full,
                            int64_t ranks) {
  auto type = cast<RankedTensorType>(full.getType());
  int64_t n = type.getNumElements();
  Value flat = type.getRank() == 1 ? full : buildReshape(b, loc, full, {n});
  int64_t padding = shardSize(n, ranks) * ranks - n;
  return padding ? buildPad(b, loc, flat, {0}, {padding}) : flat;
}

Value gacc::buildReduceScatter(OpBuilder &b, Location loc, Value full,
                               int64_t ranks) {
  auto type = cast<RankedTensorType>(full.getType());
  return ReduceScatterOp::create(b, loc, shardType(type, ranks),
                                 buildPaddedFlat(b, loc, full, ranks),
                                 CollectiveReduction::sum, 0, ranks);
}

Value gacc::buildAllGather(OpBuilder &b, Location loc, Value shard,
                           RankedTensorType full, int64_t ranks) {
  int64_t n = full.getNumElements();
  int64_t padded = shardSize(n, ranks) * ranks;
  Value flat = AllGatherOp::create(
      b, loc, RankedTensorType::get({padded}, full.getElementType()), shard, 0,
      ranks);
  if (padded != n)
    flat = buildSlice(b, loc, flat, {0}, {n});
  return full.getRank() == 1 ? flat : buildReshape(b, loc, flat, full.getShape());
}

Value gacc::buildLocalShard(OpBuilder &b, Location loc, Value full, Value rank,
                            int64_t ranks) {
  auto type = cast<RankedTensorType>(full.getType());
  RankedTensorType shard = shardType(type, ranks);
  Value flat = buildPaddedFlat(b, loc, full, ranks);
  Value offset = arith::MulIOp::create(
      b, loc, rank, arith::ConstantIndexOp::create(b, loc, shard.getDimSize(0)));
  return tensor::ExtractSliceOp::create(
      b, loc, shard, flat, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{b.getIndexAttr(shard.getDimSize(0))},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

namespace {
struct ZeroPass : public gacc::impl::ZeroBase<ZeroPass> {
  using ZeroBase::ZeroBase;
  void runOnOperation() override {
    for (TrainStepOp step :
         llvm::make_early_inc_range(getOperation().getOps<TrainStepOp>())) {
      ZeroAttr current = step.getEffectiveZero();
      int64_t newStage = stage < 0 ? current.getStage() : stage;
      int64_t newRanks = ranks < 1 ? current.getRanks() : ranks;
      if (failed(distributeStep(step, newStage, newRanks)))
        return signalPassFailure();
    }
  }
};
} // namespace
