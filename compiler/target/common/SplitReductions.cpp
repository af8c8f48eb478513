//===- SplitReductions.cpp - long sums with few outputs as partial sums ---===//

#include "compiler/target/common/Passes.h"
#include "dialects/gacc/GaccShapes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "passes/ArenaViews.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using utils::IteratorType;

namespace {
/// Whether `generic` adds into its one output (`out + x`, the output's
/// block argument used once) indexed by its parallel loops alone, each once
/// (a projected permutation; a 0 for a dimension of 1, as in `[1, 1, C]`,
/// or of any size with `padded`, as a partial sum's line), over buffers of
/// static shapes, with at least one reduction loop, without reading its
/// output through an input.
bool isSplittableSum(linalg::GenericOp generic, bool padded = false) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() == 0 ||
      !generic->getParentOfType<FunctionOpInterface>())
    return false;
  for (Value operand : generic->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return false;
  }
  Value out = generic.getDpsInitOperand(0)->get();
  Type element = cast<MemRefType>(out.getType()).getElementType();
  if (!isa<FloatType>(element) || element.getIntOrFloatBitWidth() % 8)
    return false;
  AffineMap outMap = generic.getIndexingMapsArray().back();
  if (!outMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return false;
  for (auto [i, result] : llvm::enumerate(outMap.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (dim ? generic.getIteratorTypesArray()[dim.getPosition()] !=
                  IteratorType::parallel
            : !padded && cast<MemRefType>(out.getType()).getDimSize(i) != 1)
      return false;
  }
  for (Value input : generic.getDpsInputs())
    if (gacc::mayOverlap(input, out))
      return false;
  Block &body = generic.getRegion().front();
  BlockArgument acc = generic.getRegionOutputArgs()[0];
  auto sum = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  return sum && acc.hasOneUse() && (sum.getLhs() == acc || sum.getRhs() == acc);
}

/// Whether `sum` reads down columns: the last dimension of every input,
/// its contiguous one, is an output's loop or broadcast (a constant), and
/// of one input at least a loop. Then the threads of consecutive outputs
/// read consecutive elements, and a partial sum is a run of rows.
bool readsDownColumns(linalg::GenericOp sum) {
  bool column = false;
  for (OpOperand *input : sum.getDpsInputOperands()) {
    AffineMap map = sum.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0)
      continue;
    AffineExpr last = map.getResults().back();
    if (isa<AffineConstantExpr>(last))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(last);
    if (!dim || sum.getIteratorTypesArray()[dim.getPosition()] !=
                    IteratorType::parallel)
      return false;
    column = true;
  }
  return column;
}

/// Whether every use of loop `dim` in `maps` is a whole result (`d_dim`,
/// not `d_dim + d_j`), so that the operands can be reshaped to split it.
bool isSplittableLoop(ArrayRef<AffineMap> maps, unsigned dim) {
  for (AffineMap map : maps)
    for (AffineExpr result : map.getResults())
      if (result.isFunctionOfDim(dim) && !isa<AffineDimExpr>(result))
        return false;
  return true;
}

/// The most elements of a sum's lanes' buffer, on the stack: 64 KB of f32.
constexpr int64_t kMaxLaneElements = 16384;

/// The largest divisor of `range` up to `limit` (1 when there is none).
int64_t largestDivisor(int64_t range, int64_t limit) {
  for (int64_t d = std::min(range, limit); d > 1; --d)
    if (range % d == 0)
      return d;
  return 1;
}

/// A zeroed buffer of `type` for the partial sums of `sum`: allocated on
/// the stack of its function (outside the memory plan; shareScratch then
/// gives all of a kind one buffer), not of each iteration of a loop around
/// the sum (the micro-batches), and cleared just before it.
memref::AllocaOp zeroedScratch(OpBuilder &b, linalg::GenericOp sum,
                               MemRefType type, int64_t alignment) {
  auto func = sum->getParentOfType<FunctionOpInterface>();
  OpBuilder atStart = OpBuilder::atBlockBegin(&func.getFunctionBody().front());
  auto scratch = memref::AllocaOp::create(atStart, sum.getLoc(), type,
                                          atStart.getI64IntegerAttr(alignment));
  Value zero = arith::ConstantOp::create(
      b, sum.getLoc(), b.getZeroAttr(type.getElementType()));
  linalg::FillOp::create(b, sum.getLoc(), zero, scratch.getResult());
  return scratch;
}

/// Adds `partials` into what `total` holds, `maps` and `iterators` saying
/// how (the partial sums' loops reductions, in order).
void addInto(OpBuilder &b, Location loc, Value partials, Value total,
             ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators) {
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{partials}, ValueRange{total}, maps,
      iterators, [&](OpBuilder &nested, Location at, ValueRange args) {
        Value added = arith::AddFOp::create(nested, at, args[1], args[0]);
        linalg::YieldOp::create(nested, at, added);
      });
}

struct SplitReductionsPass
    : public gacc::impl::SplitReductionsBase<SplitReductionsPass> {
  using SplitReductionsBase::SplitReductionsBase;

  void runOnOperation() override {
    shareScratch(rewriteSums(/*padded=*/false, [&](linalg::GenericOp sum) {
      return split(sum);
    }));
    // The partial sums' loops included. (The lanes' buffers share one
    // buffer apart from the partial sums': a sum's lanes are live while its
    // partial sums are.)
    if (laneBytes > 0)
      shareScratch(rewriteSums(/*padded=*/true, [&](linalg::GenericOp sum) {
        return sumInLanes(sum);
      }));
  }

  /// Applies `rewrite` to every sum (isSplittableSum) of the operation;
  /// returns the buffers it made.
  SmallVector<memref::AllocaOp>
  rewriteSums(bool padded,
              function_ref<memref::AllocaOp(linalg::GenericOp)> rewrite) {
    SmallVector<linalg::GenericOp> sums;
    getOperation()->walk([&](linalg::GenericOp generic) {
      if (isSplittableSum(generic, padded))
        sums.push_back(generic);
    });
    SmallVector<memref::AllocaOp> buffers;
    for (linalg::GenericOp sum : sums)
      if (memref::AllocaOp buffer = rewrite(sum))
        buffers.push_back(buffer);
    return buffers;
  }

  /// Makes the partial sums of each function views of one buffer, as large
  /// as the largest of them: each is used only from its fill to the sum of
  /// its partial sums, and the sums run one after another. (GPT-2-small's
  /// column sums on a GPU would otherwise hold 10 MB a layer of device
  /// memory for the whole step, outside the memory plan.)
  void shareScratch(ArrayRef<memref::AllocaOp> partials) {
    llvm::MapVector<Block *, SmallVector<memref::AllocaOp>> byFunction;
    for (memref::AllocaOp partial : partials)
      byFunction[partial->getBlock()].push_back(partial);
    for (auto &[entry, allocas] : byFunction) {
      if (allocas.size() < 2)
        continue;
      int64_t bytes = 0;
      uint64_t alignment = 1;
      for (memref::AllocaOp alloca : allocas) {
        bytes = std::max(bytes, *gacc::getStaticByteSize(alloca.getType()));
        alignment =
            std::max<uint64_t>(alignment, alloca.getAlignment().value_or(1));
      }
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      Location loc = allocas.front().getLoc();
      Value scratch = memref::AllocaOp::create(
          b, loc, MemRefType::get({bytes}, b.getI8Type()),
          b.getI64IntegerAttr(alignment));
      Value start = arith::ConstantIndexOp::create(b, loc, 0);
      for (memref::AllocaOp alloca : allocas) {
        b.setInsertionPoint(alloca);
        alloca.replaceAllUsesWith(
            memref::ViewOp::create(b, alloca.getLoc(), alloca.getType(),
                                   scratch, start, ValueRange())
                .getResult());
        alloca.erase();
      }
    }
  }

  /// Sums `sum` in vector lanes when its innermost loops are reductions
  /// over contiguous memory: those loops become one of R elements (a
  /// collapse of the operands that index them), split into R / `lanes`
  /// rows of `lanes` columns, the columns a parallel innermost loop into a
  /// buffer of one sum per lane and output; a last generic adds each
  /// output's lanes in order to what the output held. A sum into one
  /// accumulator waits for each addition before the next (4 cycles an
  /// element): resnet18's gradient norm summed 11 M squares that way, 10%
  /// of its step. Returns the lanes' buffer, if it did.
  memref::AllocaOp sumInLanes(linalg::GenericOp sum) {
    Value total = sum.getDpsInitOperand(0)->get();
    auto totalType = cast<MemRefType>(total.getType());
    Type element = totalType.getElementType();
    int64_t lanes = laneBytes / (element.getIntOrFloatBitWidth() / 8);
    SmallVector<int64_t> ranges = sum.getStaticLoopRanges();
    SmallVector<IteratorType> iterators = sum.getIteratorTypesArray();
    unsigned loops = ranges.size();
    // The innermost reduction loops that each input indexes, if at all, as
    // its last dimensions, in order and contiguous.
    unsigned first = loops;
    while (first > 0 && iterators[first - 1] == IteratorType::reduction)
      --first;
    auto indexesInner = [&](OpOperand *input, unsigned from) {
      AffineMap map = sum.getMatchingIndexingMap(input);
      ArrayRef<AffineExpr> results = map.getResults();
      unsigned inner = loops - from;
      if (results.size() < inner)
        return false;
      for (unsigned i = 0; i < inner; ++i)
        if (results[results.size() - inner + i] !=
            getAffineDimExpr(from + i, sum.getContext()))
          return false;
      auto type = cast<MemRefType>(input->get().getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)))
        return false;
      for (int64_t d = type.getRank() - 1, expected = 1;
           d >= type.getRank() - inner; --d) {
        if (strides[d] != expected)
          return false;
        expected *= type.getDimSize(d);
      }
      return true;
    };
    auto readsInner = [&](OpOperand *input, unsigned from) {
      for (AffineExpr result :
           sum.getMatchingIndexingMap(input).getResults())
        for (unsigned dim = from; dim < loops; ++dim)
          if (result.isFunctionOfDim(dim))
            return true;
      return false;
    };
    for (; first < loops; ++first) {
      bool fits = true, read = false;
      for (OpOperand *input : sum.getDpsInputOperands()) {
        if (!readsInner(input, first))
          continue;
        read = true;
        fits = fits && indexesInner(input, first);
      }
      if (fits && read)
        break;
    }
    if (first == loops)
      return nullptr;
    int64_t inner = 1, outputs = 1;
    for (unsigned dim = 0; dim < loops; ++dim)
      if (dim >= first)
        inner *= ranges[dim];
      else if (iterators[dim] == IteratorType::parallel)
        outputs *= ranges[dim];
    bool indexed = false;
    sum.getRegion().walk([&](linalg::IndexOp index) {
      indexed |= index.getDim() >= first;
    });
    if (lanes < 2 || inner % lanes || inner < 2 * lanes ||
        outputs * lanes > kMaxLaneElements || indexed)
      return nullptr;

    Location loc = sum.getLoc();
    OpBuilder b(sum);
    MLIRContext *context = b.getContext();
    // Loops: the outer ones as they were, then the rows and the lanes.
    unsigned newLoops = first + 2;
    AffineExpr row = b.getAffineDimExpr(first),
               lane = b.getAffineDimExpr(first + 1);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *operand : sum.getDpsInputOperands()) {
      Value input = operand->get();
      AffineMap map = sum.getMatchingIndexingMap(operand);
      SmallVector<AffineExpr> results(map.getResults());
      if (readsInner(operand, first)) {
        auto type = cast<MemRefType>(input.getType());
        unsigned kept = type.getRank() - (loops - first);
        SmallVector<ReassociationIndices> collapse(kept);
        for (unsigned d = 0; d < kept; ++d)
          collapse[d].push_back(d);
        collapse.emplace_back();
        for (unsigned d = kept; d < type.getRank(); ++d)
          collapse.back().push_back(d);
        input = memref::CollapseShapeOp::create(b, loc, input, collapse);
        SmallVector<ReassociationIndices> expand(kept);
        for (unsigned d = 0; d < kept; ++d)
          expand[d].push_back(d);
        expand.push_back({kept, kept + 1});
        SmallVector<int64_t> shape(type.getShape().take_front(kept));
        shape.append({inner / lanes, lanes});
        input = memref::ExpandShapeOp::create(b, loc, shape, input, expand);
        results.resize(kept);
        results.append({row, lane});
      }
      inputs.push_back(input);
      maps.push_back(AffineMap::get(newLoops, 0, results, context));
    }
    // One sum per lane of each output: the outer parallel loops, then the
    // lanes.
    SmallVector<int64_t> laneShape;
    SmallVector<AffineExpr> laneIndex;
    SmallVector<IteratorType> newIterators;
    for (unsigned dim = 0; dim < first; ++dim) {
      newIterators.push_back(iterators[dim]);
      if (iterators[dim] == IteratorType::parallel) {
        laneShape.push_back(ranges[dim]);
        laneIndex.push_back(b.getAffineDimExpr(dim));
      }
    }
    newIterators.append({IteratorType::reduction, IteratorType::parallel});
    laneShape.push_back(lanes);
    laneIndex.push_back(lane);
    maps.push_back(AffineMap::get(newLoops, 0, laneIndex, context));
    memref::AllocaOp laneSums =
        zeroedScratch(b, sum, MemRefType::get(laneShape, element), laneBytes);
    auto inLanes = linalg::GenericOp::create(b, loc, TypeRange{}, inputs,
                                             ValueRange{laneSums}, maps,
                                             newIterators);
    inLanes.getRegion().takeBody(sum.getRegion());

    // The total: each output's lanes in order, over the outer parallel
    // loops (the output's map renumbered to them) and the lanes.
    unsigned parallel = laneShape.size() - 1;
    SmallVector<AffineExpr> renumbered(loops, b.getAffineConstantExpr(0));
    for (unsigned dim = 0, next = 0; dim < first; ++dim)
      if (iterators[dim] == IteratorType::parallel)
        renumbered[dim] = b.getAffineDimExpr(next++);
    AffineMap outMap = sum.getIndexingMapsArray().back().replaceDimsAndSymbols(
        renumbered, {}, parallel + 1, 0);
    SmallVector<IteratorType> totalIterators(parallel, IteratorType::parallel);
    totalIterators.push_back(IteratorType::reduction);
    addInto(b, loc, laneSums, total,
            {b.getMultiDimIdentityMap(parallel + 1), outMap}, totalIterators);
    sum.erase();
    ++numInLanes;
    return laneSums;
  }

  /// Splits `sum`; returns its partial sums' buffer, if it did.
  memref::AllocaOp split(linalg::GenericOp sum) {
    SmallVector<int64_t> ranges = sum.getStaticLoopRanges();
    SmallVector<IteratorType> iterators = sum.getIteratorTypesArray();
    int64_t elements = 1, outputs = 1;
    for (auto [range, iterator] : llvm::zip(ranges, iterators)) {
      elements *= range;
      if (iterator == IteratorType::parallel)
        outputs *= range;
    }
    // A sum down columns becomes partial sums of about `columnRows` rows,
    // laid out before the output's dimensions (`[partials][C]`): a thread's
    // loop over its rows, consecutive threads on consecutive columns.
    bool columns = columnRows > 0 && readsDownColumns(sum);
    if (elements < minElements || (!columns && outputs >= maxOutputs))
      return nullptr;
    // The outer reduction loops become parallel loops over partial sums:
    // whole while they are short, then the next one split in two (reshaping
    // the operands it indexes) by its largest divisor that gives no more
    // than the partial sums wanted.
    int64_t wanted = columns ? elements / outputs / columnRows
                             : llvm::divideCeil(parallelism, outputs);
    int64_t partials = 1;
    SmallVector<unsigned> whole;
    std::optional<std::pair<unsigned, int64_t>> splitLoop;
    SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
    for (unsigned dim = 0; dim < ranges.size() && partials < wanted; ++dim) {
      if (iterators[dim] != IteratorType::reduction)
        continue;
      if (ranges[dim] <= wanted / partials) {
        whole.push_back(dim);
        partials *= ranges[dim];
        continue;
      }
      int64_t outer = largestDivisor(ranges[dim], wanted / partials);
      if (outer > 1 && isSplittableLoop(maps, dim)) {
        splitLoop = {dim, outer};
        partials *= outer;
      }
      break;
    }
    if (partials == 1)
      return nullptr;

    Location loc = sum.getLoc();
    OpBuilder b(sum);
    MLIRContext *context = b.getContext();
    // With a split loop `s`, loop s becomes (s, s + 1) of ranges (outer,
    // range / outer): every later loop moves up by one.
    unsigned loops = ranges.size() + (splitLoop ? 1 : 0);
    auto newDim = [&](unsigned dim) {
      return splitLoop && dim > splitLoop->first ? dim + 1 : dim;
    };
    SmallVector<AffineExpr> replacements;
    for (unsigned dim = 0; dim < ranges.size(); ++dim)
      replacements.push_back(b.getAffineDimExpr(newDim(dim)));
    SmallVector<Value> inputs;
    SmallVector<AffineMap> inputMaps;
    for (OpOperand *operand : sum.getDpsInputOperands()) {
      AffineMap map = sum.getMatchingIndexingMap(operand);
      Value input = operand->get();
      SmallVector<AffineExpr> results;
      // Each result that is the split loop becomes two dimensions.
      auto type = cast<MemRefType>(input.getType());
      SmallVector<ReassociationIndices> groups;
      SmallVector<int64_t> shape;
      for (auto [i, result] : llvm::enumerate(map.getResults())) {
        groups.emplace_back();
        groups.back().push_back(shape.size());
        if (splitLoop && result == b.getAffineDimExpr(splitLoop->first)) {
          auto [split, outer] = *splitLoop;
          shape.push_back(outer);
          groups.back().push_back(shape.size());
          shape.push_back(ranges[split] / outer);
          results.push_back(b.getAffineDimExpr(split));
          results.push_back(b.getAffineDimExpr(split + 1));
          continue;
        }
        shape.push_back(type.getDimSize(i));
        results.push_back(result.replaceDims(replacements));
      }
      if (shape.size() != static_cast<size_t>(type.getRank()))
        input = memref::ExpandShapeOp::create(b, loc, shape, input, groups);
      inputs.push_back(input);
      inputMaps.push_back(AffineMap::get(loops, 0, results, context));
    }

    // The partial sums: the output's shape, then one dimension per loop
    // made parallel (with padding after the last, a line per sum); down
    // columns, those dimensions first.
    Value total = sum.getDpsInitOperand(0)->get();
    auto totalType = cast<MemRefType>(total.getType());
    Type element = totalType.getElementType();
    SmallVector<int64_t> partialShape(totalType.getShape());
    SmallVector<AffineExpr> partialResults;
    for (AffineExpr result : sum.getIndexingMapsArray().back().getResults())
      partialResults.push_back(result.replaceDims(replacements));
    // The loops after the split: the split loop's outer part is parallel
    // (the partial sums), its inner part a reduction. The loops made
    // parallel all precede or are the split loop, so keep their numbers.
    SmallVector<int64_t> partialRanges(ranges);
    SmallVector<IteratorType> partialIterators(iterators);
    SmallVector<unsigned> parallelDims(whole);
    if (splitLoop) {
      auto [split, outer] = *splitLoop;
      partialRanges[split] = outer;
      partialRanges.insert(partialRanges.begin() + split + 1,
                           ranges[split] / outer);
      partialIterators.insert(partialIterators.begin() + split + 1,
                              IteratorType::reduction);
      parallelDims.push_back(split);
    }
    for (unsigned dim : parallelDims) {
      partialIterators[dim] = IteratorType::parallel;
      partialShape.push_back(partialRanges[dim]);
      partialResults.push_back(b.getAffineDimExpr(dim));
    }
    if (columns) { // [partials][outputs]
      std::rotate(partialShape.begin(),
                  partialShape.begin() + totalType.getRank(),
                  partialShape.end());
      std::rotate(partialResults.begin(),
                  partialResults.begin() + totalType.getRank(),
                  partialResults.end());
    }
    int64_t padding =
        columns ? 1
                : std::max<int64_t>(
                      partialBytes / (element.getIntOrFloatBitWidth() / 8), 1);
    if (padding > 1) {
      partialShape.push_back(padding);
      partialResults.push_back(b.getAffineConstantExpr(0));
    }
    memref::AllocaOp partial = zeroedScratch(
        b, sum, MemRefType::get(partialShape, element),
        llvm::PowerOf2Ceil(std::max<int64_t>(partialBytes, 16)));
    inputMaps.push_back(AffineMap::get(loops, 0, partialResults, context));
    // The partial sums' loops first (the CPU shares out the outermost), then
    // the output's, then the reductions, each in its order (the same sums,
    // in the same order): a reduction between parallel loops would leave
    // the inner ones to a GPU thread's loop.
    SmallVector<unsigned> order(parallelDims);
    for (IteratorType kind : {IteratorType::parallel, IteratorType::reduction})
      for (unsigned dim = 0; dim < loops; ++dim)
        if (partialIterators[dim] == kind && !llvm::is_contained(order, dim))
          order.push_back(dim);
    SmallVector<AffineExpr> moved(loops);
    SmallVector<IteratorType> orderedIterators;
    for (auto [position, dim] : llvm::enumerate(order)) {
      moved[dim] = b.getAffineDimExpr(position);
      orderedIterators.push_back(partialIterators[dim]);
    }
    for (AffineMap &map : inputMaps)
      map = map.replaceDimsAndSymbols(moved, {}, loops, 0);
    auto partialSums = linalg::GenericOp::create(b, loc, TypeRange{}, inputs,
                                                 ValueRange{partial}, inputMaps,
                                                 orderedIterators);
    partialSums.getRegion().takeBody(sum.getRegion());
    // The body's loop indices (a one-hot computed in the sum) follow their
    // loops; the split loop's is rebuilt from its two parts.
    auto position = [&](unsigned dim) {
      return cast<AffineDimExpr>(moved[dim]).getPosition();
    };
    SmallVector<linalg::IndexOp> indices;
    partialSums.getRegion().walk([&](linalg::IndexOp index) {
      if (index->getParentOp() == partialSums) // Not a nested linalg op's.
        indices.push_back(index);
    });
    for (linalg::IndexOp index : indices) {
      OpBuilder at(index);
      Location where = index.getLoc();
      unsigned dim = index.getDim();
      Value replacement;
      if (splitLoop && dim == splitLoop->first) {
        auto [split, outer] = *splitLoop;
        Value high = linalg::IndexOp::create(at, where, position(split));
        Value low = linalg::IndexOp::create(at, where, position(split + 1));
        Value inner =
            arith::ConstantIndexOp::create(at, where, ranges[split] / outer);
        replacement = arith::AddIOp::create(
            at, where, arith::MulIOp::create(at, where, high, inner), low);
      } else {
        replacement = linalg::IndexOp::create(at, where, position(newDim(dim)));
      }
      index.replaceAllUsesWith(replacement);
      index.erase();
    }

    // The total adds the partial sums in order to what it held: loops over
    // the output's dimensions, then over the partial sums'.
    unsigned outRank = totalType.getRank();
    unsigned sumLoops = outRank + parallelDims.size();
    SmallVector<AffineExpr> partialIndex, totalIndex;
    SmallVector<IteratorType> totalIterators;
    for (unsigned i = 0; i < sumLoops; ++i) {
      partialIndex.push_back(b.getAffineDimExpr(i));
      totalIterators.push_back(i < outRank ? IteratorType::parallel
                                           : IteratorType::reduction);
      if (i < outRank)
        totalIndex.push_back(b.getAffineDimExpr(i));
    }
    if (columns) // [partials][outputs]
      std::rotate(partialIndex.begin(), partialIndex.begin() + outRank,
                  partialIndex.end());
    if (padding > 1)
      partialIndex.push_back(b.getAffineConstantExpr(0));
    addInto(b, loc, partial, total,
            {AffineMap::get(sumLoops, 0, partialIndex, context),
             AffineMap::get(sumLoops, 0, totalIndex, context)},
            totalIterators);
    sum.erase();
    ++numSplit;
    return partial;
  }
};
} // namespace
