//===- AttentionToCall.cpp - bufferized attention to the runtime's kernel -===//

#include "compiler/target/cpu/Passes.h"
#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_ATTENTIONTOCALL
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// The runtime kernels' suffix for operands of `element`, or "".
StringRef kernelSuffix(Type element) {
  if (element.isF32())
    return "f32";
  if (element.isF64())
    return "f64";
  if (element.isF16())
    return "f16";
  if (element.isBF16())
    return "bf16";
  return "";
}

/// Calls `kernel` with `memrefs`, the key bias (or `placeholder`, which the
/// kernel does not read, without one) in its place `biasIndex`, then the
/// op's scale, causal flag and whether it has a key bias.
template <typename OpTy>
LogicalResult replaceByCall(OpBuilder &b, ModuleOp module, OpTy op,
                            StringRef kernel, SmallVector<Value> memrefs,
                            unsigned biasIndex, Value placeholder) {
  StringRef suffix = kernelSuffix(op.getQueryType().getElementType());
  if (suffix.empty())
    return op.emitOpError("has no CPU kernel for ")
           << op.getQueryType().getElementType() << " operands";
  if (!isa<MemRefType>(op.getQuery().getType()))
    return op.emitOpError("must be bufferized before gacc-cpu-attention-to-call");
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value keyBias = op.getKeyBias();
  memrefs.insert(memrefs.begin() + biasIndex, keyBias ? keyBias : placeholder);
  Value scale = arith::ConstantOp::create(b, loc, op.getScaleAttr());
  Value causal =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), op.getCausal());
  Value hasKeyBias =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), keyBias != nullptr);
  memrefs.append({scale, causal, hasKeyBias});
  createRuntimeCall(b, loc, module, (kernel + suffix).str(), memrefs);
  op.erase();
  return success();
}

struct AttentionToCallPass
    : public gacc::impl::AttentionToCallBase<AttentionToCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    OpBuilder b(module.getContext());
    for (Operation *op : ops) {
      LogicalResult replaced = success();
      if (auto forward = dyn_cast<AttentionOp>(op))
        replaced = replaceByCall(
            b, module, forward, "gacc_cpu_attention_",
            {forward.getQuery(), forward.getKey(), forward.getValue(),
             forward.getOut(), forward.getLogsumexp()},
            /*biasIndex=*/3, forward.getLogsumexp());
      else if (auto backward = dyn_cast<AttentionGradOp>(op))
        replaced = replaceByCall(
            b, module, backward, "gacc_cpu_attention_grad_",
            {backward.getQuery(), backward.getKey(), backward.getValue(),
             backward.getOutGrad(), backward.getLogsumexp(),
             backward.getDelta(), backward.getQueryGrad(),
             backward.getKeyGrad(), backward.getValueGrad()},
            /*biasIndex=*/6, backward.getDelta());
      if (failed(replaced))
        return signalPassFailure();
    }
  }
};
} // namespace
