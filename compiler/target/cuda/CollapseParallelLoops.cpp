//===- CollapseParallelLoops.cpp - one-dimensional kernels ------------------===//

#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_COLLAPSEPARALLELLOOPS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct CollapseParallelLoopsPass
    : public gacc::impl::CollapseParallelLoopsBase<CollapseParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          loop.getNumLoops() > 1)
        outermost.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : outermost) {
      std::vector<unsigned> all(loop.getNumLoops());
      for (unsigned i = 0; i < all.size(); ++i)
        all[i] = i;
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};
} // namespace
