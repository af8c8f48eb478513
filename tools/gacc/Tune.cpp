//===- Tune.cpp - `gacc tune` ----------------------------------------------===//

#include "Tune.h"
#include "compiler/Describe.h"
#include "compiler/aot/CompileCache.h"
#include "compiler/jit/Jit.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/KernelRates.h"
#include "gacc/runtime/ThreadPool.h"
#include "gacc/runtime/Trainer.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::gacc;

namespace gacc {
namespace {
/// This machine's kernel costs (KernelCosts), measured when first needed
/// and kept in the compile cache's directory, one file per CPU and thread
/// count, so that tuning again measures nothing it measured before. The
/// file names the gacc that measured it: another gacc's kernels may differ,
/// and measure again.
class KernelCostCache {
public:
  explicit KernelCostCache(const std::optional<CompileCache> &cache) {
    if (!cache || CompileCache::compilerIdentity().empty())
      return;
    llvm::SmallString<128> file(cache->getDirectory());
    llvm::sys::path::append(file, "kernel-costs-" +
                                      llvm::sys::getHostCPUName().str() + "-" +
                                      std::to_string(rt::threads()) + "t.txt");
    path = file.str().str();
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return;
    // "gacc <identity>", then "<key> <seconds or bytes/s>" per line;
    // anything else is left out and measured again.
    llvm::SmallVector<llvm::StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n', -1, false);
    if (lines.empty() || lines.front() != identityLine())
      return;
    for (llvm::StringRef line : llvm::drop_begin(lines)) {
      auto [key, value] = line.rsplit(' ');
      double number = 0;
      if (!key.empty() && !value.getAsDouble(number) && isPositive(number))
        entries[key.str()] = number;
    }
  }

  /// Writes what was measured (a cache that cannot be written is only
  /// slower next time).
  ~KernelCostCache() {
    if (!changed || path.empty() ||
        llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)))
      return;
    std::string text = identityLine() + "\n";
    for (const auto &[key, value] : entries)
      text += key + " " + llvm::formatv("{0:e}", value).str() + "\n";
    (void)rt::writeFileAtomically(path, text);
  }

  mlir::gacc::KernelCosts costs() {
    mlir::gacc::KernelCosts costs;
    costs.bytesPerSecond = lookup("bandwidth", rt::measureStreamBandwidth);
    costs.loopNestSeconds = lookup("loop_nest", rt::measureDispatchSeconds);
    costs.matmulSeconds = [this](const mlir::gacc::MatmulWork &work) {
      return matmulSeconds(work);
    };
    costs.knowsMatmul = [this](const mlir::gacc::MatmulWork &work) {
      return entries.count(TimedMatmul(work).key);
    };
    return costs;
  }

private:
  static std::string identityLine() {
    return "gacc " + CompileCache::compilerIdentity();
  }
  static bool isPositive(double value) {
    return std::isfinite(value) && value > 0;
  }

  /// The cached value of `key`, else what `measure` gives (kept when it is
  /// a positive number).
  template <typename F> double lookup(const std::string &key, F measure) {
    if (auto entry = entries.find(key); entry != entries.end())
      return entry->second;
    double value = measure();
    if (isPositive(value)) {
      entries[key] = value;
      changed = true;
    }
    return value;
  }

  /// The shape a matmul is timed at: one of more than 2^31 flops is cut
  /// down to about that (batch first, then its largest dimension), where
  /// the rate no longer grows, and its time scaled by the flops.
  struct TimedMatmul {
    explicit TimedMatmul(const mlir::gacc::MatmulWork &work) : shape(work) {
      operand = work.operand.isF64()    ? rt::DType::F64
                : work.operand.isF16()  ? rt::DType::F16
                : work.operand.isBF16() ? rt::DType::BF16
                                        : rt::DType::F32;
      constexpr double kTimedFlops = 0x1p31;
      while (shape.flops() > kTimedFlops) {
        int64_t *largest = shape.batch > 1 ? &shape.batch
                           : shape.m >= std::max(shape.n, shape.k) ? &shape.m
                           : shape.n >= shape.k                    ? &shape.n
                                                                   : &shape.k;
        *largest = (*largest + 1) / 2;
      }
      key = llvm::formatv("matmul {0} {1} {2} {3} {4}", rt::dtypeName(operand),
                          shape.batch, shape.m, shape.n, shape.k)
                .str();
    }
    rt::DType operand;
    mlir::gacc::MatmulWork shape;
    std::string key;
  };

  double matmulSeconds(const mlir::gacc::MatmulWork &work) {
    TimedMatmul timed(work);
    const mlir::gacc::MatmulWork &shape = timed.shape;
    return lookup(timed.key,
                  [&] {
                    return rt::measureMatmulSeconds(timed.operand, shape.batch,
                                                    shape.m, shape.n, shape.k);
                  }) *
           (work.flops() / shape.flops());
  }

  std::string path;
  std::map<std::string, double> entries;
  bool changed = false;
};

/// What a short run of a candidate measured.
struct Measurement {
  double samplesPerSecond = 0;
  int64_t peakBytes = 0;
};

/// Where tuning's time went, for its report.
struct TuneTimes {
  double planning = 0, compiling = 0, running = 0;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A measured candidate's trainer, kept between its measurements.
struct CandidateRun {
  size_t index = 0; ///< into the candidates
  std::unique_ptr<rt::Trainer> trainer;
  std::unique_ptr<rt::Dataset> data; ///< refers to the trainer's model
  uint64_t steps = 0; ///< steps run, which picks the next synthetic batch

  /// One step on the next synthetic batch.
  rt::Status step(rt::StepResult &result) {
    rt::Batch batch;
    if (rt::Status s = data->batch(steps++, batch); !s)
      return s;
    if (rt::Status s = trainer->setBatch(batch); !s)
      return s;
    return trainer->step(result);
  }

  /// Ends the run, freeing its memory (the data first: it refers to the
  /// trainer).
  void reset() {
    data.reset();
    trainer.reset();
    steps = 0;
  }
};

/// Two steps' rates this close tell the step's speed: timing more would
/// only repeat it.
constexpr double kSteadyTolerance = 0.03;
/// Steps are timed for at least this long: a small model's steps of a few
/// milliseconds swing with anything else the machine does.
constexpr double kMinMeasuredSeconds = 0.25;

/// `candidate`'s step, compiled and loaded (a copy of `module`).
rt::Status compileCandidate(ModuleOp module, StringRef stepName,
                            StringRef baseOptions,
                            const TuneCandidate &candidate,
                            const std::optional<CompileCache> &cache,
                            std::optional<JitStep> &out) {
  OwningOpRef<ModuleOp> copy = module.clone();
  TrainingPipelineOptions options;
  std::string text = (baseOptions + " " + candidate.optionsText()).str();
  if (failed(options.parseFromString(text)))
    return rt::Status::error("cannot parse '" + text + "'");
  options.step = stepName.str();
  FailureOr<JitStep> jit =
      jitCompileStep(*copy, options, {}, cache ? &*cache : nullptr);
  if (failed(jit))
    return rt::Status::error("cannot compile '" + text + "'");
  out = std::move(*jit);
  return rt::Status();
}

/// Starts `run` with `jit` (compiled now if empty) and faults in its
/// arenas' pages, so that its first step can be timed.
rt::Status startRun(ModuleOp module, StringRef stepName, StringRef baseOptions,
                    const TuneCandidate &candidate,
                    const std::optional<CompileCache> &cache,
                    std::optional<JitStep> jit, CandidateRun &run,
                    TuneTimes &times) {
  if (!jit) {
    auto compileStart = std::chrono::steady_clock::now();
    if (rt::Status s = compileCandidate(module, stepName, baseOptions,
                                        candidate, cache, jit);
        !s)
      return s;
    times.compiling += secondsSince(compileStart);
  }
  auto runStart = std::chrono::steady_clock::now();
  run.trainer = std::make_unique<rt::Trainer>(std::move(jit->model),
                                              std::move(jit->compiled));
  if (rt::Status s = run.trainer->initialize(0); !s)
    return s;
  run.data = rt::Dataset::synthetic(run.trainer->model(), 0);
  // Where the arenas cannot be faulted in ahead, a step does it, untimed.
  if (!run.trainer->prefault()) {
    rt::StepResult result;
    if (rt::Status s = run.step(result); !s)
      return s;
  }
  times.running += secondsSince(runStart);
  return rt::Status();
}

/// Times steps of `run` on synthetic data: at most `maxSteps`, stopping
/// once two in a row agree within kSteadyTolerance, but for at least
/// kMinMeasuredSeconds (small steps: a median of many). The median step's
/// rate (of two, the faster). Steps that loss scaling skipped (no update:
/// faster) are not timed (a scale that collapses is the step's error).
rt::Status timeSteps(CandidateRun &run, unsigned maxSteps, Measurement &out,
                     TuneTimes &times) {
  auto runStart = std::chrono::steady_clock::now();
  rt::StepResult result;
  std::vector<double> rates; // per step: the median resists a stall
  double timed = 0;
  auto done = [&] {
    bool steady =
        rates.size() >= 2 && std::abs(rates.back() - rates[rates.size() - 2]) <=
                                 kSteadyTolerance * rates.back();
    return timed >= kMinMeasuredSeconds && (rates.size() >= maxSteps || steady);
  };
  while (!done()) {
    auto start = std::chrono::steady_clock::now();
    if (rt::Status s = run.step(result); !s)
      return s;
    double seconds = secondsSince(start);
    out.peakBytes = std::max(out.peakBytes, result.peakBytes);
    if (result.skipped)
      continue;
    timed += seconds;
    rates.push_back(run.trainer->model().batchSize / seconds);
  }
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2,
                   rates.end());
  out.samplesPerSecond = rates[rates.size() / 2];
  times.running += secondsSince(runStart);
  return rt::Status();
}

std::string mib(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.1f MiB", bytes / 1048576.0);
  return text;
}

llvm::json::Object toJson(const TuneCandidate &candidate,
                          const std::optional<Measurement> &measured) {
  double predictedRate =
      candidate.plan.batchSize / std::max(candidate.predictedSeconds, 1e-12);
  llvm::json::Object object{{"options", candidate.optionsText()},
                            {"precision", candidate.precision},
                            {"remat", candidate.remat}};
  if (candidate.pruned) {
    // Not planned: only the bound on its rate that left it out.
    object["pruned"] = true;
    object["fits"] = false; // not known
    object["predicted_samples_per_s_at_most"] = predictedRate;
  } else {
    object["micro_batch_size"] = candidate.plan.microBatchSize;
    object["accumulation_steps"] = candidate.plan.accumulationSteps;
    object["planned_peak_bytes"] = candidate.plan.peakBytes();
    object["fits"] = candidate.fits;
    if (candidate.fits) { // else never a choice, not priced
      object["predicted_seconds"] = candidate.predictedSeconds;
      object["predicted_samples_per_s"] = predictedRate;
    }
  }
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
  KernelCostCache costCache(options.cache);
  std::vector<TuneCandidate> candidates =
      planTuneCandidates(module, stepName, baseOptions, options.space,
                         options.budgetBytes, costCache.costs());
  TuneTimes times;
  times.planning = secondsSince(start);
  if (candidates.empty()) {
    llvm::errs() << "gacc tune: error: no configuration of the step could be "
                    "planned\n";
    return 1;
  }
  if (!candidates.front().fits) {
    const TuneCandidate *least = &candidates.front();
    for (const TuneCandidate &candidate : candidates)
      if (!candidate.pruned &&
          candidate.plan.peakBytes() < least->plan.peakBytes())
        least = &candidate;
    llvm::errs() << "gacc tune: error: no configuration fits in "
                 << mib(options.budgetBytes) << ": the least peak is "
                 << mib(least->plan.peakBytes()) << " (" << least->optionsText()
                 << ")";
    if (options.space.optimizers.empty())
      llvm::errs() << "; optimizers with less state may fit: --allow "
                      "optimizer=adamw8bit,adafactor";
    llvm::errs() << "\n";
    return 1;
  }

  // Measure what the cost model cannot decide: of the candidates predicted
  // within kTuneMargin of the best, the best of each precision and
  // micro-batch, at most measureTop. Across those the model errs most
  // (caches; kernels of other shapes and types, timed alone). At one
  // precision and micro-batch the remat policies and optimizers run the
  // same kernels and it counts what each adds (recomputation, the update),
  // where runs on a shared machine would decide by their noise instead.
  std::vector<size_t> selected;
  for (size_t i = 0; i < candidates.size() && candidates[i].fits &&
                     selected.size() < options.measureTop;
       ++i) {
    const TuneCandidate &c = candidates[i];
    if (c.predictedSeconds >
        candidates.front().predictedSeconds * (1 + kTuneMargin))
      break;
    if (llvm::none_of(selected, [&](size_t j) {
          return candidates[j].precision == c.precision &&
                 candidates[j].plan.microBatchSize == c.plan.microBatchSize;
        }))
      selected.push_back(i);
  }
  // Compiled first, one per thread: compiling a step keeps about one core
  // busy (GPT-mini: 1.4 s of CPU in 1.4 s; code generation is split by
  // function, and most of a step is one), measuring one keeps all. Their
  // code is small beside the arenas, which the trainers allocate one at a
  // time.
  auto compileStart = std::chrono::steady_clock::now();
  TrainingPipelineOptions pipeline;
  if (failed(pipeline.parseFromString(baseOptions)) ||
      failed(loadStepPipelineDialects(module.getContext(), pipeline))) {
    llvm::errs() << "gacc tune: error: cannot build the pipeline for '"
                 << baseOptions << "'\n";
    return 1;
  }
  std::vector<std::optional<JitStep>> compiled(candidates.size());
  std::vector<rt::Status> compileStatus(candidates.size());
  parallelForEach(module.getContext(), selected, [&](size_t i) {
    compileStatus[i] =
        compileCandidate(module, stepName, baseOptions, candidates[i],
                         options.cache, compiled[i]);
  });
  times.compiling += secondsSince(compileStart);
  for (size_t i : selected)
    if (!compileStatus[i]) {
      llvm::errs() << "gacc tune: error: " << compileStatus[i].message()
                   << "\n";
      return 1;
    }
  // Two passes, the second in reverse order, each candidate keeping its
  // faster one: a busy moment on a shared machine only slows a run, and
  // would otherwise decide against whichever ran during it. The second
  // measures again the first pass's fastest two, the second if within
  // kTuneMargin of the first: the choice is between them, and a large
  // model's run takes seconds a step.
  std::vector<std::optional<Measurement>> measured(candidates.size());
  std::vector<size_t> order = selected;
  // The first pass's last candidate, when measured again, is the second
  // pass's first: its trainer goes on rather than being compiled and
  // faulted in again. Only one trainer lives at a time, so that the
  // process stays within the budget.
  CandidateRun run;
  for (unsigned pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      if (order.size() < 2) // nothing to tell apart
        break;
      std::vector<size_t> fastestTwo = order;
      llvm::stable_sort(fastestTwo, [&](size_t a, size_t b) {
        return measured[a]->samplesPerSecond > measured[b]->samplesPerSecond;
      });
      fastestTwo.resize(std::min<size_t>(fastestTwo.size(), 2));
      double fastest = measured[fastestTwo.front()]->samplesPerSecond;
      llvm::erase_if(order, [&](size_t i) {
        return !llvm::is_contained(fastestTwo, i) ||
               measured[i]->samplesPerSecond < fastest * (1 - kTuneMargin);
      });
      if (order.size() < 2) // nothing left to tell apart
        break;
      std::reverse(order.begin(), order.end());
    }
    for (size_t i : order) {
      Measurement measurement;
      rt::Status status;
      if (!run.trainer || run.index != i) {
        run.reset(); // its memory before the next one's
        run.index = i;
        status = startRun(module, stepName, baseOptions, candidates[i],
                          options.cache, std::move(compiled[i]), run, times);
        compiled[i].reset(); // compiled again if measured again
      }
      if (status)
        status = timeSteps(run, options.measureSteps, measurement, times);
      if (!status) {
        llvm::errs() << "gacc tune: error: " << status.message() << "\n";
        return 1;
      }
      if (measurement.peakBytes > options.budgetBytes)
        llvm::errs() << "gacc tune: warning: " << candidates[i].optionsText()
                     << " measured a peak of " << mib(measurement.peakBytes)
                     << ", over the budget its plan fit\n";
      if (!measured[i] ||
          measurement.samplesPerSecond > measured[i]->samplesPerSecond)
        measured[i] = measurement;
    }
  }
  run.reset();
  size_t best = 0;
  for (size_t i : selected)
    if (measured[i]->samplesPerSecond > measured[best]->samplesPerSecond)
      best = i;
  double seconds = secondsSince(start);
  if (chosen)
    *chosen = candidates[best].optionsText();

  llvm::json::Array all;
  for (size_t i = 0; i < candidates.size(); ++i)
    all.push_back(toJson(candidates[i], measured[i]));
  llvm::json::Object choice = toJson(candidates[best], measured[best]);
  choice["memory_budget_bytes"] = options.budgetBytes;
  choice["tune_seconds"] = seconds;
  choice["tune_seconds_planning"] = times.planning;
  choice["tune_seconds_compiling"] = times.compiling;
  choice["tune_seconds_running"] = times.running;
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
  llvm::outs() << llvm::format("%-9s %-8s %-10s %6s %5s %12s %6s %11s %11s\n",
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
    double predicted = c.plan.batchSize / std::max(c.predictedSeconds, 1e-12);
    if (c.pruned) { // a bound: it was not planned
      std::string bound = llvm::formatv("<={0:f1}/s", predicted).str();
      llvm::outs() << llvm::format(
          "%-9s %-8s %-10s %6s %5s %12s %6s %11s %11s\n", c.precision.c_str(),
          c.remat.c_str(), optimizer.c_str(), "-", "-", "-", "pruned",
          bound.c_str(), rate.c_str());
      continue;
    }
    std::string prediction =
        c.fits ? llvm::formatv("{0:f1}/s", predicted).str() : "-";
    llvm::outs() << llvm::format(
        "%-9s %-8s %-10s %6lld %5lld %12s %6s %11s %11s%s\n",
        c.precision.c_str(), c.remat.c_str(), optimizer.c_str(),
        static_cast<long long>(c.plan.microBatchSize),
        static_cast<long long>(c.plan.accumulationSteps),
        mib(c.plan.peakBytes()).c_str(), c.fits ? "yes" : "no",
        prediction.c_str(), rate.c_str(), i == best ? "  <- chosen" : "");
  }
  llvm::outs() << "chosen: " << candidates[best].optionsText() << " (planned "
               << mib(candidates[best].plan.peakBytes());
  if (measured[best])
    llvm::outs() << ", measured " << mib(measured[best]->peakBytes) << ", "
                 << llvm::formatv("{0:f1}", measured[best]->samplesPerSecond)
                 << " samples/s";
  else
    llvm::outs() << ", by the cost model alone";
  llvm::outs() << "); tuned in "
               << llvm::formatv("{0:f1} s (planning {1:f1}, compiling {2:f1}, "
                                "running {3:f1})",
                                seconds, times.planning, times.compiling,
                                times.running);
  if (!options.output.empty())
    llvm::outs() << "; wrote " << options.output
                 << " (gacc run --config " << options.output << ")";
  llvm::outs() << "\n";
  return 0;
}

} // namespace gacc
