//===- SplitFills.cpp - one fill per destination-passing user ---------------===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SPLITFILLS
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct SplitFillsPass : public gacc::impl::SplitFillsBase<SplitFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill.result().getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner()))
          if (dps.isDpsInit(&use))
            inits.push_back(&use);
      if (inits.empty() || fill->hasOneUse())
        continue;
      // Each accumulating user gets a fill right before it.
      for (OpOperand *init : inits) {
        OpBuilder b(init->getOwner());
        Operation *empty = b.clone(*fill.getOutputs()[0].getDefiningOp());
        IRMapping mapping;
        mapping.map(fill.getOutputs()[0], empty->getResult(0));
        init->set(b.clone(*fill, mapping)->getResult(0));
      }
      if (fill->use_empty())
        fill->erase();
    }
    // CSE merges empty tensors too. Every op writing into the one that is
    // left would alias every other for bufferization's analysis, which
    // compares each pair of writes and reads of a buffer: quadratic in the
    // users (hundreds of optimizer updates of equally-shaped parameters).
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse() && !empty->use_empty())
        empties.push_back(empty);
    });
    // Each clone right before its user: the merged one sits where the first
    // was, and would keep whichever user it is left with alive from there.
    for (tensor::EmptyOp empty : empties) {
      for (OpOperand &use : llvm::make_early_inc_range(empty->getUses()))
        use.set(OpBuilder(use.getOwner()).clone(*empty)->getResult(0));
      empty->erase();
    }
  }
};
} // namespace
