//===- StepWork.cpp - what a training step computes and moves -------------===//

#include "compiler/plan/StepWork.h"
#include "compiler/target/common/Contractions.h"
#include "compiler/target/cpu/Passes.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::gacc;

int64_t mlir::gacc::runsPerCall(Operation *op) {
  int64_t runs = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (std::optional<APInt> trips = constantTripCount(
            loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
            /*isSigned=*/true, scf::computeUbMinusLb))
      runs *= trips->getSExtValue();
  return runs;
}

namespace {
int64_t staticBytes(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// `op` as a call of the runtime's matmul kernels, as
/// gacc-cpu-matmul-to-call makes it: loops (batch..., m, n, k), each batch
/// one product. Not an embedding gradient, which the CPU makes a gather.
std::optional<MatmulWork> asMatmul(linalg::LinalgOp op) {
  if (op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr()) ||
      !getMatmulShape(op))
    return std::nullopt;
  Type operand = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  if (getElementTypeOrSelf(op.getDpsInputs()[1].getType()) != operand ||
      getCpuMatmulKernel(operand,
                         getElementTypeOrSelf(op.getDpsInits()[0].getType()))
          .empty())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  size_t loops = ranges.size();
  MatmulWork work{operand,           1, ranges[loops - 3], ranges[loops - 2],
                  ranges[loops - 1], 1};
  for (int64_t batch : ArrayRef(ranges).drop_back(3))
    work.batch *= batch;
  return work;
}

/// `value` without the reshaping views over its buffer.
Value throughReshapes(Value value) {
  while (isa_and_present<memref::CollapseShapeOp, memref::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}
} // namespace

namespace {
/// The products of a bufferized gacc.attention (Q Kᵀ, P V) or
/// gacc.attention_grad (Q Kᵀ, Pᵀ dO, dO Vᵀ, dS K, dSᵀ Q) as the runtime's
/// kernel makes them, in the compute type, (batch x heads) of each; the
/// first is Q Kᵀ, the scores.
SmallVector<MatmulWork> attentionProducts(Operation *op, Type compute) {
  auto q = cast<MemRefType>(op->getOperand(0).getType());
  auto k = cast<MemRefType>(op->getOperand(1).getType());
  int64_t heads = q.getDimSize(0) * q.getDimSize(1), t = q.getDimSize(2),
          s = k.getDimSize(2), d = q.getDimSize(3);
  MatmulWork scoreShaped{compute, heads, t, s, d, 1}; // [T, S] over D
  MatmulWork queryShaped{compute, heads, t, d, s, 1}; // [T, D] over S
  MatmulWork keyShaped{compute, heads, s, d, t, 1};   // [S, D] over T
  if (isa<AttentionOp>(op))
    return {scoreShaped, queryShaped};
  return {scoreShaped, keyShaped, scoreShaped, queryShaped, keyShaped};
}
} // namespace

StepWork mlir::gacc::countStepWork(func::FuncOp step) {
  // Embedding gradients: the CPU adds the rows of dy at their ids instead,
  // and drops the loop that writes the one-hot operand
  // (gacc-cpu-matmul-to-call).
  auto isEmbeddingGradient = [](Operation *op) {
    return op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr());
  };
  llvm::SmallPtrSet<Value, 4> oneHots;
  step.walk([&](linalg::LinalgOp op) {
    if (isEmbeddingGradient(op))
      oneHots.insert(throughReshapes(op.getDpsInputs()[0]));
  });
  StepWork work;
  auto addMatmul = [&](MatmulWork matmul, int64_t runs) {
    matmul.calls = runs;
    auto same = llvm::find_if(
        work.matmuls, [&](const MatmulWork &w) { return w.sameShape(matmul); });
    if (same == work.matmuls.end())
      work.matmuls.push_back(matmul);
    else
      same->calls += runs;
  };
  step.walk([&](Operation *op) {
    int64_t runs = runsPerCall(op);
    double bytes = 0;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (std::optional<MatmulWork> matmul = asMatmul(linalgOp)) {
        addMatmul(*matmul, runs);
        return;
      }
      if (linalgOp.getNumDpsInits() == 1 &&
          oneHots.contains(throughReshapes(linalgOp.getDpsInits()[0])))
        return;
      for (OpOperand &operand : op->getOpOperands())
        if (!isEmbeddingGradient(op) || operand.getOperandNumber() != 0)
          bytes += staticBytes(operand.get()); // not the one-hot
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      bytes = staticBytes(copy.getSource()) + staticBytes(copy.getTarget());
    } else if (isa<AttentionOp, AttentionGradOp>(op)) {
      // Its products, and its operands and score rows (one pass of the
      // compute type over B x H x T x S) as a loop nest.
      auto query = cast<MemRefType>(op->getOperand(0).getType());
      Type compute = AttentionOp::getComputeType(query.getElementType());
      SmallVector<MatmulWork> products = attentionProducts(op, compute);
      for (const MatmulWork &product : products)
        addMatmul(product, runs);
      const MatmulWork &scores = products.front();
      bytes = static_cast<double>(scores.batch * scores.m * scores.n) *
              (compute.getIntOrFloatBitWidth() / 8);
      for (Value operand : op->getOperands())
        bytes += staticBytes(operand);
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

bool mlir::gacc::knowsStepCosts(const StepWork &work,
                                const KernelCosts &costs) {
  return !costs.knowsMatmul || llvm::all_of(work.matmuls, costs.knowsMatmul);
}
