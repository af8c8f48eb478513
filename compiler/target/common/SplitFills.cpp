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
  }
};
} // namespace
