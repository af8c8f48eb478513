//===- ExpandBf16Conversions.cpp - f32 <-> bf16 without AVX512-BF16 -------===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct ExpandBf16ConversionsPass
    : public gacc::impl::ExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
