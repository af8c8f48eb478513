//===- SplitBatch.cpp - the model of one micro-batch ------------------------===//
//
// The first half of gradient accumulation: the model specialized to one
// micro-batch (and to the smaller last one), so that autodiff and remat act
// on what one micro-batch runs. gacc-accumulate builds the loop around
// their gradients.
//
//===----------------------------------------------------------------------===//

#include "passes/BatchSplit.h"
#include "passes/Passes.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SPLITBATCH
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct SplitBatchPass : public gacc::impl::SplitBatchBase<SplitBatchPass> {
  void runOnOperation() override;
};
} // namespace

/// `<model>_micro<size>` (renamed if taken), as a reference from `step`.
static FlatSymbolRefAttr specialize(TrainStepOp step, int64_t size) {
  func::FuncOp model = step.getModelFunc();
  // The symbols before the new function, so that inserting it renames it.
  SymbolTable symbols(step->getParentOfType<ModuleOp>());
  FailureOr<func::FuncOp> micro = specializeToMicroBatch(
      model, step.getRankBatchSize(), size,
      derivedName(model, "micro" + Twine(size)));
  if (failed(micro))
    return {};
  symbols.insert(*micro);
  return FlatSymbolRefAttr::get(micro->getSymNameAttr());
}

void gacc::warnIfBatchStatisticsDiffer(TrainStepOp step) {
  if (!step.accumulatesMicroBatches())
    return;
  BatchNormOp norm;
  step.getModelFunc().walk([&](BatchNormOp op) {
    if (!norm && !op.getInference())
      norm = op;
  });
  if (!norm)
    return;
  int64_t ranks = step.getEffectiveZero().getRanks();
  InFlightDiagnostic warning =
      norm.emitWarning() << "batch norm takes its statistics over each "
                            "micro-batch of "
                         << step.getEffectiveMicroBatchSize() << " examples";
  if (ranks > 1)
    warning << " on each of " << ranks << " ranks";
  warning << ", not over the batch of " << step.getBatchSize() << ": step '"
          << step.getSymName()
          << "' is not equal to one step over the whole batch";
}

void SplitBatchPass::runOnOperation() {
  for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
    if (!step.accumulatesMicroBatches() || step.getMicroModelAttr())
      continue;
    warnIfBatchStatisticsDiffer(step);
    int64_t batch = step.getRankBatchSize(),
            micro = step.getEffectiveMicroBatchSize();
    FlatSymbolRefAttr full = specialize(step, micro);
    if (!full)
      return signalPassFailure();
    step.setMicroModelAttr(full);
    if (int64_t last = batch % micro) {
      FlatSymbolRefAttr tail = specialize(step, last);
      if (!tail)
        return signalPassFailure();
      step.setLastMicroModelAttr(tail);
    }
  }
}
