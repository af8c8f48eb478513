//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls whole ----===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct FuseElementwisePass
    : public gacc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // As linalg-fuse-elementwise-ops: fuse producers with one use (never
    // recompute a shared value), but never into or out of a named
    // contraction, which would become a generic (reshapes fold by
    // expanding their producer's or consumer's loops).
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !isa<linalg::ContractionOpInterface>(producer) &&
             !isa<linalg::ContractionOpInterface>(fused->getOwner());
    };
    MLIRContext *context = &getContext();
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    // A reshape that regroups dimensions (a collapse, then an expansion)
    // becomes expansion first, so each half folds into its generic.
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
