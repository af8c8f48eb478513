//===- CollapseNests.cpp - fewer, longer loops for LLVM's vectorizer -----===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_COLLAPSENESTS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// Whether loops `loop` and `loop + 1` of `op` can become one: the same
/// iterator type, no `linalg.index` of either, and every operand reading
/// both as adjacent, contiguous dimensions (or neither).
bool canMerge(linalg::GenericOp op, unsigned loop,
              const llvm::SmallBitVector &indexed) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[loop] != iterators[loop + 1] || indexed.test(loop) ||
      indexed.test(loop + 1))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> outer, inner;
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      bool uses =
          result.isFunctionOfDim(loop) || result.isFunctionOfDim(loop + 1);
      if (!uses)
        continue;
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim)
        return false;
      (dim.getPosition() == loop ? outer : inner) = i;
    }
    if (!outer && !inner)
      continue;
    if (!outer || !inner || *inner != *outer + 1)
      return false;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return false;
    SmallVector<ReassociationIndices> pair;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != static_cast<int64_t>(*inner))
        pair.push_back({d});
    pair[*outer].push_back(*inner);
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, pair))
      return false;
  }
  return true;
}

/// Reads each operand that `op` broadcasts through constant 0 indices of
/// unit dimensions (a batch norm's `(0, c, 0, 0)`) through a view without
/// them, so that its map is a projected permutation as the collapse needs.
void dropBroadcastUnitDims(linalg::GenericOp op) {
  OpBuilder b(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = maps[operand.getOperandNumber()];
    if (!type || map.isProjectedPermutation())
      continue;
    SmallVector<AffineExpr> kept;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [d, result] : llvm::enumerate(map.getResults())) {
      pending.push_back(d);
      auto constant = dyn_cast<AffineConstantExpr>(result);
      if (constant && constant.getValue() == 0 && type.getDimSize(d) == 1)
        continue;
      kept.push_back(result);
      groups.push_back(std::move(pending));
      pending.clear();
    }
    if (!groups.empty())
      groups.back().append(pending.begin(), pending.end());
    AffineMap reduced =
        AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
    if (!reduced.isProjectedPermutation() ||
        !memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
      continue;
    operand.set(
        memref::CollapseShapeOp::create(b, op.getLoc(), operand.get(), groups));
    maps[operand.getOperandNumber()] = reduced;
    changed = true;
  }
  if (changed)
    op.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
}

/// Reads each 0-d input of `op` (not also written by it) once, before it.
void hoistScalarInputs(linalg::GenericOp op) {
  OpBuilder b(op);
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || type.getRank() != 0 ||
        llvm::is_contained(op.getDpsInits(), input->get()))
      continue;
    Value scalar = memref::LoadOp::create(b, op.getLoc(), input->get());
    op.getMatchingBlockArgument(input).replaceAllUsesWith(scalar);
  }
}

struct CollapseNestsPass
    : public gacc::impl::CollapseNestsBase<CollapseNestsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> nests;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && !op.hasDynamicShape())
        nests.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp nest : nests) {
      linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(*nest);
      if (!generic) {
        rewriter.setInsertionPoint(nest);
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, nest);
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      dropBroadcastUnitDims(generic);
      hoistScalarInputs(generic);
      collapse(generic, rewriter);
    }
  }

  void collapse(linalg::GenericOp op, IRRewriter &rewriter) {
    if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
          return map.isProjectedPermutation();
        }))
      return;
    unsigned loops = op.getNumLoops();
    llvm::SmallBitVector indexed(loops);
    op.getBody()->walk(
        [&](linalg::IndexOp index) { indexed.set(index.getDim()); });
    SmallVector<ReassociationIndices> groups;
    bool merged = false;
    for (unsigned loop = 0; loop < loops; ++loop) {
      if (loop > 0 && canMerge(op, loop - 1, indexed)) {
        groups.back().push_back(loop);
        merged = true;
      } else {
        groups.push_back({static_cast<int64_t>(loop)});
      }
    }
    if (!merged)
      return;
    // Only the groups of more than one loop are given to the collapse.
    SmallVector<ReassociationIndices> folded;
    for (ReassociationIndices &group : groups)
      if (group.size() > 1)
        folded.push_back(group);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> result =
        linalg::collapseOpIterationDims(op, folded, rewriter);
    if (failed(result))
      return;
    rewriter.replaceOp(op, result->results);
  }
};
} // namespace
