//===- Tune.cpp - `gacc tune` ----------------------------------------------===//

#include "Tune.h"
#include "compiler/aot/CompileCache.h"
#include "compiler/jit/Jit.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Trainer.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::gacc;

namespace gacc {
namespace {
/// What a short run of a candidate measured.
struct Measurement {
  double samplesPerSecond = 0;
  int64_t peakBytes = 0;
};

/// Compiles `candidate` and times `steps` steps on synthetic data after one
/// that is not timed (its first touches of memory): the median step's rate.
rt::Status measure(ModuleOp module, StringRef stepName, StringRef baseOptions,
                   const TuneCandidate &candidate, unsigned steps,
                   Measurement &out) {
  OwningOpRef<ModuleOp> copy = module.clone();
  TrainingPipelineOptions options;
  std::string text = (baseOptions + " " + candidate.optionsText()).str();
  if (failed(options.parseFromString(text)))
    return rt::Status::error("cannot parse '" + text + "'");
  options.step = stepName.str();
  std::optional<CompileCache> cache = CompileCache::fromEnvironment();
  FailureOr<JitStep> jit =
      jitCompileStep(*copy, options, {}, cache ? &*cache : nullptr);
  if (failed(jit))
    return rt::Status::error("cannot compile '" + text + "'");
  rt::Trainer trainer(std::move(jit->model), std::move(jit->compiled));
  if (rt::Status s = trainer.initialize(0); !s)
    return s;
  std::unique_ptr<rt::Dataset> data =
      rt::Dataset::synthetic(trainer.model(), 0);
  rt::Batch batch;
  rt::StepResult result;
  std::vector<double> rates; // per timed step: the median resists a stall
  for (unsigned step = 0; step <= steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (rt::Status s = data->batch(step, batch); !s)
      return s;
    if (rt::Status s = trainer.setBatch(batch); !s)
      return s;
    if (rt::Status s = trainer.step(result); !s)
      return s;
    out.peakBytes = std::max(out.peakBytes, result.peakBytes);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (step > 0) // the first touches memory for the first time
      rates.push_back(trainer.model().batchSize / seconds);
  }
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2,
                   rates.end());
  out.samplesPerSecond = rates[rates.size() / 2];
  return rt::Status();
}

std::string mib(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.1f MiB", bytes / 1048576.0);
  return text;
}

llvm::json::Object toJson(const TuneCandidate &candidate,
                          const std::optional<Measurement> &measured) {
  llvm::json::Object object{
      {"options", candidate.optionsText()},
      {"precision", candidate.precision},
      {"remat", candidate.remat},
      {"micro_batch_size", candidate.plan.microBatchSize},
      {"accumulation_steps", candidate.plan.accumulationSteps},
      {"planned_peak_bytes", candidate.plan.peakBytes()},
      {"fits", candidate.fits},
      {"predicted_seconds", candidate.predictedSeconds}};
  if (!candidate.optimizer.empty())
    object["optimizer"] = candidate.optimizer;
  if (candidate.zeroStage)
    object["zero_stage"] = *candidate.zeroStage;
  if (measured) {
    object["measured_samples_per_s"] = measured->samplesPerSecond;
    object["measured_peak_bytes"] = measured->peakBytes;
  }
  return object;
}
} // namespace

int runTune(ModuleOp module, StringRef stepName, StringRef baseOptions,
            const TuneOptions &options, std::string *chosen) {
  auto start = std::chrono::steady_clock::now();
  std::vector<TuneCandidate> candidates =
      planTuneCandidates(module, stepName, baseOptions, options.space,
                         options.budgetBytes);
  if (candidates.empty()) {
    llvm::errs() << "gacc tune: error: no configuration of the step could be "
                    "planned\n";
    return 1;
  }
  if (!candidates.front().fits) {
    const TuneCandidate *least = &candidates.front();
    for (const TuneCandidate &candidate : candidates)
      if (candidate.plan.peakBytes() < least->plan.peakBytes())
        least = &candidate;
    llvm::errs() << "gacc tune: error: no configuration fits in "
                 << mib(options.budgetBytes) << ": the least peak is "
                 << mib(least->plan.peakBytes()) << " ("
                 << least->optionsText() << ")\n";
    return 1;
  }

  std::vector<std::optional<Measurement>> measured(candidates.size());
  size_t best = 0;
  for (size_t i = 0; i < candidates.size() && i < options.measureTop &&
                     candidates[i].fits;
       ++i) {
    Measurement measurement;
    if (rt::Status s = measure(module, stepName, baseOptions, candidates[i],
                               options.measureSteps, measurement);
        !s) {
      llvm::errs() << "gacc tune: error: " << s.message() << "\n";
      return 1;
    }
    measured[i] = measurement;
    if (measurement.samplesPerSecond > measured[best]->samplesPerSecond)
      best = i;
    if (measurement.peakBytes > options.budgetBytes)
      llvm::errs() << "gacc tune: warning: " << candidates[i].optionsText()
                   << " measured a peak of " << mib(measurement.peakBytes)
                   << ", over the budget its plan fit\n";
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (chosen)
    *chosen = candidates[best].optionsText();

  llvm::json::Array all;
  for (size_t i = 0; i < candidates.size(); ++i)
    all.push_back(toJson(candidates[i], measured[i]));
  llvm::json::Object choice = toJson(candidates[best], measured[best]);
  choice["memory_budget_bytes"] = options.budgetBytes;
  choice["tune_seconds"] = seconds;
  if (!options.output.empty()) {
    std::string text;
    llvm::raw_string_ostream(text)
        << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object(choice)))
        << "\n";
    if (rt::Status s = rt::writeFileAtomically(options.output, text); !s) {
      llvm::errs() << "gacc tune: error: " << s.message() << "\n";
      return 1;
    }
  }
  if (options.json) {
    choice["candidates"] = std::move(all);
    llvm::outs() << llvm::formatv("{0:2}",
                                  llvm::json::Value(std::move(choice)))
                 << "\n";
    return 0;
  }
  llvm::outs() << llvm::format("%-9s %-8s %-10s %6s %5s %12s %5s %10s %12s\n",
                               "precision", "remat", "optimizer", "micro",
                               "accum", "planned", "fits", "predicted",
                               "measured");
  for (size_t i = 0; i < candidates.size(); ++i) {
    const TuneCandidate &c = candidates[i];
    std::string optimizer = c.optimizer.empty() ? "(model's)" : c.optimizer;
    if (c.zeroStage)
      optimizer += " z" + std::to_string(*c.zeroStage);
    std::string rate =
        measured[i] ? llvm::formatv("{0:f1}/s", measured[i]->samplesPerSecond)
                          .str()
                    : "-";
    llvm::outs() << llvm::format(
        "%-9s %-8s %-10s %6lld %5lld %12s %5s %9.4fs %12s%s\n",
        c.precision.c_str(), c.remat.c_str(), optimizer.c_str(),
        static_cast<long long>(c.plan.microBatchSize),
        static_cast<long long>(c.plan.accumulationSteps),
        mib(c.plan.peakBytes()).c_str(), c.fits ? "yes" : "no",
        c.predictedSeconds, rate.c_str(), i == best ? "  <- chosen" : "");
  }
  llvm::outs() << "chosen: " << candidates[best].optionsText() << " (planned "
               << mib(candidates[best].plan.peakBytes());
  if (measured[best])
    llvm::outs() << ", measured " << mib(measured[best]->peakBytes) << ", "
                 << llvm::formatv("{0:f1}", measured[best]->samplesPerSecond)
                 << " samples/s";
  else
    llvm::outs() << ", by the cost model alone";
  llvm::outs() << "); tuned in " << llvm::formatv("{0:f1}", seconds) << " s";
  if (!options.output.empty())
    llvm::outs() << "; wrote " << options.output
                 << " (gacc run --config " << options.output << ")";
  llvm::outs() << "\n";
  return 0;
}

} // namespace gacc
