//===- SplitParallelNests.cpp - loop nests that compute a range -------------===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SPLITPARALLELNESTS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// The only linalg op of `function`, if it has exactly one.
linalg::LinalgOp onlyNest(func::FuncOp function) {
  linalg::LinalgOp nest;
  int count = 0;
  function.walk([&](linalg::LinalgOp op) {
    nest = op;
    ++count;
  });
  return count == 1 ? nest : linalg::LinalgOp();
}

/// The position of loop `loop` among `map`'s results if it is one of them
/// as a plain dimension, -1 if the map does not use it, nullopt if it uses
/// it otherwise (in an expression, or twice).
std::optional<int64_t> plainPosition(AffineMap map, unsigned loop) {
  int64_t position = -1;
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    if (!result.isFunctionOfDim(loop))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || position != -1)
      return std::nullopt;
    position = i;
  }
  return position;
}

struct SplitParallelNestsPass
    : public gacc::impl::SplitParallelNestsBase<SplitParallelNestsPass> {
  using SplitParallelNestsBase::SplitParallelNestsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (auto function : module.getOps<func::FuncOp>()) {
      if (!function.isPrivate() || function.isExternal())
        continue;
      linalg::LinalgOp nest = onlyNest(function);
      if (!nest || !nest.hasPureBufferSemantics())
        continue;
      split(function, nest, users);
    }
  }

  void split(func::FuncOp function, linalg::LinalgOp nest,
             SymbolUserMap &users) {
    SmallVector<int64_t> ranges = nest.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    int64_t work = 1;
    for (int64_t range : ranges)
      work *= range;
    if (work < 2 * minChunkWork)
      return;
    // The outermost parallel loop every operand reads as a dimension of its
    // own, with at least two chunks.
    SmallVector<utils::IteratorType> iterators =
        nest.getIteratorTypesArray();
    SmallVector<AffineMap> maps = nest.getIndexingMapsArray();
    for (unsigned loop = 0; loop < ranges.size(); ++loop) {
      if (iterators[loop] != utils::IteratorType::parallel)
        continue;
      SmallVector<int64_t> positions;
      for (AffineMap map : maps) {
        std::optional<int64_t> position = plainPosition(map, loop);
        if (!position)
          break;
        positions.push_back(*position);
      }
      if (positions.size() != maps.size())
        continue;
      int64_t inner = work / ranges[loop];
      int64_t grain = std::max<int64_t>(
          (minChunkWork + inner - 1) / inner, 1);
      if (grain >= ranges[loop])
        continue;
      rewrite(function, nest, loop, positions, ranges[loop], grain, users);
      return;
    }
  }

  void rewrite(func::FuncOp function, linalg::LinalgOp nest, unsigned loop,
               ArrayRef<int64_t> positions, int64_t range, int64_t grain,
               SymbolUserMap &users) {
    Location loc = nest.getLoc();
    OpBuilder b(nest);
    IndexType index = b.getIndexType();
    unsigned first = function.getNumArguments();
    if (failed(function.insertArguments({first, first}, {index, index}, {},
                                        {loc, loc})))
      return signalPassFailure();
    Value lo = function.getArgument(first), hi = function.getArgument(first + 1);
    Value size = arith::SubIOp::create(b, loc, hi, lo);
    for (OpOperand &operand : nest->getOpOperands()) {
      int64_t position = positions[operand.getOperandNumber()];
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (position < 0 || !type)
        continue;
      int64_t rank = type.getRank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      offsets[position] = lo;
      sizes[position] = size;
      operand.set(memref::SubViewOp::create(b, loc, operand.get(), offsets,
                                            sizes, strides));
    }
    // The loop's index in the nest counts from lo.
    nest->walk([&](linalg::IndexOp op) {
      if (op.getDim() != loop)
        return;
      OpBuilder after(op->getContext());
      after.setInsertionPointAfter(op);
      auto shifted = arith::AddIOp::create(after, loc, op, lo);
      op.getResult().replaceAllUsesExcept(shifted, shifted);
    });
    function->setAttr(gacc::kParallelGrainAttrName,
                      b.getI64IntegerAttr(grain));
    for (Operation *user : users.getUsers(function)) {
      auto call = dyn_cast<func::CallOp>(user);
      if (!call) {
        user->emitError("a split loop nest used other than by a call");
        return signalPassFailure();
      }
      OpBuilder at(call);
      Value zero = arith::ConstantIndexOp::create(at, loc, 0);
      Value end = arith::ConstantIndexOp::create(at, loc, range);
      call->insertOperands(call->getNumOperands(), {zero, end});
    }
  }
};
} // namespace
