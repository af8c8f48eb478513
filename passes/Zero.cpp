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

/// `size` slices of `source` along dimension 0 from `offset` (an index).
static Value extractLeading(OpBuilder &b, Location loc, Value source,
                            Value offset, int64_t size) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = size;
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  offsets[0] = offset;
  return tensor::ExtractSliceOp::create(
      b, loc, type.clone(shape), source, offsets,
      getAsIndexOpFoldResult(b.getContext(), shape),
      SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1)));
}

/// Where rank `rank`'s shard of `shardElements` starts in the flat tensor
/// (an index).
static Value shardStart(OpBuilder &b, Location loc, Value rank,
                        int64_t shardElements) {
  return arith::MulIOp::create(
      b, loc, rank, arith::ConstantIndexOp::create(b, loc, shardElements));
}

Value gacc::buildLocalShard(OpBuilder &b, Location loc, Value full, Value rank,
                            int64_t ranks) {
  auto type = cast<RankedTensorType>(full.getType());
  int64_t size = shardSize(type.getNumElements(), ranks);
  Value flat = buildPaddedFlat(b, loc, full, ranks);
  return extractLeading(b, loc, flat, shardStart(b, loc, rank, size), size);
}

/// Zeros of `shape` with `source` at `offset` (an index) along dimension 0.
static Value insertLeading(OpBuilder &b, Location loc, Value source,
                           ArrayRef<int64_t> shape, Value offset) {
  auto type = cast<RankedTensorType>(source.getType());
  Value zeros = buildSplat(b, loc, type.clone(shape), 0.0);
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  offsets[0] = offset;
  return tensor::InsertSliceOp::create(
      b, loc, source, zeros, offsets,
      getAsIndexOpFoldResult(b.getContext(), type.getShape()),
      SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1)));
}

/// `shape` with dimension 0 replaced by `leading`.
static SmallVector<int64_t> withLeading(ArrayRef<int64_t> leading,
                                        ArrayRef<int64_t> shape) {
  SmallVector<int64_t> result(leading);
  llvm::append_range(result, shape.drop_front());
  return result;
}

GroupWindow::GroupWindow(OpBuilder &b, Location loc, Value start,
                         int64_t maxStart, int64_t length, int64_t groupSize)
    : maxFirst(maxStart / groupSize),
      count(llvm::divideCeil(length + groupSize - 1, groupSize)),
      paddedGroups(maxFirst + count), b(b), loc(loc), length(length),
      groupSize(groupSize) {
  Value size = arith::ConstantIndexOp::create(b, loc, groupSize);
  first = arith::DivUIOp::create(b, loc, start, size);
  offset = arith::SubIOp::create(b, loc, start,
                                 arith::MulIOp::create(b, loc, first, size));
}

GroupWindow GroupWindow::ofShard(OpBuilder &b, Location loc, Value rank,
                                 int64_t ranks, int64_t shardElements,
                                 int64_t groupSize) {
  return GroupWindow(b, loc, shardStart(b, loc, rank, shardElements),
                     (ranks - 1) * shardElements, shardElements, groupSize);
}

Value GroupWindow::spread(Value run) const {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(run.getType()).getShape();
  Value flat = insertLeading(b, loc, run,
                             withLeading({count * groupSize}, shape), offset);
  return buildReshape(b, loc, flat, withLeading({count, groupSize}, shape));
}

Value GroupWindow::collect(Value groups) const {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(groups.getType()).getShape().drop_front();
  Value flat =
      buildReshape(b, loc, groups, withLeading({count * groupSize}, shape));
  return extractLeading(b, loc, flat, offset, length);
}

Value GroupWindow::place(Value perGroup) const {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(perGroup.getType()).getShape();
  return insertLeading(b, loc, perGroup, withLeading({paddedGroups}, shape),
                       first);
}

Value GroupWindow::take(Value all) const {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(all.getType()).getShape();
  assert(shape[0] <= paddedGroups && "more groups than any window reaches");
  SmallVector<int64_t> low(shape.size(), 0), high(shape.size(), 0);
  high[0] = paddedGroups - shape[0];
  Value padded = high[0] ? buildPad(b, loc, all, low, high) : all;
  return extractLeading(b, loc, padded, first, count);
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
