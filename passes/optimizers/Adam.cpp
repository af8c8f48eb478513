//===- Adam.cpp - Adam and AdamW, as torch.optim's -------------------------===//

#include "passes/optimizers/Optimizer.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr llvm::StringLiteral kAverage = "exp_avg";
constexpr llvm::StringLiteral kSquareAverage = "exp_avg_sq";
constexpr llvm::StringLiteral kAverageAbsmax = "exp_avg_absmax";
constexpr llvm::StringLiteral kSquareAverageAbsmax = "exp_avg_sq_absmax";
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

/// The betas and eps of `like` if it is one of the Adam family's
/// attributes, else PyTorch's defaults.
struct AdamMoments {
  APFloat beta1 = APFloat(0.9), beta2 = APFloat(0.999), eps = APFloat(1e-8);
};
AdamMoments adamMomentsOf(Attribute like) {
  return TypeSwitch<Attribute, AdamMoments>(like)
      .Case<AdamAttr, AdamWAttr, AdamW8bitAttr>([](auto adam) {
        return AdamMoments{adam.getBeta1(), adam.getBeta2(), adam.getEps()};
      })
      .Default([](Attribute) { return AdamMoments(); });
}

/// An Adam or AdamW attribute with `lr`, `weightDecay` and `like`'s betas
/// and eps.
template <typename AttrT>
AttrT rebuildAdam(MLIRContext *context, Attribute like, double lr,
                  double weightDecay,
                  function_ref<InFlightDiagnostic()> emitError) {
  AdamMoments moments = adamMomentsOf(like);
  return AttrT::getChecked(emitError, context, APFloat(lr), moments.beta1,
                           moments.beta2, moments.eps, APFloat(weightDecay));
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

/// torch.optim.AdamW's update: decoupled decay, then Adam's step.
template <typename AttrT>
Value adamwUpdate(AttrT adamw, UpdateContext &context, Value param,
                  Value grad) {
  TensorMath &m = context.math;
  // A parameter group's own decay: 1 - lr·weight_decay from the scheduled
  // rate (none at all for 0, as torch multiplies by exactly 1).
  Value decayed = param;
  if (!context.hasOwnWeightDecay(adamw.getWeightDecay()))
    decayed = m.mul(param, context.scalar(kWeightDecayFactor));
  else if (double decay = context.weightDecay(adamw.getWeightDecay()))
    decayed = m.mul(param, m.sub(m.c(1.0), m.mul(context.scalar(kLearningRate),
                                                 m.c(decay))));
  return adamStep(adamw, context, param, decayed, grad);
}

/// torch.optim.AdamW (its single-tensor path). Per-step scalars, with
/// t = step + 1: weight_decay_factor = 1 - lr·weight_decay, step_size =
/// lr / (1 - β1^t) and bias_correction2_sqrt = sqrt(1 - β2^t).
class AdamW : public OptimizerOf<AdamWAttr> {
  SmallVector<Hyperparameter> hyperparameters(AdamWAttr adamw) const override {
    return adamHyperparameters(adamw);
  }
  SmallVector<StateSlot> stateSlots(AdamWAttr, RankedTensorType,
                                    RankedTensorType weights) const override {
    return adamState(weights);
  }
  AdamWAttr
  rebuildImpl(MLIRContext *context, Attribute like, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    return rebuildAdam<AdamWAttr>(context, like, lr, weightDecay, emitError);
  }
  SmallVector<StringRef> stepScalars(AdamWAttr) const override {
    return {kLearningRate, kWeightDecayFactor, kStepSize,
            kBiasCorrection2Sqrt};
  }
  Value update(AdamWAttr adamw, UpdateContext &context, Value param,
               Value grad) const override {
    return adamwUpdate(adamw, context, param, grad);
  }
};

/// torch.optim.Adam: the weight decay is an L2 penalty added to the
/// gradient. Per-step scalars: step_size and bias_correction2_sqrt, as
/// AdamW's.
class Adam : public OptimizerOf<AdamAttr> {
  SmallVector<Hyperparameter> hyperparameters(AdamAttr adam) const override {
    return adamHyperparameters(adam);
  }
  SmallVector<StateSlot> stateSlots(AdamAttr, RankedTensorType,
                                    RankedTensorType weights) const override {
    return adamState(weights);
  }
  AdamAttr
  rebuildImpl(MLIRContext *context, Attribute like, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    return rebuildAdam<AdamAttr>(context, like, lr, weightDecay, emitError);
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
/// The blocks of bitsandbytes' 8-bit optimizer states for a parameter of
/// `elements` elements: blocks of `size`, the last one partial.
struct Blocks {
  int64_t elements, size;
  int64_t count() const { return llvm::divideCeil(elements, size); }
};

/// An UpdateContext whose moments are stored as bitsandbytes stores them:
/// state `<name>` holds the i8 codes (the parameter's shape) and
/// `<name>_absmax` each block's f32 maximum; the update reads and writes
/// f32 values.
class QuantizedMoments final : public UpdateContext {
public:
  QuantizedMoments(UpdateContext &stored, Blocks blocks)
      : UpdateContext(stored), stored(stored), blocks(blocks) {}

  Value sumOverRanks(Value partial) override {
    return stored.sumOverRanks(partial);
  }
  Value readState(StringRef name) override {
    auto codes = stored.readState(name);
    Value absmax = stored.readState(absmaxName(name));
    auto shape = cast<RankedTensorType>(codes.getType()).getShape();
    Value values = DequantizeDynamicOp::create(
        math.b, math.loc, RankedTensorType::get(shape, math.element), codes,
        isSigned(name));
    // Each element's block maximum: [blocks] → [blocks, size] → the
    // parameter's elements.
    Value scales = buildBroadcast(
        math.b, math.loc,
        buildReshape(math.b, math.loc, absmax, {blocks.count(), 1}),
        {blocks.count(), blocks.size});
    return math.mul(values, fromBlocks(scales, shape));
  }

  void writeState(StringRef name, Value value) override {
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    Value padded = toBlocks(value);
    Value magnitude =
        math.select(math.compare(ComparePredicate::lt, padded, math.c(0.0)),
                    math.neg(padded), padded);
    // A step that loss scaling skips writes back the old moments: over the
    // old maxima they quantize to the old codes (the signed map has no -1,
    // so new maxima would shrink a block whose largest element is negative).
    Value absmax = unlessSkipped(math.max(magnitude, {1}, false),
                                 stored.readState(absmaxName(name)));
    // An all-zero block keeps zeros (0 / the smallest normal float).
    Value safe =
        math.select(math.compare(ComparePredicate::gt, absmax, math.c(0.0)),
                    absmax, math.c(std::numeric_limits<float>::min()));
    Value normalized = math.div(
        padded, buildReshape(math.b, math.loc, safe, {blocks.count(), 1}));
    Value codes = QuantizeDynamicOp::create(
        math.b, math.loc, RankedTensorType::get(shape, math.b.getI8Type()),
        fromBlocks(normalized, shape), isSigned(name));
    stored.writeState(name, codes);
    stored.writeState(absmaxName(name), absmax);
  }

  Value scalar(StringRef name) override { return stored.scalar(name); }

private:
  /// Adam's first moment takes signed codes, its second unsigned ones.
  static bool isSigned(StringRef name) { return name == kAverage; }
  static std::string absmaxName(StringRef name) {
    return (name + "_absmax").str();
  }
  /// `value` flattened, padded with zeros and cut into [blocks, size].
  Value toBlocks(Value value) {
    Value flat = buildReshape(math.b, math.loc, value, {blocks.elements});
    int64_t padded = blocks.count() * blocks.size;
    if (padded != blocks.elements)
      flat = buildPad(math.b, math.loc, flat, {0}, {padded - blocks.elements});
    return buildReshape(math.b, math.loc, flat, {blocks.count(), blocks.size});
  }
  /// The inverse of toBlocks: [blocks, size] to `shape`.
  Value fromBlocks(Value value, ArrayRef<int64_t> shape) {
    Value flat =
        buildReshape(math.b, math.loc, value, {blocks.count() * blocks.size});
    if (blocks.count() * blocks.size != blocks.elements)
      flat = buildSlice(math.b, math.loc, flat, {0}, {blocks.elements});
    return buildReshape(math.b, math.loc, flat, shape);
  }

  UpdateContext &stored;
  Blocks blocks;
};

/// bitsandbytes' AdamW8bit (block-wise, no percentile clipping): AdamW
/// whose moments are stored in 8 bits, those of parameters with fewer than
/// min_8bit_size elements in f32.
class AdamW8bit : public OptimizerOf<AdamW8bitAttr> {
  static bool isQuantized(AdamW8bitAttr adamw, RankedTensorType weights) {
    return weights.getNumElements() >=
           static_cast<int64_t>(adamw.getMin_8bitSize());
  }
  SmallVector<Hyperparameter>
  hyperparameters(AdamW8bitAttr adamw) const override {
    SmallVector<Hyperparameter> all = adamHyperparameters(adamw);
    all.push_back({"block_size", static_cast<double>(adamw.getBlockSize())});
    all.push_back(
        {"min_8bit_size", static_cast<double>(adamw.getMin_8bitSize())});
    return all;
  }
  SmallVector<StateSlot> stateSlots(AdamW8bitAttr adamw, RankedTensorType,
                                    RankedTensorType weights) const override {
    if (!isQuantized(adamw, weights))
      return adamState(weights);
    auto codes = weights.clone(IntegerType::get(weights.getContext(), 8));
    Blocks blocks{weights.getNumElements(),
                  static_cast<int64_t>(adamw.getBlockSize())};
    auto absmax = RankedTensorType::get({blocks.count()},
                                        Float32Type::get(weights.getContext()));
    return {{kAverage, codes},
            {kAverageAbsmax, absmax},
            {kSquareAverage, codes},
            {kSquareAverageAbsmax, absmax}};
  }
  SmallVector<StringRef> stepScalars(AdamW8bitAttr) const override {
    return {kLearningRate, kWeightDecayFactor, kStepSize, kBiasCorrection2Sqrt};
  }
  AdamW8bitAttr
  rebuildImpl(MLIRContext *context, Attribute like, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    AdamMoments moments = adamMomentsOf(like);
    auto same = dyn_cast_or_null<AdamW8bitAttr>(like);
    return AdamW8bitAttr::getChecked(
        emitError, context, APFloat(lr), moments.beta1, moments.beta2,
        moments.eps, APFloat(weightDecay), same ? same.getBlockSize() : 2048,
        same ? same.getMin_8bitSize() : 4096);
  }
  Value update(AdamW8bitAttr adamw, UpdateContext &context, Value param,
               Value grad) const override {
    auto type = cast<RankedTensorType>(param.getType());
    if (!isQuantized(adamw, type))
      return adamwUpdate(adamw, context, param, grad);
    QuantizedMoments moments(
        context,
        {type.getNumElements(), static_cast<int64_t>(adamw.getBlockSize())});
    return adamwUpdate(adamw, moments, param, grad);
  }
};
} // namespace

const Optimizer &mlir::gacc::getAdamW8bitOptimizer() {
  static const AdamW8bit adamw;
  return adamw;
}

const Optimizer &mlir::gacc::getAdamWOptimizer() {
  static const AdamW adamw;
  return adamw;
}

const Optimizer &mlir::gacc::getAdamOptimizer() {
  static const Adam adam;
  return adam;
}
