//===- Adam.cpp - Adam and AdamW, as torch.optim's -------------------------===//

#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr llvm::StringLiteral kAverage = "exp_avg";
constexpr llvm::StringLiteral kSquareAverage = "exp_avg_sq";
constexpr llvm::StringLiteral kWeightDecayFactor = "weight_decay_factor";
constexpr llvm::StringLiteral kStepSize = "step_size";
constexpr llvm::StringLiteral kBiasCorrection2Sqrt = "bias_correction2_sqrt";

template <typename AttrT>
SmallVector<Hyperparameter> adamHyperparameters(AttrT adam) {
  return {{kLearningRate, adam.getLr().convertToDouble()},
          {"beta1", adam.getBeta1().convertToDouble()},
          {"beta2", adam.getBeta2().convertToDouble()},
          {"eps", adam.getEps().convertToDouble()},
          {"weight_decay", adam.getWeightDecay().convertToDouble()}};
}

/// Adam's state: both moments, shaped as the weights.
SmallVector<StateSlot> adamState(RankedTensorType weights) {
  return {{kAverage, weights}, {kSquareAverage, weights}};
}

/// An Adam attribute `AttrT` with `lr` and `weightDecay` and `like`'s other
/// hyperparameters, or PyTorch's defaults.
template <typename AttrT>
AttrT rebuiltAdam(MLIRContext *context, AttrT like, double lr,
                  double weightDecay,
                  function_ref<InFlightDiagnostic()> emitError) {
  return AttrT::getChecked(
      emitError, context, APFloat(lr), like ? like.getBeta1() : APFloat(0.9),
      like ? like.getBeta2() : APFloat(0.999),
      like ? like.getEps() : APFloat(1e-8), APFloat(weightDecay));
}

/// The moment updates and the step of torch.optim.Adam's single-tensor path
/// from `decayed` (the weights the step is subtracted from) by `grad`.
template <typename AttrT>
Value adamStep(AttrT adam, UpdateContext &context, Value param,
               Value decayed, Value grad) {
  Value oldAvg = context.readState(kAverage);
  Value oldSq = context.readState(kSquareAverage);
  TensorMath &m = context.math;
  double beta1 = adam.getBeta1().convertToDouble();
  double beta2 = adam.getBeta2().convertToDouble();
  // The update reads the guarded moments, so that each is computed in its
  // slot (a skipped step discards the update anyway).
  Value avg = context.unlessSkipped(
      m.add(oldAvg, m.mul(m.sub(grad, oldAvg), m.c(1.0 - beta1))), oldAvg);
  // (1-β2)·g·g in torch's addcmul order; also keeps CSE from sharing g·g
  // with the gradient norm, which would keep a gradient-sized temporary
  // per parameter alive from the norm to the update.
  Value sq = context.unlessSkipped(
      m.add(m.mul(oldSq, m.c(beta2)),
            m.mul(m.mul(m.c(1.0 - beta2), grad), grad)),
      oldSq);
  context.writeState(kAverage, avg);
  context.writeState(kSquareAverage, sq);
  Value denom = m.add(m.div(m.sqrt(sq), context.scalar(kBiasCorrection2Sqrt)),
                      m.c(adam.getEps().convertToDouble()));
  return context.unlessSkipped(
      m.sub(decayed, m.mul(m.div(avg, denom), context.scalar(kStepSize))),
      param);
}

/// torch.optim.AdamW (its single-tensor path). Per-step scalars, with
/// t = step + 1: weight_decay_factor = 1 - lr·weight_decay, step_size =
/// lr / (1 - β1^t) and bias_correction2_sqrt = sqrt(1 - β2^t).
class AdamW : public OptimizerOf<AdamWAttr> {
  SmallVector<Hyperparameter> hyperparameters(AdamWAttr adamw) const override {
    return adamHyperparameters(adamw);
  }
  SmallVector<StateSlot> stateSlots(AdamWAttr,
                                    RankedTensorType weights) const override {
    return adamState(weights);
  }
  AdamWAttr
  rebuilt(MLIRContext *context, AdamWAttr like, double lr, double weightDecay,
          function_ref<InFlightDiagnostic()> emitError) const override {
    return rebuiltAdam(context, like, lr, weightDecay, emitError);
  }
  SmallVector<StringRef> stepScalars(AdamWAttr) const override {
    return {kLearningRate, kWeightDecayFactor, kStepSize,
            kBiasCorrection2Sqrt};
  }
  Value update(AdamWAttr adamw, UpdateContext &context, Value param,
               Value grad) const override {
    TensorMath &m = context.math;
    // A parameter group's own decay: 1 - lr·weight_decay from the scheduled
    // rate (none at all for 0, as torch multiplies by exactly 1).
    Value decayed = param;
    if (!context.hasOwnWeightDecay(adamw.getWeightDecay()))
      decayed = m.mul(param, context.scalar(kWeightDecayFactor));
    else if (double decay = context.weightDecay(adamw.getWeightDecay()))
      decayed = m.mul(param, m.sub(m.c(1.0), m.mul(context.scalar(
                                                       kLearningRate),
                                                   m.c(decay))));
    return adamStep(adamw, context, param, decayed, grad);
  }
};

/// torch.optim.Adam: the weight decay is an L2 penalty added to the
/// gradient. Per-step scalars: step_size and bias_correction2_sqrt, as
/// AdamW's.
class Adam : public OptimizerOf<AdamAttr> {
  SmallVector<Hyperparameter> hyperparameters(AdamAttr adam) const override {
    return adamHyperparameters(adam);
  }
  SmallVector<StateSlot> stateSlots(AdamAttr,
                                    RankedTensorType weights) const override {
    return adamState(weights);
  }
  AdamAttr
  rebuilt(MLIRContext *context, AdamAttr like, double lr, double weightDecay,
          function_ref<InFlightDiagnostic()> emitError) const override {
    return rebuiltAdam(context, like, lr, weightDecay, emitError);
  }
  SmallVector<StringRef> stepScalars(AdamAttr) const override {
    return {kStepSize, kBiasCorrection2Sqrt};
  }
  Value update(AdamAttr adam, UpdateContext &context, Value param,
               Value grad) const override {
    TensorMath &m = context.math;
    if (double decay = context.weightDecay(adam.getWeightDecay()))
      grad = m.add(grad, m.mul(param, m.c(decay)));
    return adamStep(adam, context, param, param, grad);
  }
};
} // namespace

const Optimizer &mlir::gacc::getAdamWOptimizer() {
  static const AdamW adamw;
  return adamw;
}

const Optimizer &mlir::gacc::getAdamOptimizer() {
  static const Adam adam;
  return adam;
}
