//===- AdamW.cpp - Adam with decoupled weight decay, as torch.optim.AdamW -===//

#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// torch.optim.AdamW (its single-tensor path). Per-step scalars, with
/// t = step + 1: weight_decay_factor = 1 - lr·weight_decay, step_size =
/// lr / (1 - β1^t) and bias_correction2_sqrt = sqrt(1 - β2^t).
class AdamW : public OptimizerOf<AdamWAttr> {
  static constexpr llvm::StringLiteral kAverage = "exp_avg";
  static constexpr llvm::StringLiteral kSquareAverage = "exp_avg_sq";
  static constexpr llvm::StringLiteral kWeightDecayFactor =
      "weight_decay_factor";
  static constexpr llvm::StringLiteral kStepSize = "step_size";
  static constexpr llvm::StringLiteral kBiasCorrection2Sqrt =
      "bias_correction2_sqrt";

  SmallVector<Hyperparameter> hyperparameters(AdamWAttr adamw) const override {
    return {{kLearningRate, adamw.getLr().convertToDouble()},
            {"beta1", adamw.getBeta1().convertToDouble()},
            {"beta2", adamw.getBeta2().convertToDouble()},
            {"eps", adamw.getEps().convertToDouble()},
            {"weight_decay", adamw.getWeightDecay().convertToDouble()}};
  }
  SmallVector<StringRef> stateSlots(AdamWAttr) const override {
    return {kAverage, kSquareAverage};
  }
  SmallVector<StringRef> stepScalars(AdamWAttr) const override {
    return {kLearningRate, kWeightDecayFactor, kStepSize,
            kBiasCorrection2Sqrt};
  }
  Value update(AdamWAttr adamw, UpdateContext &context, Value param,
               Value grad) const override {
    Value oldAvg = context.readState(kAverage);
    Value oldSq = context.readState(kSquareAverage);
    TensorMath &m = context.math;
    double beta1 = adamw.getBeta1().convertToDouble();
    double beta2 = adamw.getBeta2().convertToDouble();
    // A parameter group's own decay: 1 - lr·weight_decay from the scheduled
    // rate (none at all for 0, as torch multiplies by exactly 1).
    Value decayed = param;
    if (!context.hasOwnWeightDecay(adamw.getWeightDecay()))
      decayed = m.mul(param, context.scalar(kWeightDecayFactor));
    else if (double decay = context.weightDecay(adamw.getWeightDecay()))
      decayed = m.mul(param, m.sub(m.c(1.0), m.mul(context.scalar(
                                                       kLearningRate),
                                                   m.c(decay))));
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
                        m.c(adamw.getEps().convertToDouble()));
    return context.unlessSkipped(
        m.sub(decayed, m.mul(m.div(avg, denom), context.scalar(kStepSize))),
        param);
  }
};
} // namespace

const Optimizer &mlir::gacc::getAdamWOptimizer() {
  static const AdamW adamw;
  return adamw;
}
