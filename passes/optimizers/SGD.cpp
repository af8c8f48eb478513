//===- SGD.cpp - stochastic gradient descent, as torch.optim.SGD ----------===//

#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// torch.optim.SGD with momentum, dampening, nesterov and weight decay.
/// Per-step scalars: the learning rate and, with momentum, the coefficients
/// of buffer = momentum_coefficient·buffer + gradient_coefficient·gradient
/// (0 and 1 on the first step, which copies the gradient into the buffer;
/// then momentum and 1 - dampening).
class SGD : public OptimizerOf<SGDAttr> {
  static constexpr llvm::StringLiteral kBuffer = "momentum_buffer";
  static constexpr llvm::StringLiteral kMomentumCoefficient =
      "momentum_coefficient";
  static constexpr llvm::StringLiteral kGradientCoefficient =
      "gradient_coefficient";

  SmallVector<Hyperparameter> hyperparameters(SGDAttr sgd) const override {
    return {{kLearningRate, sgd.getLr().convertToDouble()},
            {"nesterov", sgd.getNesterov() ? 1.0 : 0.0},
            {"momentum", sgd.getMomentum().convertToDouble()},
            {"dampening", sgd.getDampening().convertToDouble()},
            {"weight_decay", sgd.getWeightDecay().convertToDouble()}};
  }
  SmallVector<StateSlot> stateSlots(SGDAttr sgd, RankedTensorType,
                                    RankedTensorType weights) const override {
    if (sgd.getMomentum().isZero())
      return {};
    return {{kBuffer, weights}};
  }
  SGDAttr
  rebuildImpl(MLIRContext *context, Attribute other, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    auto like = dyn_cast_or_null<SGDAttr>(other);
    if (!like)
      return SGDAttr::getChecked(emitError, context, APFloat(lr), APFloat(0.0),
                                 APFloat(0.0), APFloat(weightDecay), false);
    return SGDAttr::getChecked(emitError, context, APFloat(lr),
                               like.getMomentum(), like.getDampening(),
                               APFloat(weightDecay), like.getNesterov());
  }
  SmallVector<StringRef> stepScalars(SGDAttr sgd) const override {
    if (sgd.getMomentum().isZero())
      return {kLearningRate};
    return {kLearningRate, kMomentumCoefficient, kGradientCoefficient};
  }
  Value update(SGDAttr sgd, UpdateContext &context, Value param,
               Value grad) const override {
    TensorMath &m = context.math;
    double momentum = sgd.getMomentum().convertToDouble();
    double weightDecay = context.weightDecay(sgd.getWeightDecay());
    if (weightDecay != 0.0)
      grad = m.add(grad, m.mul(param, m.c(weightDecay)));
    if (momentum != 0.0) {
      Value old = context.readState(kBuffer);
      Value buffer = context.unlessSkipped(
          m.add(m.mul(old, context.scalar(kMomentumCoefficient)),
                m.mul(grad, context.scalar(kGradientCoefficient))),
          old);
      context.writeState(kBuffer, buffer);
      grad = sgd.getNesterov() ? m.add(grad, m.mul(buffer, m.c(momentum)))
                               : buffer;
    }
    return context.unlessSkipped(
        m.sub(param, m.mul(grad, context.scalar(kLearningRate))), param);
  }
};
} // namespace

const Optimizer &mlir::gacc::getSGDOptimizer() {
  static const SGD sgd;
  return sgd;
}
