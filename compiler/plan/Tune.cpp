//===- Tune.cpp - the fastest configuration that fits a budget ------------===//

#include "compiler/plan/Tune.h"
#include "compiler/ConfigureStep.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "passes/Passes.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

using namespace mlir;
using namespace mlir::gacc;

std::string TuneCandidate::optionsText() const {
  std::string text = "precision=" + precision;
  if (remat == "budget" && !rematSchedule.empty() &&
      rematSchedule != "budget") {
    text += " remat=" + rematSchedule;
  } else {
    text += " remat=" + remat;
    if (remat == "budget") // the budget its schedule was chosen for
      text += " remat-budget=" + std::to_string(rematBudget);
    if (rematActivationBudget)
      text +=
          " remat-activation-budget=" + std::to_string(rematActivationBudget);
  }
  if (plan.microBatchSize) // else pruned: never planned
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

/// The target `options` compile for: candidates are planned as it compiles
/// them (`gacc run --auto --target cuda`), which decides the fused
/// attention.
std::string targetOf(const std::string &options) {
  TrainingPipelineOptions parsed;
  if (failed(parsed.parseFromString(options)))
    return "";
  return parsed.target;
}

/// The plan of `candidate` (`options` and its fixed remat policy) at the
/// rank's whole batch; fails if the planner refuses the configuration.
FailureOr<MemoryPlan> planWholeBatch(ModuleOp module, StringRef stepName,
                                     const std::string &options,
                                     const TuneCandidate &candidate) {
  auto [copy, step] =
      configuredCopy(module, stepName, options + " remat=" + candidate.remat);
  if (!step)
    return failure();
  step.setMicroBatchSizeAttr(
      Builder(step.getContext()).getI64IntegerAttr(step.getRankBatchSize()));
  return planMemory(step, targetOf(options));
}

/// Plans `candidate` (`options` and its remat policy) at the largest
/// micro-batch that fits in `budget` (the fewest accumulation steps: never
/// slower for the same work); else at the smallest, what it would need. Fails
/// if the planner refuses the configuration. Calls the planner's fitting
/// functions, which return the plan they fit, rather than configuring
/// with the budgets and planning again. `wholeBatch`: the plan at the whole
/// batch, when planned already. With `atMicroBatch`, plans at that one
/// instead of searching (for the budget policy: its cheapest schedule
/// there).
LogicalResult
planCandidate(ModuleOp module, StringRef stepName, const std::string &options,
              int64_t budget, TuneCandidate &candidate,
              const MemoryPlan *wholeBatch,
              std::optional<int64_t> atMicroBatch = std::nullopt) {
  std::string target = targetOf(options);
  FailureOr<MemoryPlan> plan = failure();
  if (candidate.remat != "budget") {
    std::string fixed = options + " remat=" + candidate.remat;
    if (atMicroBatch)
      fixed += " micro-batch=" + std::to_string(*atMicroBatch);
    auto [copy, step] = configuredCopy(module, stepName, fixed);
    if (!step)
      return failure();
    if (atMicroBatch) {
      plan = planMemory(step, target);
      candidate.fits = succeeded(plan) && plan->peakBytes() <= budget;
      if (failed(plan))
        return failure();
      candidate.plan = std::move(*plan);
      return success();
    }
    MemoryPlan smallest;
    plan = fitMicroBatch(step, budget, target, wholeBatch, &smallest);
    candidate.fits = succeeded(plan);
    if (!candidate.fits && smallest.microBatchSize)
      plan = std::move(smallest);
  } else {
    // The budget policy fits its schedule to the budget at a given
    // micro-batch (fitRematBudget sets the policy), and its least peak
    // grows with the micro-batch: bisect over the distinct micro-batches
    // ceil(rows / steps), listed largest first, asking only whether some
    // schedule fits; then fit the cheapest schedule at the largest that
    // does. (remat=none: a policy the model declares is not planned
    // first.)
    auto fitAt = [&](int64_t micro, bool anyFit) -> FailureOr<MemoryPlan> {
      auto [copy, step] = configuredCopy(
          module, stepName,
          options + " remat=none micro-batch=" + std::to_string(micro));
      if (!step)
        return failure();
      FailureOr<MemoryPlan> fit = fitRematBudget(step, budget, target, anyFit);
      if (succeeded(fit) && !anyFit) {
        candidate.rematSchedule =
            stringifyRematPolicy(step.getEffectiveRemat().getPolicy()).str();
        if (auto activations = step->getAttrOfType<IntegerAttr>(
                kRematActivationBudgetAttrName)) {
          // A budget no schedule reaches keeps everything: remat=none.
          if (activations.getInt() >= std::numeric_limits<int64_t>::max() / 2)
            candidate.rematSchedule = "none";
          else
            candidate.rematActivationBudget = activations.getInt();
        }
      }
      return fit;
    };
    if (atMicroBatch) {
      plan = fitAt(*atMicroBatch, /*anyFit=*/false);
      candidate.fits = succeeded(plan);
      if (failed(plan))
        return failure();
      candidate.plan = std::move(*plan);
      return success();
    }
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
    // smallest, micros[high], is tried first.
    int64_t low = -1, high = micros.size() - 1;
    bool fits = succeeded(fitAt(micros[high], /*anyFit=*/true));
    while (fits && high - low > 1) {
      int64_t mid = (low + high) / 2;
      if (succeeded(fitAt(micros[mid], /*anyFit=*/true)))
        high = mid;
      else
        low = mid;
    }
    // Else the budget policy's least peak has no fixed schedule to show.
    if (fits)
      plan = fitAt(micros[high], /*anyFit=*/false);
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

  // Branch and bound. The whole batch is every configuration's fastest
  // micro-batch (the same work in the fewest, largest calls), so its
  // predicted time bounds the configuration's from below; the budget
  // policy's, recomputing nothing at best, is bounded by remat=none's of
  // the same precision, optimizer and stage. Plan every fixed policy at the
  // whole batch (often the fit itself), then fit the configurations in
  // order of their bounds, leaving out those whose bound is more than
  // kTunePruneMargin slower than the best fit so far.
  std::vector<std::optional<MemoryPlan>> whole(all.size());
  std::vector<char> refused(all.size());
  SmallVector<size_t> fixed;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].remat != "budget")
      fixed.push_back(i);
  parallelForEach(context, fixed, [&](size_t i) {
    FailureOr<MemoryPlan> plan =
        planWholeBatch(module, stepName, options[i], all[i]);
    if (succeeded(plan))
      whole[i] = std::move(*plan);
    else
      refused[i] = true;
  });
  // What a configuration keeps at every micro-batch and remat policy: its
  // state arena (parameters, gradients and optimizer state; accumulation
  // only adds to it) and the batch. Where that alone exceeds the budget,
  // nothing of the configuration fits, which fitting would find out by
  // planning down to one example.
  std::vector<int64_t> floorBytes(all.size(), 0);
  for (size_t i : fixed)
    if (whole[i])
      floorBytes[i] = whole[i]->stateArenaBytes + whole[i]->batchBytes;
  std::vector<double> bound(all.size(), 0);
  int64_t batchSize = 0;
  for (size_t i : fixed)
    if (whole[i]) {
      batchSize = whole[i]->batchSize;
      if (floorBytes[i] <= budgetBytes)
        bound[i] = predictStepSeconds(whole[i]->work, costs);
    }
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].remat != "budget")
      continue;
    for (size_t j : fixed)
      if (whole[j] && all[j].remat == "none" && options[j] == options[i]) {
        bound[i] = bound[j];
        floorBytes[i] = floorBytes[j];
      }
  }
  auto stateExceedsBudget = [&](size_t i) {
    return floorBytes[i] > budgetBytes;
  };
  SmallVector<size_t> order;
  for (size_t i = 0; i < all.size(); ++i)
    if (!refused[i])
      order.push_back(i);
  llvm::stable_sort(order,
                    [&](size_t a, size_t b) { return bound[a] < bound[b]; });

  std::vector<char> attempted(all.size()), planned(all.size());
  double best = std::numeric_limits<double>::infinity();
  auto prunable = [&](size_t i) {
    return bound[i] > best * (1 + kTunePruneMargin);
  };
  // One fit per thread; a thread that finishes takes the next one not
  // pruned. A fit that fits is priced when it finishes if its kernel costs
  // are known (one that does not fit is not priced: never a choice);
  // one whose pricing would time a kernel waits until no thread plans (a
  // kernel timed beside the planner is timed on a busy machine), and no
  // fit starts meanwhile.
  bool threaded = context->isMultithreadingEnabled();
  size_t threads = threaded ? std::max(1u, context->getNumThreads()) : 1;
  std::mutex mutex;
  std::condition_variable finishedOne;
  SmallVector<size_t> unpriced;
  size_t running = 0, finishedCount = 0;
  auto fit = [&](size_t i) {
    bool ok = succeeded(planCandidate(module, stepName, options[i], budgetBytes,
                                      all[i], whole[i] ? &*whole[i] : nullptr));
    std::lock_guard<std::mutex> lock(mutex);
    planned[i] = ok;
    if (ok && all[i].fits)
      unpriced.push_back(i);
    --running;
    ++finishedCount;
    finishedOne.notify_one();
  };
  std::optional<llvm::ThreadPoolTaskGroup> group;
  if (threaded)
    group.emplace(context->getThreadPool());
  std::unique_lock<std::mutex> lock(mutex);
  for (size_t next = 0;;) {
    llvm::erase_if(unpriced, [&](size_t i) {
      if (running && !knowsStepCosts(all[i].plan.work, costs))
        return false;
      all[i].predictedSeconds = predictStepSeconds(all[i].plan.work, costs);
      best = std::min(best, all[i].predictedSeconds);
      return true;
    });
    for (; unpriced.empty() && running < threads && next < order.size();
         ++next) {
      size_t i = order[next];
      if (prunable(i) || stateExceedsBudget(i))
        continue;
      attempted[i] = true;
      ++running;
      if (threaded) {
        group->async([&fit, i] { fit(i); });
      } else {
        lock.unlock();
        fit(i);
        lock.lock();
      }
    }
    if (!running && unpriced.empty())
      break;
    size_t seen = finishedCount;
    finishedOne.wait(lock, [&] { return finishedCount != seen || !running; });
  }
  lock.unlock();
  group.reset(); // every task returned

  // A configuration whose state exceeds the budget keeps its plan at the
  // whole batch (the budget policy, which has no schedule to show, is left
  // out). Where nothing fits, the least peak is what tune reports: those
  // are planned at one example too, least state first, while their state is
  // below the least peak found.
  SmallVector<size_t> overBudget;
  for (size_t i : order)
    if (stateExceedsBudget(i)) {
      attempted[i] = true;
      planned[i] = all[i].remat != "budget";
      if (planned[i]) {
        all[i].plan = *whole[i];
        overBudget.push_back(i);
      }
    }
  if (best == std::numeric_limits<double>::infinity()) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (size_t i : order)
      if (planned[i])
        least = std::min(least, all[i].plan.peakBytes());
    llvm::stable_sort(overBudget, [&](size_t a, size_t b) {
      return floorBytes[a] < floorBytes[b];
    });
    for (auto next = overBudget.begin();
         next != overBudget.end() && floorBytes[*next] < least;) {
      SmallVector<size_t> wave; // a thread's worth
      for (; next != overBudget.end() && floorBytes[*next] < least &&
             wave.size() < threads;
           ++next)
        wave.push_back(*next);
      parallelForEach(context, wave, [&](size_t i) {
        TuneCandidate atOne = all[i];
        if (succeeded(planCandidate(module, stepName, options[i], budgetBytes,
                                    atOne, nullptr, /*atMicroBatch=*/1)))
          all[i] = std::move(atOne);
      });
      for (size_t i : wave)
        least = std::min(least, all[i].plan.peakBytes());
    }
  }

  // An uneven split (16 as 3+3+3+3+3+1) pays a whole micro-step for its
  // remainder and runs two shapes: a fit that does not divide the rank's
  // batch is also planned at the largest micro-batch that does (16 as 8
  // steps of 2), and the cost model ranks both; not below half the fit's
  // (7 rows as 7 steps of 1), more than twice its steps.
  SmallVector<std::pair<size_t, int64_t>> evenSplits; // candidate, micro
  for (size_t n = order.size(), k = 0; k < n; ++k) {
    size_t i = order[k];
    if (!planned[i] || !all[i].fits)
      continue;
    int64_t micro = all[i].plan.microBatchSize;
    int64_t rows =
        all[i].plan.batchSize / std::max<int64_t>(all[i].plan.ranks, 1);
    if (rows % micro == 0)
      continue;
    int64_t even = micro - 1;
    while (rows % even)
      --even;
    if (2 * even < micro)
      continue;
    TuneCandidate split = all[i];
    split.plan = {};
    split.rematSchedule.clear();
    split.rematActivationBudget = 0;
    all.push_back(std::move(split));
    options.push_back(options[i]);
    attempted.push_back(true);
    planned.push_back(false);
    order.push_back(all.size() - 1);
    evenSplits.emplace_back(all.size() - 1, even);
  }
  parallelForEach(context, evenSplits, [&](std::pair<size_t, int64_t> split) {
    auto [i, micro] = split;
    // Kept only where it fits (a peak can grow as the micro-batch shrinks).
    planned[i] =
        succeeded(planCandidate(module, stepName, options[i], budgetBytes,
                                all[i], nullptr, micro)) &&
        all[i].fits;
  });
  for (auto [i, micro] : evenSplits)
    if (planned[i])
      all[i].predictedSeconds = predictStepSeconds(all[i].plan.work, costs);

  std::vector<TuneCandidate> candidates;
  for (size_t i : order) {
    if (!attempted[i]) { // left out by its bound
      TuneCandidate candidate = std::move(all[i]);
      candidate.pruned = true;
      candidate.fits = false;
      candidate.plan = {};
      candidate.plan.batchSize = batchSize;
      candidate.predictedSeconds = bound[i];
      candidates.push_back(std::move(candidate));
    } else if (planned[i]) {
      candidates.push_back(std::move(all[i]));
    }
  }
  // Those that fit, fastest first; then the pruned, fastest bound first;
  // then those that do not fit, least peak first.
  auto rank = [](const TuneCandidate &c) {
    return c.fits ? 0 : c.pruned ? 1 : 2;
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const TuneCandidate &a, const TuneCandidate &b) {
                     if (rank(a) != rank(b))
                       return rank(a) < rank(b);
                     if (rank(a) == 2)
                       return a.plan.peakBytes() < b.plan.peakBytes();
                     return a.predictedSeconds < b.predictedSeconds;
                   });
  return candidates;
}
