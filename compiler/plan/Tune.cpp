//===- Tune.cpp - the fastest configuration that fits a budget ------------===//

#include "compiler/plan/Tune.h"
#include "compiler/ConfigureStep.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gacc;

std::string TuneCandidate::optionsText() const {
  std::string text = "precision=" + precision + " remat=" + remat;
  if (remat == "budget") // the budget its schedule was chosen for
    text += " remat-budget=" + std::to_string(rematBudget);
  text += " micro-batch=" + std::to_string(plan.microBatchSize);
  if (!optimizer.empty())
    text += " optimizer=" + optimizer;
  if (zeroStage)
    text += " zero-stage=" + std::to_string(*zeroStage);
  return text;
}

namespace {
/// A copy of `module` whose step is configured by `options`, and that step
/// (null if the options are refused).
std::pair<OwningOpRef<ModuleOp>, TrainStepOp>
configuredCopy(ModuleOp module, StringRef stepName,
               const std::string &options) {
  OwningOpRef<ModuleOp> copy = module.clone();
  TrainStepOp step = TrainStepOp::find(*copy, stepName);
  TrainingPipelineOptions parsed;
  if (!step || failed(parsed.parseFromString(options)) ||
      failed(configureTrainStep(step, parsed)))
    step = nullptr;
  return {std::move(copy), step};
}

/// Plans `candidate` (`options` and its remat policy) at the largest
/// micro-batch that fits in `budget` (the fewest accumulation steps: never
/// slower for the same work); else at the smallest, what it would need. Fails
/// if the planner refuses the configuration. Calls the planner's fitting
/// functions, which return the plan they fit, rather than configuring
/// with the budgets and planning again.
LogicalResult planCandidate(ModuleOp module, StringRef stepName,
                            const std::string &options, int64_t budget,
                            TuneCandidate &candidate) {
  // Planned as the target the candidates run on compiles them (`gacc run
  // --auto --target cuda`), which decides the fused attention.
  TrainingPipelineOptions parsed;
  if (failed(parsed.parseFromString(options)))
    return failure();
  std::string target = parsed.target;
  FailureOr<MemoryPlan> plan = failure();
  if (candidate.remat != "budget") {
    auto [copy, step] =
        configuredCopy(module, stepName, options + " remat=" + candidate.remat);
    if (!step)
      return failure();
    plan = fitMicroBatch(step, budget, target);
    candidate.fits = succeeded(plan);
    if (!candidate.fits) {
      step.setMicroBatchSizeAttr(
          Builder(step.getContext()).getI64IntegerAttr(1));
      plan = planMemory(step, target);
    }
  } else {
    // The budget policy fits its schedule to the budget at a given
    // micro-batch (fitRematBudget sets the policy), and its least peak
    // grows with the micro-batch: bisect over the distinct micro-batches
    // ceil(rows / steps), listed largest first.
    // (remat=none: a policy the model declares is not planned first.)
    auto planAt = [&](int64_t micro) -> FailureOr<MemoryPlan> {
      auto [copy, step] = configuredCopy(
          module, stepName,
          options + " remat=none micro-batch=" + std::to_string(micro));
      if (!step)
        return failure();
      return fitRematBudget(step, budget, target);
    };
    auto [copy, step] =
        configuredCopy(module, stepName, options + " remat=none");
    if (!step)
      return failure();
    int64_t rows = step.getRankBatchSize();
    SmallVector<int64_t> micros;
    for (int64_t steps = 1; steps <= rows; ++steps)
      if (int64_t micro = llvm::divideCeil(rows, steps);
          micros.empty() || micros.back() != micro)
        micros.push_back(micro);
    // The largest that fits is micros[i] for some i in (low, high]; the
    // smallest, micros[high], is planned first.
    int64_t low = -1, high = micros.size() - 1;
    plan = planAt(micros[high]);
    while (succeeded(plan) && high - low > 1) {
      int64_t mid = (low + high) / 2;
      if (FailureOr<MemoryPlan> midPlan = planAt(micros[mid]);
          succeeded(midPlan)) {
        high = mid;
        plan = midPlan;
      } else {
        low = mid;
      }
    }
    // Else the budget policy's least peak has no fixed schedule to show.
    candidate.fits = succeeded(plan);
  }
  if (failed(plan))
    return failure();
  candidate.plan = std::move(*plan);
  return success();
}
} // namespace

std::vector<TuneCandidate>
mlir::gacc::planTuneCandidates(ModuleOp module, StringRef stepName,
                               StringRef baseOptions, const TuneSpace &space,
                               int64_t budgetBytes, const KernelCosts &costs) {
  SmallVector<std::string> optimizers = space.optimizers;
  if (optimizers.empty())
    optimizers.push_back("");
  SmallVector<std::optional<int64_t>> stages;
  if (baseOptions.contains("ranks=") && !baseOptions.contains("ranks={1}"))
    for (int64_t stage : space.zeroStages)
      stages.push_back(stage);
  if (stages.empty())
    stages.push_back(std::nullopt);

  std::vector<TuneCandidate> all;
  std::vector<std::string> options;
  for (const std::string &precision : space.precisions)
    for (const std::string &remat : space.remats)
      for (const std::string &optimizer : optimizers)
        for (std::optional<int64_t> stage : stages) {
          all.push_back({precision, remat, optimizer, stage,
                         remat == "budget" ? budgetBytes : 0});
          // The remat policy is planCandidate's to set.
          std::string text = baseOptions.str() + " precision=" + precision;
          if (!optimizer.empty())
            text += " optimizer=" + optimizer;
          if (stage)
            text += " zero-stage=" + std::to_string(*stage);
          options.push_back(std::move(text));
        }

  // What the planner says of configurations that do not fit is expected.
  MLIRContext *context = module.getContext();
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  // Pass managers load the dialects they need, which a context running
  // threads refuses: load them all first.
  context->loadAllAvailableDialects();
  // The budget policy's configurations take the longest: start them first.
  SmallVector<size_t> order = llvm::to_vector(llvm::seq<size_t>(0, all.size()));
  std::stable_partition(order.begin(), order.end(),
                        [&](size_t i) { return all[i].remat == "budget"; });
  std::vector<char> planned(all.size());
  parallelForEach(context, order, [&](size_t i) {
    planned[i] = succeeded(
        planCandidate(module, stepName, options[i], budgetBytes, all[i]));
  });
  std::vector<TuneCandidate> candidates;
  for (size_t i = 0; i < all.size(); ++i)
    if (planned[i]) {
      all[i].predictedSeconds = predictStepSeconds(all[i].plan.work, costs);
      candidates.push_back(std::move(all[i]));
    }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const TuneCandidate &a, const TuneCandidate &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     return a.predictedSeconds < b.predictedSeconds;
                   });
  return candidates;
}
