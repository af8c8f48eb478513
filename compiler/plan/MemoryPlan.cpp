//===- MemoryPlan.cpp - what a training step needs, before it runs ----------===//

#include "compiler/plan/MemoryPlan.h"
#include "compiler/Describe.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "dialects/gacc/GaccShapes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "passes/StepLayout.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::gacc;

/// Runs `pm` on a copy the planner analyses: its warnings (such as batch
/// norm's with micro-batches) are the step's, which the real compilation
/// (or `gacc plan`) reports once, not once per candidate the planner tries.
/// The result is verified once, as the compiler's is (verifying after each
/// pass was a third of a plan's time).
static LogicalResult runOnCopy(PassManager &pm, ModuleOp copy) {
  ScopedDiagnosticHandler quiet(copy.getContext(), [](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Warning);
  });
  pm.enableVerifier(false);
  return failure(failed(pm.run(copy)) || failed(verify(copy)));
}

/// `step`'s module, configured (gacc-configure-step) and differentiated for
/// `target` (which attention it fuses): what every rematerialization
/// schedule of the step shares, so the planner differentiates once per
/// micro-batch and precision.
static FailureOr<OwningOpRef<ModuleOp>> differentiate(TrainStepOp step,
                                                      StringRef target) {
  OwningOpRef<ModuleOp> module = step->getParentOfType<ModuleOp>().clone();
  PassManager pm(module->getContext());
  TrainingPipelineOptions options;
  options.step = step.getSymName().str();
  options.target = target.str();
  pm.addPass(createConfigureStep(options));
  buildDifferentiationPipeline(pm, options);
  if (failed(runOnCopy(pm, *module)))
    return failure();
  return module;
}

/// A copy of `differentiated` whose step has `step`'s remat settings (the
/// schedule the planner tries), and that step.
static std::pair<OwningOpRef<ModuleOp>, TrainStepOp>
copyWithRemat(ModuleOp differentiated, TrainStepOp step) {
  OwningOpRef<ModuleOp> copy = differentiated.clone();
  TrainStepOp copied = TrainStepOp::find(*copy, step.getSymName());
  if (RematAttr remat = step.getRematAttr())
    copied.setRematAttr(remat);
  else
    copied.removeRematAttr();
  if (Attribute budget = step->getAttr(kRematActivationBudgetAttrName))
    copied->setAttr(kRematActivationBudgetAttrName, budget);
  else
    copied->removeAttr(kRematActivationBudgetAttrName);
  return {std::move(copy), copied};
}

/// The gradient function of one micro-batch of a differentiated step (of
/// its whole batch without micro-batches).
static func::FuncOp microBatchGradient(TrainStepOp differentiated) {
  func::FuncOp grad = differentiated.getMicroGradientFunc();
  return grad ? grad : differentiated.getGradientFunc();
}

/// Bytes of the low-precision copies of parameters that gacc-mixed-precision
/// placed in `grad` (they live in the workspace during the step), but for
/// the parameters the state keeps in 16 bits.
static int64_t weightCopyBytes(func::FuncOp grad,
                               const llvm::StringSet<> &kept) {
  int64_t bytes = 0;
  grad.walk([&](CastOp cast) {
    auto load = cast.getInput().getDefiningOp<LoadOp>();
    if (load && !kept.contains(load.getName()) &&
        isa_and_nonnull<ParamOp>(SymbolTable::lookupNearestSymbolFrom(
            load, load.getNameAttr())))
      bytes += getStaticByteSize(cast.getType()).value_or(0);
  });
  return bytes;
}

/// What the backward of one micro-batch reads, before and after the step's
/// rematerialization policy; sets `plan.weightCopyBytes`.
/// With `schedule`, also a hash of the rematerialized gradient function's
/// text: schedules with equal hashes are the same step.
static FailureOr<RematReport> activationReport(TrainStepOp step,
                                               ModuleOp differentiated,
                                               MemoryPlan &plan,
                                               size_t *schedule = nullptr) {
  auto [scratch, copied] = copyWithRemat(differentiated, step);
  func::FuncOp grad = microBatchGradient(copied);
  FailureOr<llvm::StringSet<>> kept = lowPrecisionParams(step);
  if (failed(kept))
    return failure();
  plan.weightCopyBytes = weightCopyBytes(grad, *kept);
  FailureOr<RematReport> report = rematerialize(grad, getRematConfig(copied));
  if (succeeded(report) && schedule) {
    std::string text;
    llvm::raw_string_ostream os(text);
    grad.print(os);
    *schedule = llvm::hash_value(text);
  }
  return report;
}

/// Elements the collectives of `gacc_step` move per step, as the runtime's
/// communicator counts them: an all-reduce of n elements 2n, a
/// reduce-scatter or all-gather n (the whole tensor), a broadcast n; times
/// the trips of the loops around them.
static int64_t communicatedElements(ModuleOp module) {
  auto step = module.lookupSymbol<func::FuncOp>("gacc_step");
  if (!step)
    return 0;
  int64_t total = 0;
  step.walk([&](Operation *op) {
    int64_t elements = 0;
    if (auto allReduce = dyn_cast<AllReduceOp>(op))
      elements = 2 * allReduce.getType().getNumElements();
    else if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      elements = scatter.getInput().getType().getNumElements();
    else if (auto gather = dyn_cast<AllGatherOp>(op))
      elements = gather.getType().getNumElements();
    else if (auto broadcast = dyn_cast<CollectiveBroadcastOp>(op))
      elements = broadcast.getType().getNumElements();
    else
      return;
    total += elements * runsPerCall(op);
  });
  return total;
}

/// The plan of `step` (with its remat settings) from its `differentiated`
/// module, as `target` lowers it.
static FailureOr<MemoryPlan> planDifferentiated(TrainStepOp step,
                                                ModuleOp differentiated,
                                                StringRef target) {
  std::optional<StepTarget> targetKind = parseStepTarget(target);
  if (!targetKind)
    return step.emitError("no memory plan for the unknown target ") << target;
  MemoryPlan plan;
  plan.batchSize = step.getBatchSize();
  plan.microBatchSize = step.getEffectiveMicroBatchSize();
  plan.accumulationSteps = step.getAccumulationSteps();
  FailureOr<StepLayout> layout = computeStepLayout(step);
  if (failed(layout))
    return failure();
  plan.state = computeStateMemory(step, *layout);
  plan.stateArenaBytes = layout->state.bytes;
  plan.batchBytes = layout->batch.bytes;
  plan.ioBytes = layout->io.bytes;
  plan.precision = step.getEffectivePrecision();
  FailureOr<RematReport> remat = activationReport(step, differentiated, plan);
  if (failed(remat))
    return failure();
  plan.remat = *remat;
  plan.rematPolicy = step.getEffectiveRemat().getPolicy();
  plan.activationBytes = remat->savedBytes;

  // Compile a copy as far as the memory plan, counting its collectives.
  OwningOpRef<ModuleOp> module = copyWithRemat(differentiated, step).first;
  PassManager pm(module->getContext());
  TrainingPipelineOptions options;
  options.step = step.getSymName().str();
  buildStepPipeline(pm, options);
  if (failed(runOnCopy(pm, *module)))
    return failure();
  plan.ranks = step.getEffectiveZero().getRanks();
  plan.zeroStage = step.getEffectiveZero().getStage();
  plan.communicatedElements = communicatedElements(*module);
  pm.clear();
  buildGaccToLinalgPipeline(pm, *targetKind);
  buildBufferizePipeline(pm);
  if (failed(runOnCopy(pm, *module)))
    return failure();
  ::gacc::rt::ModelInfo workspace;
  describeWorkspace(*module, workspace);
  plan.workspaceBytes = workspace.workspaceBytes;
  plan.unplannedBytes = workspace.unplannedBytes;
  if (auto entry = module->lookupSymbol<func::FuncOp>("gacc_step"))
    plan.work = countStepWork(entry);
  return plan;
}

SmallVector<std::pair<std::string, int64_t>>
mlir::gacc::optimizerStateByChoice(TrainStepOp step) {
  SmallVector<std::pair<std::string, int64_t>> choices;
  Attribute current = step.getOptimizer();
  // Choices that cannot run here say so with diagnostics, not wanted.
  ScopedDiagnosticHandler quiet(step.getContext(),
                                [](Diagnostic &) { return success(); });
  for (const Optimizer *candidate : registeredOptimizers()) {
    StringRef name = candidate->getName();
    Attribute choice =
        switchOptimizer(*candidate, current, std::nullopt, std::nullopt,
                        [&] { return step.emitError(); });
    if (!choice)
      continue;
    step.setOptimizerAttr(choice);
    if (FailureOr<StepLayout> layout = computeStepLayout(step);
        succeeded(layout))
      choices.emplace_back(name.str(),
                           computeStateMemory(step, *layout).optimizerBytes);
  }
  step.setOptimizerAttr(current);
  return choices;
}

FailureOr<MemoryPlan> mlir::gacc::planMemory(TrainStepOp step,
                                             StringRef target) {
  FailureOr<OwningOpRef<ModuleOp>> differentiated = differentiate(step, target);
  if (failed(differentiated))
    return failure();
  return planDifferentiated(step, **differentiated, target);
}

FailureOr<MemoryPlan> mlir::gacc::fitMicroBatch(TrainStepOp step,
                                                int64_t budgetBytes,
                                                StringRef target,
                                                const MemoryPlan *wholeBatch,
                                                MemoryPlan *smallestPlan) {
  Builder b(step.getContext());
  auto planFor = [&](int64_t micro) {
    step.setMicroBatchSizeAttr(b.getI64IntegerAttr(micro));
    return planMemory(step, target);
  };
  // The seeds' advice: the largest micro-batch that fits, then accumulate.
  int64_t batch = step.getRankBatchSize();
  FailureOr<MemoryPlan> whole =
      wholeBatch ? FailureOr<MemoryPlan>(*wholeBatch) : planFor(batch);
  step.setMicroBatchSizeAttr(b.getI64IntegerAttr(batch));
  if (failed(whole) || whole->peakBytes() <= budgetBytes)
    return whole;
  FailureOr<MemoryPlan> smallest = batch == 1 ? whole : planFor(1);
  if (failed(smallest))
    return failure();
  if (smallest->peakBytes() > budgetBytes) {
    if (smallestPlan)
      *smallestPlan = *smallest;
    return step.emitError("no micro-batch fits in the memory budget of ")
           << formatBytes(budgetBytes) << ": the smallest (1 example) needs "
           << formatBytes(smallest->peakBytes()) << " ("
           << smallest->peakBytes() << " bytes)";
  }
  // The largest that fits lies in [low, high). Memory grows with the
  // micro-batch, almost linearly: probe where the line through the
  // bracket's peaks meets the budget (then the one after it, which the
  // line says does not fit), and bisect when two probes in a row did not
  // halve the bracket.
  MemoryPlan best = *smallest;
  int64_t low = 1, high = batch;
  double lowPeak = smallest->peakBytes(), highPeak = whole->peakBytes();
  for (int slowProbes = 0; high - low > 1;) {
    int64_t probe = low + (high - low) / 2;
    if (slowProbes < 2)
      probe = std::clamp<int64_t>(
          low + static_cast<int64_t>((budgetBytes - lowPeak) /
                                     (highPeak - lowPeak) * (high - low)),
          low + 1, high - 1);
    int64_t bracket = high - low;
    FailureOr<MemoryPlan> plan = planFor(probe);
    if (failed(plan))
      return failure();
    if (plan->peakBytes() <= budgetBytes) {
      low = probe;
      lowPeak = plan->peakBytes();
      best = *plan;
    } else {
      high = probe;
      highPeak = plan->peakBytes();
    }
    slowProbes = 2 * (high - low) > bracket ? slowProbes + 1 : 0;
  }
  // As few accumulation steps as that allows, over micro-batches as even as
  // possible (16 as 6+6+4 rather than 7+7+2): the same number of steps,
  // less memory.
  int64_t steps = llvm::divideCeil(batch, low);
  int64_t even = llvm::divideCeil(batch, steps);
  if (even == low) {
    step.setMicroBatchSizeAttr(b.getI64IntegerAttr(low));
    return best;
  }
  return planFor(even);
}

FailureOr<MemoryPlan> mlir::gacc::fitRematBudget(TrainStepOp step,
                                                 int64_t budgetBytes,
                                                 StringRef target,
                                                 bool anyFit) {
  MLIRContext *context = step.getContext();
  /// A schedule to try: a policy, and for `budget` the DP's activation
  /// budget.
  struct Candidate {
    RematPolicy policy;
    int64_t activationBudget = 0;
  };
  auto configure = [&](const Candidate &candidate) {
    bool budget = candidate.policy == RematPolicy::budget;
    step.setRematAttr(RematAttr::get(
        context, candidate.policy,
        budget ? static_cast<uint64_t>(budgetBytes) : 0));
    if (budget)
      step->setAttr(kRematActivationBudgetAttrName,
                    Builder(context).getI64IntegerAttr(
                        candidate.activationBudget));
    else
      step->removeAttr(kRematActivationBudgetAttrName);
  };
  // Every candidate is the same differentiated step with another schedule:
  // differentiate once (configured without remat, so that
  // gacc-configure-step does not plan the budget again).
  configure({RematPolicy::none});
  FailureOr<OwningOpRef<ModuleOp>> differentiated = differentiate(step, target);
  if (failed(differentiated))
    return failure();
  auto planWith = [&](const Candidate &candidate) {
    configure(candidate);
    return planDifferentiated(step, **differentiated, target);
  };
  // Everything but the kept activations, from the plan without remat.
  FailureOr<MemoryPlan> keepAll = planWith({RematPolicy::none});
  if (failed(keepAll))
    return failure();
  if (keepAll->peakBytes() <= budgetBytes) // Nothing to recompute.
    return anyFit ? keepAll
                  : planWith({RematPolicy::budget,
                              std::numeric_limits<int64_t>::max() / 2});
  func::FuncOp grad = microBatchGradient(
      TrainStepOp::find(**differentiated, step.getSymName()));
  FailureOr<int64_t> least = minimumRematActivationBytes(grad);
  if (failed(least))
    return failure();
  // The least-memory schedule must fit.
  Candidate bestCandidate{RematPolicy::budget, *least};
  FailureOr<MemoryPlan> best = planWith(bestCandidate);
  if (failed(best))
    return failure();
  if (best->peakBytes() > budgetBytes)
    return step.emitError("no rematerialization schedule fits in ")
           << formatBytes(budgetBytes) << ": the least memory any needs is "
           << formatBytes(best->peakBytes()) << " (" << best->peakBytes()
           << " bytes)";
  if (anyFit) {
    configure(bestCandidate);
    return best;
  }
  // The cost model counts activations (kept, and recomputed ones at once),
  // the planner the whole peak, and the two do not move in lockstep: try
  // activation budgets from the least to a little more than what no remat
  // keeps (the model counts recomputed values on top), and the fixed
  // segmentations, which are schedules too (the model bounds their
  // recompute from above); let the planner judge and keep the cheapest
  // that fits.
  // Budgets near each other often choose the same schedule: each distinct
  // (bytes, cost) is tried once, by the bytes it needs (which choose a
  // schedule as cheap again).
  constexpr int kTries = 20;
  int64_t span = keepAll->activationBytes * 6 / 5 - *least;
  SmallVector<int64_t> budgets;
  for (int i = 1; i <= kTries; ++i)
    budgets.push_back(*least + span * i / kTries);
  FailureOr<SmallVector<std::optional<int64_t>>> chosen =
      rematBudgetSchedules(grad, budgets);
  if (failed(chosen))
    return failure();
  SmallVector<Candidate> candidates;
  llvm::SmallDenseSet<int64_t> distinct;
  for (std::optional<int64_t> memory : *chosen)
    if (memory && distinct.insert(*memory).second)
      candidates.push_back({RematPolicy::budget, *memory});
  candidates.append({{RematPolicy::sqrt}, {RematPolicy::matmuls}});
  bool hasBlocks = false;
  step.getModelFunc().walk([&](CheckpointOp) { hasBlocks = true; });
  if (hasBlocks)
    candidates.push_back({RematPolicy::blocks});
  // The cheapest schedule that fits is the first that fits in order of
  // recompute cost, which the rematerialization report gives for a small
  // part of a plan's time: plan in that order and stop there. A fixed
  // segmentation may be a budget schedule too: plan each schedule once.
  struct Priced {
    double cost;
    size_t schedule;
    Candidate candidate;
  };
  SmallVector<Priced> priced;
  for (const Candidate &candidate : candidates) {
    configure(candidate);
    MemoryPlan scratch;
    size_t schedule = 0;
    FailureOr<RematReport> report =
        activationReport(step, **differentiated, scratch, &schedule);
    if (failed(report))
      return failure();
    priced.push_back({report->recomputeCost, schedule, candidate});
  }
  llvm::stable_sort(
      priced, [](const Priced &a, const Priced &b) { return a.cost < b.cost; });
  llvm::DenseSet<size_t> planned;
  for (const auto &[cost, schedule, candidate] : priced) {
    if (cost >= best->remat.recomputeCost)
      break;
    if (!planned.insert(schedule).second)
      continue;
    FailureOr<MemoryPlan> plan = planWith(candidate);
    if (failed(plan))
      return failure();
    if (plan->peakBytes() <= budgetBytes) {
      best = plan;
      bestCandidate = candidate;
      break;
    }
  }
  configure(bestCandidate);
  return best;
}

std::optional<int64_t> mlir::gacc::parseByteSize(StringRef text) {
  text = text.trim();
  // The unit is the trailing letters; the rest is a number ("1.5", "1e9").
  size_t unitStart = text.size();
  while (unitStart > 0 && llvm::isAlpha(text[unitStart - 1]))
    --unitStart;
  std::string unit = text.drop_front(unitStart).lower();
  double value = 0;
  if (text.take_front(unitStart).trim().getAsDouble(value))
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1},       {"b", 1},      {"kb", 1e3},        {"mb", 1e6},
      {"gb", 1e9},   {"tb", 1e12},  {"kib", 0x1p10},    {"mib", 0x1p20},
      {"gib", 0x1p30}, {"tib", 0x1p40}};
  for (auto [name, scale] : units)
    if (unit == name) {
      double bytes = value * scale;
      if (!(bytes >= 0 && bytes < 0x1p62))
        return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  return std::nullopt;
}

static std::string shapeString(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(type.getShape(), os, "x");
  if (type.getRank() == 0)
    os << "scalar";
  return text;
}

void mlir::gacc::printMemoryPlan(raw_ostream &os, TrainStepOp step,
                           const MemoryPlan &plan,
                           const MeasuredMemory *measured) {
  auto module = step->getParentOfType<ModuleOp>();
  ZeroAttr zero = step.getEffectiveZero();
  os << "step @" << step.getSymName() << ": model @" << step.getModel()
     << ", batch " << plan.batchSize << " (micro-batch " << plan.microBatchSize
     << ", " << plan.accumulationSteps << " accumulation step"
     << (plan.accumulationSteps == 1 ? "" : "s") << ")\n";
  os << "optimizer " << step.getOptimizer() << "\n";
  os << "schedule " << step.getEffectiveSchedule() << ", precision "
     << stringifyPrecision(step.getEffectivePrecision()) << ", remat "
     << stringifyRematPolicy(step.getEffectiveRemat().getPolicy())
     << ", ZeRO stage " << zero.getStage() << " on " << zero.getRanks()
     << " rank" << (zero.getRanks() == 1 ? "" : "s") << "\n\n";

  size_t nameWidth = 9;
  for (ParamOp param : module.getOps<ParamOp>())
    nameWidth = std::max(nameWidth, param.getSymName().size());
  os << llvm::left_justify("parameter", nameWidth) << "  "
     << llvm::left_justify("shape", 14) << llvm::left_justify("type", 6)
     << llvm::right_justify("elements", 12) << llvm::right_justify("bytes", 12)
     << "\n";
  for (ParamOp param : module.getOps<ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    std::string elementType;
    llvm::raw_string_ostream(elementType) << type.getElementType();
    os << llvm::left_justify(param.getSymName(), nameWidth) << "  "
       << llvm::left_justify(shapeString(type), 14)
       << llvm::left_justify(elementType, 6)
       << llvm::right_justify(std::to_string(type.getNumElements()), 12)
       << llvm::right_justify(formatBytes(getStaticByteSize(type).value_or(0)), 12)
       << (param.getFrozen() ? "  frozen" : "") << "\n";
  }
  int64_t frozen = llvm::count_if(module.getOps<ParamOp>(),
                                  [](ParamOp param) { return param.getFrozen(); });
  os << plan.state.parameterCount << " parameters";
  if (frozen)
    os << " (" << frozen << " frozen: no gradient, no optimizer state)";
  os << ", " << plan.state.parameterElements << " elements";
  if (frozen)
    os << ", " << plan.state.trainableElements << " trainable ("
       << llvm::format("%.2f",
                       100.0 * plan.state.trainableElements /
                           std::max<int64_t>(plan.state.parameterElements, 1))
       << "%)";
  os << "\n\n";

  if (plan.ranks == 1)
    os << "memory of one step (one rank, unsharded):\n";
  else
    os << "memory of one step on each of " << plan.ranks
       << " ranks (ZeRO stage " << plan.zeroStage << "):\n";
  auto row = [&](StringRef what, int64_t bytes, StringRef note = "") {
    os << "  " << llvm::left_justify(what, 18)
       << llvm::right_justify(formatBytes(bytes), 12);
    if (!note.empty())
      os << "  " << note;
    os << "\n";
  };
  row("parameters", plan.state.parameterBytes);
  row("gradients", plan.state.gradientBytes);
  row("optimizer state", plan.state.optimizerBytes);
  if (!plan.optimizerStateByChoice.empty()) {
    std::string choices;
    llvm::raw_string_ostream list(choices);
    list << "with --optimizer:";
    for (const auto &[name, bytes] : plan.optimizerStateByChoice)
      list << " " << name << " " << formatBytes(bytes) << ",";
    choices.pop_back();
    os << "    " << choices << "\n";
  }
  row("batch", plan.batchBytes,
      plan.ranks == 1 ? "inputs of the global batch" : "inputs of this rank");
  row("step io", plan.ioBytes, "loss, norms, outputs");
  row("workspace", plan.workspaceBytes,
      "temporaries, placed with reuse by the static plan");
  row("  activations", plan.activationBytes,
      "of it: forward values the backward reads, per micro-batch");
  if (plan.weightCopyBytes)
    row("  weight copies", plan.weightCopyBytes,
        ("of it: " + stringifyPrecision(plan.precision) +
         " copies of the f32 master weights (mixed precision)")
            .str());
  if (plan.rematPolicy != RematPolicy::none) {
    std::string note;
    llvm::raw_string_ostream(note)
        << "remat " << stringifyRematPolicy(plan.rematPolicy) << ": "
        << formatBytes(plan.remat.activationBytes) << " without; recomputes "
        << plan.remat.recomputedOps << " ops, "
        << llvm::format("%.0f", 100.0 * plan.remat.recomputeCost /
                                    std::max(plan.remat.forwardCost, 1.0))
        << "% of the forward's time (estimated)";
    row("  saved by remat",
        plan.remat.activationBytes - plan.remat.savedBytes, note);
  }
  if (plan.unplannedBytes)
    row("heap", plan.unplannedBytes, "temporaries the plan could not place");
  row("peak", plan.peakBytes(), "predicted");
  if (plan.ranks > 1 || plan.communicatedElements)
    os << "communication: " << plan.communicatedElements
       << " elements per step per rank ("
       << llvm::format("%.3f", plan.communicatedElements /
                                   static_cast<double>(std::max<int64_t>(
                                       plan.state.parameterElements, 1)))
       << " x the " << plan.state.parameterElements << " parameters)\n";
  if (measured) {
    double error = plan.peakBytes() == 0
                       ? 0.0
                       : 100.0 * (measured->peakBytes - plan.peakBytes()) /
                             static_cast<double>(plan.peakBytes());
    std::string note;
    llvm::raw_string_ostream(note)
        << "measured over one step (heap " << formatBytes(measured->heapBytes)
        << "), " << llvm::format("%+.2f", error) << "% from the plan";
    row("peak", measured->peakBytes, note);
  }
}

void mlir::gacc::printMemoryPlanJson(raw_ostream &os, TrainStepOp step,
                               const MemoryPlan &plan,
                               const MeasuredMemory *measured) {
  llvm::json::Object object{
      {"step", step.getSymName()},
      {"batch_size", plan.batchSize},
      {"micro_batch_size", plan.microBatchSize},
      {"accumulation_steps", plan.accumulationSteps},
      {"parameter_elements", plan.state.parameterElements},
      {"trainable_elements", plan.state.trainableElements},
      {"parameters", plan.state.parameterBytes},
      {"gradients", plan.state.gradientBytes},
      {"optimizer_state", plan.state.optimizerBytes},
      {"state_arena", plan.stateArenaBytes},
      {"batch", plan.batchBytes},
      {"io", plan.ioBytes},
      {"precision", stringifyPrecision(plan.precision)},
      {"activations", plan.activationBytes},
      {"weight_copies", plan.weightCopyBytes},
      {"remat", stringifyRematPolicy(plan.rematPolicy)},
      {"activations_without_remat", plan.remat.activationBytes},
      {"recomputed_ops", plan.remat.recomputedOps},
      {"recompute_cost", plan.remat.recomputeCost},
      {"forward_cost", plan.remat.forwardCost},
      {"workspace", plan.workspaceBytes},
      {"heap", plan.unplannedBytes},
      {"peak", plan.peakBytes()},
      {"ranks", plan.ranks},
      {"zero_stage", plan.zeroStage},
      {"communicated_elements", plan.communicatedElements}};
  llvm::json::Object choices;
  for (const auto &[name, bytes] : plan.optimizerStateByChoice)
    choices[name] = bytes;
  object["optimizer_state_by_optimizer"] = std::move(choices);
  if (measured) {
    object["measured_peak"] = measured->peakBytes;
    object["measured_heap"] = measured->heapBytes;
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(object))) << "\n";
}
