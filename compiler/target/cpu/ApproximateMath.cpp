//===- ApproximateMath.cpp - transcendental functions that vectorize --------===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public gacc::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    // Not sin and cos: their approximations lose accuracy away from zero.
    static const llvm::StringSet<> approximated = {
        "atan", "atan2", "cbrt", "erf",   "erfc", "exp",
        "expm1", "log",  "log1p", "log2", "tanh"};
    auto predicate = [](StringRef name) {
      name.consume_front("math.");
      return approximated.contains(name);
    };
    RewritePatternSet patterns(&getContext());
    // 16-bit floats (mixed precision) compute these in f32, approximated.
    populateMathF32ExpansionPatterns(patterns, predicate);
    populateMathPolynomialApproximationPatterns(patterns, predicate);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
