//===- Tune.cpp - the fastest configuration that fits a budget ------------===//

#include "compiler/plan/Tune.h"
#include "compiler/ConfigureStep.h"
#include "mlir/IR/Diagnostics.h"

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
/// The plan of `module`'s step configured by `options`, on a copy.
FailureOr<MemoryPlan> planWith(ModuleOp module, StringRef stepName,
                               const std::string &options) {
  OwningOpRef<ModuleOp> copy = module.clone();
  TrainStepOp step = TrainStepOp::find(*copy, stepName);
  TrainingPipelineOptions parsed;
  if (!step || failed(parsed.parseFromString(options)) ||
      failed(configureTrainStep(step, parsed)))
    return failure();
  return planMemory(step);
}
} // namespace

std::vector<TuneCandidate>
mlir::gacc::planTuneCandidates(ModuleOp module, StringRef stepName,
                               StringRef baseOptions, const TuneSpace &space,
                               int64_t budgetBytes) {
  // What the planner says of configurations that do not fit is expected.
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  SmallVector<std::string> optimizers = space.optimizers;
  if (optimizers.empty())
    optimizers.push_back("");
  SmallVector<std::optional<int64_t>> stages;
  if (baseOptions.contains("ranks=") && !baseOptions.contains("ranks={1}"))
    for (int64_t stage : space.zeroStages)
      stages.push_back(stage);
  if (stages.empty())
    stages.push_back(std::nullopt);

  std::string budget = std::to_string(budgetBytes);
  std::vector<TuneCandidate> candidates;
  for (const std::string &precision : space.precisions)
    for (const std::string &remat : space.remats)
      for (const std::string &optimizer : optimizers)
        for (std::optional<int64_t> stage : stages) {
          TuneCandidate candidate{precision, remat, optimizer, stage,
                                  remat == "budget" ? budgetBytes : 0, {}};
          std::string options = baseOptions.str() + " precision=" +
                                precision + " remat=" + remat;
          if (!optimizer.empty())
            options += " optimizer=" + optimizer;
          if (stage)
            options += " zero-stage=" + std::to_string(*stage);
          // The largest micro-batch that fits (the fewest accumulation
          // steps: never slower for the same work). The budget policy
          // fits its schedule to the budget at each micro-batch in turn.
          FailureOr<MemoryPlan> plan = failure();
          if (remat != "budget") {
            plan = planWith(module, stepName,
                            options + " memory-budget=" + budget);
          } else if (FailureOr<MemoryPlan> whole =
                         planWith(module, stepName, options.substr(0, options.rfind(" remat="))); succeeded(whole)) {
            int64_t rows = whole->batchSize / std::max<int64_t>(whole->ranks, 1);
            for (int64_t steps = 1, last = 0; steps <= rows && failed(plan);
                 ++steps) {
              int64_t micro = (rows + steps - 1) / steps;
              if (micro == last)
                continue;
              last = micro;
              plan = planWith(module, stepName,
                              options + " remat-budget=" + budget +
                                  " micro-batch=" + std::to_string(micro));
            }
          }
          candidate.fits = succeeded(plan);
          // Else what the smallest micro-batch needs (the budget policy's
          // least peak has no fixed schedule to show).
          if (!candidate.fits && remat != "budget")
            plan = planWith(module, stepName, options + " micro-batch=1");
          if (failed(plan))
            continue;
          candidate.plan = *plan;
          const RematReport &report = plan->remat;
          candidate.predictedSeconds =
              plan->accumulationSteps *
              (3 * report.forwardCost + report.recomputeCost) * 1e-9;
          candidates.push_back(std::move(candidate));
        }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const TuneCandidate &a, const TuneCandidate &b) {
                     if (a.fits != b.fits)
                       return a.fits;
                     return a.predictedSeconds < b.predictedSeconds;
                   });
  return candidates;
}
