//===- Adafactor.cpp - Adafactor, as transformers' Adafactor --------------===//

#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr llvm::StringLiteral kAverage = "exp_avg";
constexpr llvm::StringLiteral kSquareAverage = "exp_avg_sq";
constexpr llvm::StringLiteral kRowAverage = "exp_avg_sq_row";
constexpr llvm::StringLiteral kColumnAverage = "exp_avg_sq_col";
/// Per-step scalars: the relative step size or the scheduled rate, and the
/// second moments' decay 1 - t^decay_rate (t = step + 1).
constexpr llvm::StringLiteral kStepSize = "step_size";
constexpr llvm::StringLiteral kDecay = "beta2t";

/// Whether the second moments of a parameter are factored (rank ≥ 2).
bool isFactored(RankedTensorType weights) { return weights.getRank() >= 2; }

/// transformers' Adafactor._rms: the root mean square of every element.
Value rms(TensorMath &m, Value x) {
  int64_t n = cast<RankedTensorType>(x.getType()).getNumElements();
  return m.div(m.sqrt(m.sumAll(m.mul(x, x))),
               m.c(std::sqrt(static_cast<double>(n))));
}

Value maximum(TensorMath &m, Value x, Value y) {
  return m.select(m.compare(ComparePredicate::gt, x, y), x, y);
}

/// An exponential average `old·decay + value·complement` (complement =
/// 1 - decay), as `old.mul_(decay).add_(value, alpha=complement)`.
Value decayed(UpdateContext &context, Value old, Value value, Value decay,
              Value complement) {
  TensorMath &m = context.math;
  return context.unlessSkipped(
      m.add(m.mul(old, decay), m.mul(value, complement)), old);
}

/// transformers.optimization.Adafactor.step, for one parameter.
class Adafactor : public OptimizerOf<AdafactorAttr> {
  SmallVector<Hyperparameter>
  hyperparameters(AdafactorAttr adafactor) const override {
    return {{kLearningRate, adafactor.getLr().convertToDouble()},
            {"eps1", adafactor.getEps1().convertToDouble()},
            {"eps2", adafactor.getEps2().convertToDouble()},
            {"clip_threshold", adafactor.getClipThreshold().convertToDouble()},
            {"decay_rate", adafactor.getDecayRate().convertToDouble()},
            {"beta1", adafactor.getBeta1().convertToDouble()},
            {"weight_decay", adafactor.getWeightDecay().convertToDouble()},
            {"scale_parameter", adafactor.getScaleParameter() ? 1.0 : 0.0},
            {"relative_step", adafactor.getRelativeStep() ? 1.0 : 0.0},
            {"warmup_init", adafactor.getWarmupInit() ? 1.0 : 0.0}};
  }
  SmallVector<StateSlot> stateSlots(AdafactorAttr adafactor,
                                    RankedTensorType weights) const override {
    SmallVector<StateSlot> slots;
    if (!adafactor.getBeta1().isZero())
      slots.push_back({kAverage, weights});
    if (!isFactored(weights)) {
      slots.push_back({kSquareAverage, weights});
      return slots;
    }
    // [..., n, m] keeps [..., n] and [..., m].
    ArrayRef<int64_t> shape = weights.getShape();
    SmallVector<int64_t> column(shape.drop_back(2));
    column.push_back(shape.back());
    slots.push_back({kRowAverage, weights.clone(shape.drop_back())});
    slots.push_back({kColumnAverage, weights.clone(column)});
    return slots;
  }
  bool isElementwise(Attribute) const override { return false; }
  SmallVector<StringRef> stepScalars(AdafactorAttr) const override {
    return {kStepSize, kDecay};
  }
  AdafactorAttr
  rebuildImpl(MLIRContext *context, Attribute other, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    // Without an Adafactor to copy, transformers Trainer's `--optim
    // adafactor`: the given learning rate, no relative step nor scaling.
    auto like = dyn_cast_or_null<AdafactorAttr>(other);
    if (!like)
      return AdafactorAttr::getChecked(
          emitError, context, APFloat(lr), APFloat(1e-30), APFloat(1e-3),
          APFloat(1.0), APFloat(-0.8), APFloat(0.0), APFloat(weightDecay),
          /*scaleParameter=*/false, /*relativeStep=*/false,
          /*warmupInit=*/false);
    return AdafactorAttr::getChecked(
        emitError, context, APFloat(lr), like.getEps1(), like.getEps2(),
        like.getClipThreshold(), like.getDecayRate(), like.getBeta1(),
        APFloat(weightDecay), like.getScaleParameter(), like.getRelativeStep(),
        like.getWarmupInit());
  }

  Value update(AdafactorAttr adafactor, UpdateContext &context, Value param,
               Value grad) const override {
    TensorMath &m = context.math;
    auto type = cast<RankedTensorType>(param.getType());
    int64_t rank = type.getRank();
    Value decay = context.scalar(kDecay);
    Value complement = m.sub(m.c(1.0), decay);
    Value squares =
        m.add(m.mul(grad, grad), m.c(adafactor.getEps1().convertToDouble()));
    Value update;
    if (isFactored(type)) {
      Value row =
          decayed(context, context.readState(kRowAverage),
                  m.mean(squares, {rank - 1}, false), decay, complement);
      Value column =
          decayed(context, context.readState(kColumnAverage),
                  m.mean(squares, {rank - 2}, false), decay, complement);
      context.writeState(kRowAverage, row);
      context.writeState(kColumnAverage, column);
      // rsqrt(row / mean(row)) as [..., n, 1] times rsqrt(column) as
      // [..., 1, m]: the factored estimate of 1 / sqrt(v).
      ArrayRef<int64_t> shape = type.getShape();
      SmallVector<int64_t> rowShape(shape), columnShape(shape);
      rowShape.back() = 1;
      columnShape[rank - 2] = 1;
      Value rowFactor = m.rsqrt(m.div(row, m.mean(row, {rank - 2}, true)));
      Value columnFactor = m.rsqrt(column);
      update = m.mul(m.mul(buildReshape(m.b, m.loc, rowFactor, rowShape),
                           buildReshape(m.b, m.loc, columnFactor, columnShape)),
                     grad);
    } else {
      Value square = decayed(context, context.readState(kSquareAverage),
                             squares, decay, complement);
      context.writeState(kSquareAverage, square);
      update = m.mul(m.rsqrt(square), grad);
    }
    Value clipped = m.div(rms(m, update),
                          m.c(adafactor.getClipThreshold().convertToDouble()));
    update = m.div(update, maximum(m, clipped, m.c(1.0)));
    Value lr = context.scalar(kStepSize);
    if (adafactor.getScaleParameter())
      lr = m.mul(
          maximum(m, m.c(adafactor.getEps2().convertToDouble()), rms(m, param)),
          lr);
    update = m.mul(update, lr);
    if (!adafactor.getBeta1().isZero()) {
      double beta1 = adafactor.getBeta1().convertToDouble();
      Value average = decayed(context, context.readState(kAverage), update,
                              m.c(beta1), m.c(1.0 - beta1));
      context.writeState(kAverage, average);
      update = average;
    }
    Value weights = param;
    if (double weightDecay = context.weightDecay(adafactor.getWeightDecay()))
      weights = m.add(param, m.mul(param, m.mul(m.c(-weightDecay), lr)));
    return context.unlessSkipped(m.sub(weights, update), param);
  }
};
} // namespace

const Optimizer &mlir::gacc::getAdafactorOptimizer() {
  static const Adafactor adafactor;
  return adafactor;
}
