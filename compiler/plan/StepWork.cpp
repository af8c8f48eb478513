//===- StepWork.cpp - what a training step computes and moves -------------===//

#include "compiler/plan/StepWork.h"
#include "dialects/gacc/GaccDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// How many times `op` runs per call of its function: the product of the
/// constant trip counts of the loops around it.
int64_t runsPerCall(Operation *op) {
  int64_t runs = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> trips = constantTripCount(
            loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
            /*isSigned=*/true, scf::computeUbMinusLb))
      runs *= trips->getSExtValue();
  return runs;
}

int64_t staticBytes(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// `op` as a matmul of the runtime's kernels, if it is one (a contraction
/// of floats with static loop ranges).
std::optional<MatmulWork> asMatmul(linalg::LinalgOp op) {
  if (op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr()))
    return std::nullopt; // a gather on the CPU: its bytes are what it costs
  if (op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  Type operand = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  if (failed(dims) || !isa<FloatType>(operand))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto product = [&](ArrayRef<unsigned> loops) -> int64_t {
    int64_t size = 1;
    for (unsigned loop : loops)
      size = ShapedType::isDynamic(ranges[loop]) ? ShapedType::kDynamic
                                                 : size * ranges[loop];
    return size;
  };
  MatmulWork work{operand,          product(dims->batch), product(dims->m),
                  product(dims->n), product(dims->k),     1};
  if (llvm::any_of(ArrayRef<int64_t>{work.batch, work.m, work.n, work.k},
                   ShapedType::isDynamic))
    return std::nullopt;
  return work;
}
} // namespace

StepWork mlir::gacc::countStepWork(func::FuncOp step) {
  // The one-hot operands of embedding gradients: the CPU drops the loop
  // that writes them (gacc-cpu-matmul-to-call).
  llvm::SmallPtrSet<Value, 4> oneHots;
  step.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr()))
      oneHots.insert(op.getDpsInputs()[0]);
  });
  StepWork work;
  step.walk([&](Operation *op) {
    int64_t runs = runsPerCall(op);
    double bytes = 0;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (std::optional<MatmulWork> matmul = asMatmul(linalgOp)) {
        matmul->calls = runs;
        auto same = llvm::find_if(work.matmuls, [&](const MatmulWork &w) {
          return w.sameShape(*matmul);
        });
        if (same == work.matmuls.end())
          work.matmuls.push_back(*matmul);
        else
          same->calls += runs;
        return;
      }
      if (linalgOp.getNumDpsInits() == 1 &&
          oneHots.contains(linalgOp.getDpsInits()[0]))
        return;
      for (OpOperand &operand : op->getOpOperands())
        bytes += staticBytes(operand.get());
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      bytes = staticBytes(copy.getSource()) + staticBytes(copy.getTarget());
    } else {
      return;
    }
    work.loopNests += runs;
    work.loopBytes += bytes * runs;
  });
  return work;
}

double mlir::gacc::predictStepSeconds(const StepWork &work,
                                      const KernelCosts &costs) {
  double seconds = work.loopBytes / costs.bytesPerSecond +
                   work.loopNests * costs.loopNestSeconds;
  for (const MatmulWork &matmul : work.matmuls)
    seconds += matmul.calls * costs.matmulSeconds(matmul);
  return seconds;
}
