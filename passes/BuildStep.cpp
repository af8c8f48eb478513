//===- BuildStep.cpp - the compiled entry points of a training step -------===//
//
// gacc_step is assembled by TrainingEntry::build, one named helper per
// stage of the step; gacc_eval by buildEvalEntry. The arenas and the inlined
// model are StepEntry.h's, the update is the optimizer's
// (optimizers/Optimizer.h), the collectives are ZeroCollectives.h's.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "passes/StepEntry.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_BUILDSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// One parameter's gradient on its way from the backward to the update.
struct Gradient {
  ParamOp param;
  /// Its slot. A 16-bit parameter's is 16-bit too (`low`); with loss
  /// scaling it keeps the scaled gradient (in f16 an unscaled one would
  /// underflow), as DeepSpeed's fp16 gradients do, and the update unscales
  /// what it reads.
  const Slot *slot;
  bool low;
  /// This rank's gradient, as the backward computes it (then unscaled, but
  /// for `low` ones).
  Value local;
  /// What the update reads: the reduced, unscaled gradient, or for `low`
  /// ones its 16-bit rounding that the slot keeps (see readBack).
  Value reduced;
};

/// The state and scalars of one parameter's update, in the arenas.
class ArenaUpdate final : public UpdateContext {
public:
  ArenaUpdate(TensorMath &math, Value finite, EntryBuilder &entry,
              ParamOp param, const llvm::StringMap<Value> &scalars,
              std::optional<UpdatedShard> shard)
      : UpdateContext(math, finite, ownWeightDecay(param), shard), entry(entry),
        param(param.getSymName()), scalars(scalars) {}
  Value sumOverRanks(Value partial) override {
    return entry.collectives.sumOverShards(math.b, math.loc, partial);
  }
  Value readState(StringRef name) override {
    return entry.readState(slotName(name));
  }
  /// Written by flush(), after the weight: the new state values are then
  /// computed before their slots are written, and code generation can
  /// compute a moment and the weight it updates in one pass.
  void writeState(StringRef name, Value value) override {
    pending.push_back({slotName(name), value});
  }
  void flush() {
    for (auto &[slot, value] : pending)
      entry.writeState(slot, value);
    pending.clear();
  }
  Value scalar(StringRef name) override {
    Value value = scalars.lookup(name);
    assert(value && "not one of the optimizer's per-step scalars");
    return value;
  }

private:
  static std::optional<double> ownWeightDecay(ParamOp param) {
    if (auto decay = param->getAttrOfType<FloatAttr>(kWeightDecayAttrName))
      return decay.getValueAsDouble();
    return std::nullopt;
  }
  std::string slotName(StringRef state) const {
    return (state + "." + param).str();
  }
  EntryBuilder &entry;
  StringRef param;
  const llvm::StringMap<Value> &scalars;
  SmallVector<std::pair<std::string, Value>> pending;
};

/// Builds gacc_step: forward, backward, reductions, norm, clipping, update.
class TrainingEntry {
public:
  TrainingEntry(OpBuilder &b, TrainStepOp step, const StepLayout &layout,
                const ZeroCollectives &collectives, func::FuncOp func)
      : b(b), loc(step.getLoc()), step(step), layout(layout),
        collectives(collectives),
        entry(b, loc, layout, collectives, func), m{b, loc, layout.element},
        lossScale(step.getEffectiveLossScale()) {}

  void build(func::FuncOp gradient) {
    SmallVector<Value> outputs = inlineGradientFunction(gradient);
    if (lossScale)
      unscaleGradients();
    outputs[0] = collectives.reduceLoss(b, loc, outputs[0]);
    entry.writeOutputs(outputs);
    reduceGradients();
    if (lossScale)
      checkFinite();
    readStepScalars();
    normAndClip();
    updateParameters();
    if (lossScale)
      updateLossScale();
    func::ReturnOp::create(b, loc);
  }

private:
  SmallVector<Value> inlineGradientFunction(func::FuncOp gradient);
  void unscaleGradients();
  void reduceGradients();
  void checkFinite();
  void readStepScalars();
  void normAndClip();
  void updateParameters();
  Value readBack(Gradient &grad);
  void updateLossScale();
  /// 0 + terms[0] + terms[1] + ...
  Value sum(ArrayRef<Value> terms);

  OpBuilder &b;
  Location loc;
  TrainStepOp step;
  const StepLayout &layout;
  const ZeroCollectives &collectives;
  EntryBuilder entry;
  TensorMath m;
  LossScaleAttr lossScale;

  SmallVector<Gradient> grads;
  /// 1 / loss scale (with loss scaling).
  Value inverse;
  /// The sums of the reduced gradients' squares and overflow probes (with
  /// loss scaling) on this rank.
  Value squares, probe;
  /// Whether every gradient is finite (with loss scaling).
  Value finite;
  /// The optimizer's per-step scalars by name.
  llvm::StringMap<Value> scalars;
  /// The clipping coefficient (with grad_clip_norm).
  Value clip;
};
} // namespace

/// The forward and backward pass: the model's outputs, and this rank's
/// gradients into `grads`.
SmallVector<Value>
TrainingEntry::inlineGradientFunction(func::FuncOp gradient) {
  SmallVector<Value> results = entry.inlineModel(gradient, /*training=*/true,
                                                 step.getAccumulationSteps());
  size_t numOutputs = step.getModelFunc().getNumResults();
  auto module = step->getParentOfType<ModuleOp>();
  for (auto [param, local] :
       llvm::zip_equal(getTrainableParams(module),
                       ArrayRef<Value>(results).drop_front(numOutputs))) {
    const Slot *slot = layout.state.find(("grad." + param.getSymName()).str());
    grads.push_back({param, slot, slot->type.getElementType() != layout.element,
                     local, Value()});
  }
  results.truncate(numOutputs);
  return results;
}

/// Dynamic loss scaling, as GradScaler.unscale_: divides the (scaled)
/// gradients by the loss scale, but the `low` ones. Each gradient is
/// unscaled where it is computed, so that the unscaled one is what lands in
/// its slot and no scaled copy of all gradients lives until the end of the
/// backward pass.
void TrainingEntry::unscaleGradients() {
  OpBuilder::InsertPoint end = b.saveInsertionPoint();
  Value scale = entry.readState(kLossScaleSlot);
  b.setInsertionPointAfterValue(scale);
  inverse = m.div(m.c(1.0), scale);
  Operation *inverseOp = inverse.getDefiningOp();
  for (Gradient &grad : grads) {
    if (grad.low)
      continue;
    Operation *def = grad.local.getDefiningOp();
    // After both (a gradient may be the scale itself, or come before it).
    if (def && def->getBlock() == inverseOp->getBlock() &&
        inverseOp->isBeforeInBlock(def))
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointAfter(inverseOp);
    grad.local = m.mul(grad.local, inverse);
  }
  b.restoreInsertionPoint(end);
}

/// sum(g·0): 0 when every element of g is finite, NaN otherwise (the
/// overflow probe of dynamic loss scaling), computed in f32 (widening is
/// exact; 16-bit arithmetic on the CPU is not native).
static Value buildFiniteProbe(TensorMath &m, Value grad) {
  auto type = cast<RankedTensorType>(grad.getType());
  if (type.getElementType() != m.element)
    grad = CastOp::create(m.b, m.loc, type.clone(m.element), grad);
  return m.sumAll(m.mul(grad, m.c(0.0)));
}

/// `value` without the zeros a gacc.pad put around it (a convolution's
/// weight gradient, zero for the taps that read only padding): its sums of
/// squares and overflow probe are the same, over fewer elements.
static Value unpadded(Value value) {
  while (auto pad = value.getDefiningOp<PadOp>())
    value = pad.getInput();
  return value;
}

/// Each gradient as soon as the backward has computed it (as DDP's and
/// DeepSpeed's buckets are): reduced once per step (ZeroCollectives); kept
/// in its slot; its squares and overflow probe taken. A 16-bit slot is then
/// all the update reads, so that no f32 gradient waits from the backward to
/// the update.
void TrainingEntry::reduceGradients() {
  SmallVector<Value> squareTerms, probeTerms;
  bool keepsLocal = collectives.keepsLocalGradient();
  OpBuilder::InsertPoint end = b.saveInsertionPoint();
  for (Gradient &grad : grads) {
    // After the gradient and 1 / scale, whichever comes later.
    Operation *last = nullptr;
    for (Value after : {grad.local, inverse})
      if (Operation *def = after ? after.getDefiningOp() : nullptr;
          def && def->getBlock() == end.getBlock() &&
          (!last || last->isBeforeInBlock(def)))
        last = def;
    if (last)
      b.setInsertionPointAfter(last);
    Value r = collectives.reduceGradient(b, loc, grad.local,
                                         grad.param.getTensorType());
    auto toSlotType = [&](Value value) -> Value {
      if (!grad.low)
        return value;
      return CastOp::create(b, loc,
                            cast<RankedTensorType>(value.getType())
                                .clone(grad.slot->type.getElementType()),
                            value);
    };
    Value kept = toSlotType(keepsLocal ? grad.local : r);
    entry.write(entry.state, *grad.slot, kept);
    Value unscaled = grad.low && inverse ? m.mul(r, inverse) : r;
    Value squared = unpadded(unscaled);
    squareTerms.push_back(m.sumAll(m.mul(squared, squared)));
    // The update reads the gradient as its slot keeps it (stage 1: the
    // reduced shard rounded alike).
    Value rounded = grad.low ? (keepsLocal ? toSlotType(r) : kept) : Value();
    if (lossScale)
      probeTerms.push_back(
          buildFiniteProbe(m, grad.low ? rounded : unpadded(r)));
    grad.reduced = grad.low ? rounded : unscaled;
    b.restoreInsertionPoint(end);
  }
  squares = sum(squareTerms);
  if (lossScale)
    probe = sum(probeTerms);
}

Value TrainingEntry::sum(ArrayRef<Value> terms) {
  Value total = m.c(0.0);
  for (Value term : terms)
    total = m.add(total, term);
  return total;
}

/// Whether every gradient of every rank is finite.
void TrainingEntry::checkFinite() {
  finite = m.compare(ComparePredicate::eq,
                     collectives.sumOverShards(b, loc, probe), m.c(0.0));
}

void TrainingEntry::readStepScalars() {
  for (const std::string &name : layout.stepScalars)
    scalars[name] = entry.readIo(hyperSlotName(name));
}

/// The global gradient norm into io; with grad_clip_norm, the coefficient
/// of torch.nn.utils.clip_grad_norm_: min(1, max / (norm + 1e-6)).
void TrainingEntry::normAndClip() {
  Value norm = m.sqrt(collectives.sumOverShards(b, loc, squares));
  entry.writeIo("grad_norm", norm);
  std::optional<APFloat> maxNorm = step.getGradClipNorm();
  if (!maxNorm)
    return;
  Value coef = m.div(m.c(maxNorm->convertToDouble()), m.add(norm, m.c(1e-6)));
  clip =
      m.select(m.compare(ComparePredicate::lt, coef, m.c(1.0)), coef, m.c(1.0));
}

/// A 16-bit gradient as its slot keeps it, in f32 and unscaled; the barrier
/// keeps CSE from reusing the backward's f32 value instead, which would
/// keep it alive until here.
Value TrainingEntry::readBack(Gradient &grad) {
  auto type = cast<RankedTensorType>(grad.reduced.getType());
  Value slotValue = OptimizationBarrierOp::create(b, loc, TypeRange{type},
                                                  ValueRange{grad.reduced})
                        .getResult(0);
  Value g = CastOp::create(b, loc, type.clone(layout.element), slotValue);
  return inverse ? m.mul(g, inverse) : g;
}

/// The optimizer's update of every parameter: of the f32 weights (the
/// parameter's own, or the master weights of a 16-bit parameter), whole or
/// this rank's shard, then written back whole.
void TrainingEntry::updateParameters() {
  Value rank = collectives.updatesShards() ? entry.rankIndex() : Value();
  bool wholeParameters = collectives.updatesShardsOfWholeParameters();
  for (Gradient &grad : grads) {
    StringRef name = grad.param.getSymName();
    const Slot &paramSlot = *layout.state.find(name);
    Value g = grad.low ? readBack(grad) : grad.reduced;
    Value used = clip ? m.mul(g, clip) : g;
    const Slot *master = layout.state.find((kMasterPrefix + name).str());
    Value current = entry.read(entry.state, master ? *master : paramSlot);
    if (wholeParameters && !master)
      current = collectives.localShard(b, loc, current, rank);
    std::optional<UpdatedShard> shard;
    if (rank)
      shard = UpdatedShard{grad.param.getTensorType().clone(layout.element),
                           rank, collectives.getRanks()};
    ArenaUpdate context(m, finite, entry, grad.param, scalars, shard);
    Value updated = layout.optimizer->buildUpdate(step.getOptimizer(), context,
                                                  current, used);
    if (master) {
      // The master weights' write after their rounding: gacc-fuse-elementwise
      // then makes update and rounding one loop (the slot writes follow the
      // op it fuses into), unless ZeRO gathers the rounding first.
      auto type = cast<RankedTensorType>(updated.getType());
      Value rounded = CastOp::create(
          b, loc, type.clone(paramSlot.type.getElementType()), updated);
      entry.write(entry.state, *master, updated);
      updated = rounded;
    }
    if (wholeParameters)
      updated = collectives.gather(
          b, loc, updated,
          grad.param.getTensorType().clone(paramSlot.type.getElementType()));
    entry.write(entry.state, paramSlot, updated);
    context.flush();
  }
}

/// GradScaler.update: after an overflow, back off and restart the count of
/// good steps; after `growth_interval` good steps in a row, grow.
void TrainingEntry::updateLossScale() {
  Value scale = entry.readState(kLossScaleSlot);
  Value good = m.add(entry.readState(kGrowthTrackerSlot), m.c(1.0));
  Value grow =
      m.compare(ComparePredicate::ge, good,
                m.c(static_cast<double>(lossScale.getGrowthInterval())));
  Value grown =
      m.mul(scale, m.c(lossScale.getGrowthFactor().convertToDouble()));
  Value backedOff =
      m.mul(scale, m.c(lossScale.getBackoffFactor().convertToDouble()));
  entry.writeState(kLossScaleSlot,
                   m.select(finite, m.select(grow, grown, scale), backedOff));
  entry.writeState(kGrowthTrackerSlot,
                   m.select(finite, m.select(grow, m.c(0.0), good), m.c(0.0)));
  entry.writeIo(kFoundInfSlot, m.select(finite, m.c(0.0), m.c(1.0)));
}

/// gacc_eval: the forward pass (a micro-batch at a time when the step
/// accumulates: `eval_model`), dropout skipped, batch norm with its running
/// statistics and no assign (evaluation updates nothing); the loss of the
/// whole batch over the ranks.
static func::FuncOp buildEvalEntry(OpBuilder &b, TrainStepOp step,
                                   const StepLayout &layout,
                                   const ZeroCollectives &collectives) {
  func::FuncOp func =
      createStepEntry(b, step->getParentOfType<ModuleOp>(), "gacc_eval");
  EntryBuilder entry(b, step.getLoc(), layout, collectives, func);
  func::FuncOp model = step.getModelFunc();
  func::FuncOp forward = step.getEvalModelFunc();
  SmallVector<Value> results = entry.inlineModel(
      forward ? forward : model, /*training=*/false, /*microBatches=*/1);
  results[0] = collectives.reduceEvalLoss(b, step.getLoc(), results[0], model);
  entry.writeOutputs(results);
  func::ReturnOp::create(b, step.getLoc());
  return func;
}

/// A gradient function that reads the loss scale needs loss scaling.
static LogicalResult verifyLossScaleReads(TrainStepOp step,
                                          func::FuncOp gradient) {
  if (step.getEffectiveLossScale())
    return success();
  WalkResult scaled = gradient.walk([&](LossScaleOp op) {
    op.emitOpError("reads the loss scale, but step '")
        << step.getSymName()
        << "' has no loss scaling (precision f16 or a loss_scale attribute)";
    return WalkResult::interrupt();
  });
  return failure(scaled.wasInterrupted());
}

/// The gradient function returns the model's results, then one gradient
/// per trainable parameter: of the parameter's type, or this rank's shard of it
/// when gacc-accumulate reduce-scattered every micro-batch's.
static LogicalResult verifyGradientTypes(TrainStepOp step,
                                         func::FuncOp gradient) {
  auto module = step->getParentOfType<ModuleOp>();
  SmallVector<ParamOp> params = getTrainableParams(module);
  size_t outputs = step.getModelFunc().getNumResults();
  if (gradient.getNumResults() != outputs + params.size())
    return step.emitOpError("gradient '")
           << gradient.getSymName() << "' returns " << gradient.getNumResults()
           << " values, expected " << outputs << " model results and "
           << params.size() << " gradients";
  int64_t ranks = step.getEffectiveZero().getRanks();
  for (auto [param, type] :
       llvm::zip_equal(params, gradient.getResultTypes().drop_front(outputs))) {
    RankedTensorType expected = param.getTensorType();
    if (step.reducesGradientsPerMicroBatch())
      expected = shardType(expected, ranks);
    if (type != expected)
      return step.emitOpError("gradient '")
             << gradient.getSymName() << "' returns " << type
             << " for parameter '" << param.getSymName() << "', expected "
             << expected;
  }
  return success();
}

namespace {
struct BuildStepPass : public gacc::impl::BuildStepBase<BuildStepPass> {
  using BuildStepBase::BuildStepBase;
  void runOnOperation() override;
};
} // namespace

void BuildStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  TrainStepOp step = TrainStepOp::find(module, stepName);
  if (!step)
    return signalPassFailure();
  FailureOr<StepLayout> layout = computeStepLayout(step);
  if (failed(layout))
    return signalPassFailure();
  func::FuncOp gradient = step.getGradientFunc();
  if (!gradient) {
    step.emitOpError("has no gradient function: run gacc-autodiff (and "
                     "gacc-accumulate for micro-batches) first");
    return signalPassFailure();
  }
  if (failed(verifyLossScaleReads(step, gradient)) ||
      failed(verifyGradientTypes(step, gradient)))
    return signalPassFailure();

  OpBuilder b(module.getContext());
  ZeroCollectives collectives(step);
  func::FuncOp stepFunc = createStepEntry(b, module, "gacc_step");
  TrainingEntry(b, step, *layout, collectives, stepFunc).build(gradient);
  func::FuncOp evalFunc = buildEvalEntry(b, step, *layout, collectives);

  // Only the entry points remain.
  for (Operation &op : llvm::make_early_inc_range(module.getOps()))
    if (&op != stepFunc && &op != evalFunc)
      op.erase();
}
