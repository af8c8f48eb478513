//===- ConfigureStep.cpp - the training options applied to a step ---------===//

#include "compiler/ConfigureStep.h"
#include "compiler/Passes.h"
#include "compiler/plan/MemoryPlan.h"
#include "mlir/IR/Verifier.h"
#include "passes/BatchSplit.h"
#include "passes/Passes.h"
#include "passes/Zero.h"
#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace mlir::gacc {
#define GEN_PASS_DEF_CONFIGURESTEP
#include "compiler/Passes.h.inc"
} // namespace mlir::gacc

namespace {
using Options = TrainingPipelineOptions;

/// The bytes of a byte-size option (memory-budget, remat-budget).
FailureOr<int64_t> byteSize(TrainStepOp step, StringRef flag, StringRef text) {
  std::optional<int64_t> bytes = parseByteSize(text);
  if (!bytes)
    return step.emitError("--")
           << flag << ": '" << text
           << "' is not a byte size (such as 8GiB, 512MiB or 1e9)";
  return *bytes;
}

LogicalResult applyPrecision(TrainStepOp step, const Options &options) {
  StringRef precision = options.precision.getValue();
  if (precision.empty())
    return success();
  std::optional<Precision> parsed = symbolizePrecision(precision);
  if (!parsed)
    return step.emitError("--precision: unknown type '")
           << precision << "' (f32, f16 or bf16)";
  step.setPrecisionAttr(PrecisionAttr::get(step.getContext(), *parsed));
  return success();
}

/// ranks / zero-stage distribute the step (as gacc-zero does).
LogicalResult applyZero(TrainStepOp step, const Options &options) {
  std::optional<int64_t> ranks = options.ranks.getValue(),
                         stage = options.zeroStage.getValue();
  if (!ranks && !stage)
    return success();
  ZeroAttr zero = step.getEffectiveZero();
  return distributeStep(step,
                        stage.value_or(static_cast<int64_t>(zero.getStage())),
                        ranks.value_or(static_cast<int64_t>(zero.getRanks())));
}

LogicalResult applyRemat(TrainStepOp step, const Options &options) {
  StringRef remat = options.remat.getValue(),
            rematBudget = options.rematBudget.getValue();
  if (remat.empty() && rematBudget.empty() &&
      !options.rematActivationBudget.getValue())
    return success();
  RematAttr current = step.getEffectiveRemat();
  RematPolicy policy = current.getPolicy();
  if (!remat.empty()) {
    std::optional<RematPolicy> parsed = symbolizeRematPolicy(remat);
    if (!parsed)
      return step.emitError("--remat: unknown policy '")
             << remat << "' (none, blocks, sqrt, matmuls or budget)";
    policy = *parsed;
  }
  uint64_t budget = current.getBudget();
  if (!rematBudget.empty()) {
    FailureOr<int64_t> bytes =
        byteSize(step, options.rematBudget.ArgStr, rematBudget);
    if (failed(bytes))
      return failure();
    budget = static_cast<uint64_t>(*bytes);
    if (policy != RematPolicy::budget)
      return step.emitError("--remat-budget is the budget policy's peak "
                            "(--remat budget); the policy is ")
             << stringifyRematPolicy(policy);
  }
  if (policy != RematPolicy::budget)
    budget = 0;
  step.setRematAttr(RematAttr::getChecked([&] { return step.emitError(); },
                                          step.getContext(), policy, budget));
  if (!step.getRematAttr())
    return failure();
  // A schedule the planner chose for another policy or budget.
  step->removeAttr(kRematActivationBudgetAttrName);
  if (std::optional<int64_t> activations =
          options.rematActivationBudget.getValue()) {
    if (policy != RematPolicy::budget)
      return step.emitError("remat-activation-budget is a schedule of the "
                            "budget policy (remat=budget); the policy is ")
             << stringifyRematPolicy(policy);
    if (*activations <= 0)
      return step.emitError("remat-activation-budget must be a positive "
                            "number of bytes, got ")
             << *activations;
    step->setAttr(kRematActivationBudgetAttrName,
                  Builder(step.getContext()).getI64IntegerAttr(*activations));
  }
  return verify(step);
}

/// memory-budget: the largest micro-batch whose plan fits.
LogicalResult fitMemoryBudget(TrainStepOp step, const Options &options) {
  if (step.getEffectiveRemat().getPolicy() == RematPolicy::budget)
    return step.emitError("give --memory-budget or the remat budget "
                          "policy, not both");
  FailureOr<int64_t> budget = byteSize(step, options.memoryBudget.ArgStr,
                                       options.memoryBudget.getValue());
  if (failed(budget))
    return failure();
  FailureOr<MemoryPlan> plan = fitMicroBatch(step, *budget, options.target);
  if (failed(plan))
    return failure();
  step.emitRemark() << "memory budget " << formatBytes(*budget)
                    << ": micro-batch " << plan->microBatchSize << " ("
                    << plan->accumulationSteps << " accumulation step"
                    << (plan->accumulationSteps == 1 ? "" : "s")
                    << "), planned peak " << formatBytes(plan->peakBytes());
  return success();
}

/// batch resizes the model; micro-batch / accumulation-steps /
/// memory-budget set the micro-batch; the step is verified again, so bad
/// values get its diagnostics.
LogicalResult applyBatch(TrainStepOp step, const Options &options) {
  if (std::optional<int64_t> batch = options.batch.getValue())
    if (failed(resizeBatch(step, *batch)))
      return failure();
  std::optional<int64_t> micro = options.microBatch.getValue(),
                         steps = options.accumulationSteps.getValue();
  bool budget = !options.memoryBudget.empty();
  if (micro.has_value() + steps.has_value() + budget > 1)
    return step.emitError("give one of --micro-batch, --accumulation-steps "
                          "and --memory-budget");
  if (budget)
    return fitMemoryBudget(step, options);
  if (steps) {
    if (*steps < 1)
      return step.emitError("--accumulation-steps must be positive, got ")
             << *steps;
    micro = llvm::divideCeil(step.getBatchSize(), *steps);
  }
  if (!micro)
    return success();
  step.setMicroBatchSizeAttr(
      Builder(step.getContext()).getI64IntegerAttr(*micro));
  return verify(step);
}

/// The `budget` policy: the planner turns the peak budget into the
/// activation budget gacc-remat schedules for (after the batch options:
/// remat applies inside each micro-batch). A step that has its activation
/// budget already is left alone: so are the copies the planner compiles
/// with the schedule it tries.
LogicalResult applyRematBudget(TrainStepOp step, const Options &options) {
  RematAttr remat = step.getEffectiveRemat();
  if (remat.getPolicy() != RematPolicy::budget ||
      step->hasAttr(kRematActivationBudgetAttrName))
    return success();
  FailureOr<MemoryPlan> plan = fitRematBudget(
      step, static_cast<int64_t>(remat.getBudget()), options.target);
  if (failed(plan))
    return failure();
  step.emitRemark() << "remat budget " << formatBytes(remat.getBudget())
                    << ": keeps " << formatBytes(plan->activationBytes)
                    << " of " << formatBytes(plan->remat.activationBytes)
                    << " activations, planned peak "
                    << formatBytes(plan->peakBytes());
  return success();
}

/// optimizer replaces the step's optimizer (keeping its learning rate and
/// weight decay), lr / weight-decay override them, grad-clip the step's
/// norm clipping.
LogicalResult applyOptimizer(TrainStepOp step, const Options &options) {
  StringRef name = options.optimizer.getValue();
  std::optional<double> lr = options.lr.getValue(),
                        decay = options.weightDecay.getValue(),
                        clip = options.gradClip.getValue();
  if (name.empty() && !lr && !decay && !clip)
    return success();
  FailureOr<const Optimizer *> current = lookupOptimizer(step);
  if (failed(current))
    return failure();
  const Optimizer *optimizer = *current;
  if (!name.empty() && !(optimizer = lookupOptimizer(name)))
    return step.emitError("unknown optimizer '")
           << name << "': expected one of " << registeredOptimizerNames();
  Attribute rebuilt = switchOptimizer(*optimizer, step.getOptimizer(), lr,
                                      decay, [&] { return step.emitError(); });
  if (!rebuilt)
    return failure();
  step.setOptimizerAttr(rebuilt);
  if (clip)
    step.setGradClipNormAttr(
        FloatAttr::get(Float64Type::get(step.getContext()), *clip));
  return verify(step);
}

/// lora adapts the parameters it names, in the step's module (gacc-lora).
LogicalResult applyAdapters(TrainStepOp step, const Options &options) {
  StringRef text = options.lora.getValue();
  if (text.empty())
    return success();
  FailureOr<LoraConfig> config =
      parseLoraConfig(text, [&] { return step.emitError(); });
  if (failed(config))
    return failure();
  return gacc::applyLora(step->getParentOfType<ModuleOp>(), *config);
}

/// lr-schedule sets the step's learning-rate schedule from
/// "KIND[,warmup=N][,total=N][,min_lr=X][,power=X]".
LogicalResult applySchedule(TrainStepOp step, const Options &options) {
  StringRef text = options.lrSchedule.getValue();
  if (text.empty())
    return success();
  SmallVector<StringRef> items;
  text.split(items, ',');
  StringRef kind = items.front();
  uint64_t warmup = 0, total = 0;
  double minLr = 0.0, power = 1.0;
  bool hasTotal = false;
  for (StringRef item : ArrayRef(items).drop_front()) {
    auto [key, value] = item.split('=');
    bool bad = true;
    if (key == "warmup")
      bad = value.getAsInteger(10, warmup);
    else if (key == "total")
      hasTotal = !(bad = value.getAsInteger(10, total));
    else if (key == "min_lr")
      bad = value.getAsDouble(minLr);
    else if (key == "power" && kind == "polynomial")
      bad = value.getAsDouble(power);
    if (bad)
      return step.emitError("--lr-schedule: '")
             << item << "' is not one of warmup=N, total=N, min_lr=X"
             << (kind == "polynomial" ? ", power=X" : "");
  }
  MLIRContext *context = step.getContext();
  auto emitError = [&] { return step.emitError("--lr-schedule: "); };
  Attribute schedule;
  if (kind == "constant" && items.size() > 1)
    return step.emitError("--lr-schedule: constant takes no options");
  if (kind == "constant")
    schedule = ConstantScheduleAttr::get(context);
  else if (kind != "cosine" && kind != "linear" && kind != "polynomial")
    return step.emitError("--lr-schedule: unknown schedule '")
           << kind << "' (constant, cosine, linear or polynomial)";
  else if (!hasTotal)
    return step.emitError("--lr-schedule: ")
           << kind << " needs total=N, the step its decay ends at";
  else if (kind == "cosine")
    schedule = WarmupCosineScheduleAttr::getChecked(emitError, context, warmup,
                                                    total, APFloat(minLr));
  else
    schedule = WarmupPolynomialScheduleAttr::getChecked(
        emitError, context, warmup, total, APFloat(minLr), APFloat(power));
  if (!schedule)
    return failure();
  step.setScheduleAttr(schedule);
  return verify(step);
}

/// The pass: its options are the pipeline's, bound to it.
struct ConfigureStepPass
    : public mlir::gacc::impl::ConfigureStepBase<ConfigureStepPass> {
  ConfigureStepPass() = default;
  // A copy binds options of its own; Pass::clone copies their values.
  ConfigureStepPass(const ConfigureStepPass &other)
      : ConfigureStepBase(other) {}

  void runOnOperation() override {
    Options values;
    values.copyFrom(options);
    TrainStepOp step =
        TrainStepOp::find(getOperation(), values.step.getValue());
    if (!step || failed(configureTrainStep(step, values)))
      signalPassFailure();
  }

  TrainingOptionList<Pass> options{*this};
};
} // namespace

LogicalResult
mlir::gacc::configureTrainStep(TrainStepOp step,
                               const TrainingPipelineOptions &options) {
  // What the state holds (adapters, optimizer) comes before the budgets
  // that plan it.
  return success(succeeded(applyAdapters(step, options)) &&
                 succeeded(applyOptimizer(step, options)) &&
                 succeeded(applySchedule(step, options)) &&
                 succeeded(applyPrecision(step, options)) &&
                 succeeded(applyZero(step, options)) &&
                 succeeded(applyRemat(step, options)) &&
                 succeeded(applyBatch(step, options)) &&
                 succeeded(applyRematBudget(step, options)));
}

std::unique_ptr<Pass>
mlir::gacc::createConfigureStep(const TrainingPipelineOptions &options) {
  auto pass = std::make_unique<ConfigureStepPass>();
  pass->options.copyFrom(options);
  return pass;
}
