//===- Run.cpp - the `gacc run` training loop -------------------------------===//

#include "Run.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Safetensors.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

namespace gacc {
using namespace rt;

int mpiWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *size = std::getenv(name))
      return std::max(1, std::atoi(size));
  return 1;
}

namespace {
/// A double as JSON has it: non-finite values (a skipped f16 step's
/// gradient norm) are null.
struct JsonNumber {
  double value;
  friend std::ostream &operator<<(std::ostream &os, JsonNumber number) {
    if (!std::isfinite(number.value))
      return os << "null";
    return os << number.value;
  }
};
int fail(const std::string &message) {
  std::cerr << "gacc run: error: " << message << "\n";
  return 1;
}

/// A rate or duration with the digits that matter: 1234, 12.3, 0.738.
std::string readable(double value) {
  char text[32];
  std::snprintf(text, sizeof(text),
                value >= 100  ? "%.0f"
                : value >= 10 ? "%.1f"
                              : "%.3g",
                value);
  return text;
}
/// Seconds as 1:02:03, 2:03 or 45s.
std::string duration(double seconds) {
  long long s = std::llround(std::max(seconds, 0.0));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", s / 3600,
                  s / 60 % 60, s % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof(text), "%lld:%02lld", s / 60, s % 60);
  else
    std::snprintf(text, sizeof(text), "%llds", s);
  return text;
}

/// What a pass over evaluation data found.
struct Evaluation {
  double loss = 0;
  std::optional<double> accuracy;
  int64_t examples = 0; ///< every rank's
  double seconds = 0;
};

/// The mean loss over every example of `dataset` (and the accuracy of a
/// classifier), without updating. A padded last batch counts only its real
/// rows: a loss that averages over counted labels (token_mean, one rank)
/// gets the ignore index in the padding's labels and each batch weighs by
/// its counted labels, as PyTorch's mean over a whole set would; otherwise
/// the loss of a batch of its first row alone separates the padding (exact
/// where rows weigh alike: per-row means, and token_mean over token files,
/// whose labels are all counted). On several ranks, every rank's slice
/// counts.
Status evaluate(Trainer &trainer, Dataset &dataset, Communicator &communicator,
                Evaluation &result) {
  auto start = std::chrono::steady_clock::now();
  const ModelInfo &model = trainer.model();
  const Input *labels = nullptr; // the model's only labels input, if one
  int labelInputs = 0;
  for (const Input &input : model.inputs)
    if (input.kind == InputKind::Labels)
      labels = &input, ++labelInputs;
  if (labelInputs != 1)
    labels = nullptr;
  // Accuracy needs logits [..., C] next to the labels [...].
  bool classifier = labels && !model.outputs.empty() &&
                    std::vector<int64_t>(model.outputs[0].shape.begin(),
                                         model.outputs[0].shape.end() - 1) ==
                        labels->slot.shape;
  bool ignorable = labels && labels->ignoreIndex;
  // (ZeRO reduces an evaluation's token_mean as the mean of the ranks'
  // means: counted labels weigh alike only on one rank.)
  bool byCountedLabels =
      ignorable && labels->meanOverCounted && model.ranks == 1;
  int64_t rows = model.batchSize / model.ranks; // this rank's
  // Sums over every rank: loss × weight, weight, correct, counted, rows.
  double totals[5] = {0, 0, 0, 0, 0};
  Batch batch;
  std::vector<Tensor> outputs;
  for (uint64_t b = 0; b < dataset.batchesPerEpoch(); ++b) {
    if (Status s = dataset.batch(b, batch); !s)
      return s;
    int64_t real = dataset.realRows(b);
    double counts[2] = {static_cast<double>(real), 0}; // real rows, labels
    if (labels) {
      Tensor &truth = batch.at(labels->slot.name);
      int64_t perRow = truth.numElements() / rows;
      for (int64_t i = 0; i < truth.numElements(); ++i) {
        if (i / perRow >= real && byCountedLabels)
          storeElement(truth.dtype(), truth.data(), i, *labels->ignoreIndex);
        double label = loadElement(truth.dtype(), truth.data(), i);
        if (i / perRow < real && !(ignorable && label == *labels->ignoreIndex))
          ++counts[1];
      }
    }
    if (Status s =
            communicator.allReduce(counts, 2, DType::F64, Reduction::Sum);
        !s)
      return s;
    double globalRows = static_cast<double>(model.batchSize);
    double batchLoss = 0;
    if (Status s = trainer.setBatch(batch); !s)
      return s;
    if (Status s = trainer.evaluate(batchLoss, outputs); !s)
      return s;
    if (byCountedLabels) {
      if (counts[1] > 0) { // (a batch of ignored labels only has no mean)
        totals[0] += batchLoss * counts[1];
        totals[1] += counts[1];
      }
    } else if (counts[0] < globalRows) {
      Batch firstRow;
      double firstRowLoss = 0;
      std::vector<Tensor> unused;
      if (Status s = dataset.firstRowBatch(b, firstRow); !s)
        return s;
      if (Status s = trainer.setBatch(firstRow); !s)
        return s;
      if (Status s = trainer.evaluate(firstRowLoss, unused); !s)
        return s;
      totals[0] +=
          globalRows * batchLoss - (globalRows - counts[0]) * firstRowLoss;
      totals[1] += counts[0];
    } else {
      totals[0] += globalRows * batchLoss;
      totals[1] += globalRows;
    }
    totals[4] += counts[0];
    if (!classifier)
      continue;
    const Tensor &logits = outputs[0];
    const Tensor &truth = batch.at(labels->slot.name);
    int64_t classes = logits.shape().back();
    int64_t perRow = truth.numElements() / rows;
    for (int64_t i = 0; i < real * perRow; ++i) {
      double label = loadElement(truth.dtype(), truth.data(), i);
      if (ignorable && label == *labels->ignoreIndex)
        continue;
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (loadElement(logits.dtype(), logits.data(), i * classes + c) >
            loadElement(logits.dtype(), logits.data(), i * classes + best))
          best = c;
      totals[2] += best == static_cast<int64_t>(label);
      ++totals[3];
    }
  }
  // (The losses came reduced over the ranks; the accuracy's counts did not.)
  double counted[2] = {totals[2], totals[3]};
  if (Status s = communicator.allReduce(counted, 2, DType::F64, Reduction::Sum);
      !s)
    return s;
  result.loss = totals[0] / std::max(totals[1], 1.0);
  result.accuracy.reset();
  if (counted[1] > 0)
    result.accuracy = counted[0] / counted[1];
  result.examples = static_cast<int64_t>(totals[4]);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return Status();
}

/// The ranks of this job: MPI's for a step compiled for several, else one
/// (refusing an MPI job of several ranks, whose copies would each train
/// alone; a step compiled just in time takes the world's size).
Status joinJob(Trainer &trainer, std::unique_ptr<Communicator> &out) {
  const ModelInfo &model = trainer.model();
  if (model.ranks > 1) {
    if (Status s = createMpiCommunicator(out); !s)
      return s;
  } else {
    out = createSingleRankCommunicator();
    if (int size = mpiWorldSize(); size > 1)
      return Status::error("the step is compiled for 1 rank, but mpirun "
                           "started " +
                           std::to_string(size) + ": compile it with --ranks " +
                           std::to_string(size));
  }
  return trainer.setCommunicator(*out);
}

/// `global`'s batches, or this rank's slice of them.
std::unique_ptr<Dataset> forRank(std::unique_ptr<Dataset> global,
                                 const Trainer &trainer) {
  if (trainer.model().ranks == 1)
    return global;
  return Dataset::rankSlice(std::move(global), trainer.model(), trainer.rank());
}

/// The checkpoints in `dir` (step-<N>.safetensors), by step.
std::vector<std::pair<uint64_t, std::string>>
checkpointsIn(const std::string &dir) {
  std::vector<std::pair<uint64_t, std::string>> found;
  DIR *handle = ::opendir(dir.c_str());
  if (!handle)
    return found;
  while (dirent *entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    unsigned long long step;
    int length = 0;
    if (std::sscanf(name.c_str(), "step-%llu.safetensors%n", &step, &length) ==
            1 &&
        static_cast<size_t>(length) == name.size())
      found.emplace_back(step, dir + "/" + name);
  }
  ::closedir(handle);
  std::sort(found.begin(), found.end());
  return found;
}

/// Before a resumed run appends to the metrics of the run it continues:
/// keeps their records up to `step`, dropping those of steps the resumed
/// run does again (a run killed after its last checkpoint) and a line cut
/// short.
Status keepMetricsUntil(const std::string &path, uint64_t step) {
  std::ifstream in(path);
  if (!in)
    return Status(); // a new file
  std::string kept, line;
  while (std::getline(in, line)) {
    unsigned long long recorded;
    if (in.eof() ||
        std::sscanf(line.c_str(), "{\"step\": %llu", &recorded) != 1)
      continue; // no newline: cut short
    if (recorded <= step)
      kept += line + "\n";
  }
  return writeFileAtomically(path, kept);
}

volatile std::sig_atomic_t stopSignal = 0;
extern "C" void requestStop(int signal) { stopSignal = signal; }

/// Opens a dataset as the options say: a token file, examples, or
/// synthetic data (for training only).
Status openData(const std::string &examples, const std::string &tokens,
                const ModelInfo &global, const DataOrder &order,
                const RunOptions &options, std::unique_ptr<Dataset> &out) {
  if (!tokens.empty())
    return Dataset::openTokens(tokens, global, order, options.tokenOptions,
                               out);
  if (!examples.empty())
    return Dataset::open(examples, global, order, out);
  out = Dataset::synthetic(global, order.seed);
  return Status();
}
} // namespace

int runTraining(Trainer &trainer, const RunOptions &options) {
  std::unique_ptr<Communicator> communicator;
  if (Status s = joinJob(trainer, communicator); !s)
    return fail(s.message());
  // On several ranks, an error on one must end all of them: the others
  // would wait for it in their next collective.
  auto fail = [&](const std::string &message) -> int {
    if (communicator->size() > 1)
      communicator->abort("gacc run: error: " + message);
    return gacc::fail(message);
  };
  bool leader = communicator->rank() == 0;
  if (!leader)
    std::freopen("/dev/null", "w", stdout); // rank 0 reports for the job
  const ModelInfo &model = trainer.model();
  ModelInfo global = model.globalBatch();
  // A trainer that openTrainer initialized with this seed, as one rank,
  // has nothing to do here (Trainer::initialize).
  if (Status s = trainer.initialize(options.seed); !s)
    return fail(s.message());
  if (options.lr)
    trainer.setLearningRate(*options.lr);
  if (!options.init.empty()) {
    TensorFile file;
    if (Status s = readSafetensors(options.init, file); !s)
      return fail(s.message());
    if (Status s = trainer.loadParameters(file, options.init); !s)
      return fail(s.message());
  }
  if (!options.resume.empty()) {
    std::string resume = options.resume;
    if (resume == "latest") {
      auto saved = checkpointsIn(options.checkpointDir);
      if (saved.empty())
        return fail("--resume latest: no checkpoint (step-<N>.safetensors) "
                    "in " +
                    options.checkpointDir);
      resume = saved.back().second;
    }
    struct stat info;
    bool sharded = ::stat(resume.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
    if (Status s = sharded ? trainer.loadShardedCheckpoint(resume)
                           : trainer.loadCheckpoint(resume);
        !s)
      return fail(s.message());
    if (options.seedGiven && trainer.seed() != options.seed)
      return fail("--seed " + std::to_string(options.seed) + ": " + resume +
                  " was trained with seed " + std::to_string(trainer.seed()) +
                  ", whose data order resuming continues (start a new run "
                  "from it with --init)");
    std::printf("resumed from %s at step %llu\n", resume.c_str(),
                static_cast<unsigned long long>(trainer.stepCount()));
  }

  // Data, checked before the first step. The order follows the run's seed.
  std::unique_ptr<Dataset> data, evalData;
  DataOrder order{trainer.seed(), /*training=*/true};
  if (Status s =
          openData(options.data, options.tokens, global, order, options, data);
      !s)
    return fail(s.message());
  uint64_t perEpoch = data->batchesPerEpoch();
  data = Dataset::prefetch(forRank(std::move(data), trainer), options.prefetch,
                           trainer.stepCount());
  if (!options.evalData.empty() || !options.evalTokens.empty()) {
    DataOrder evalOrder{trainer.seed(), /*training=*/false};
    if (Status s = openData(options.evalData, options.evalTokens, global,
                            evalOrder, options, evalData);
        !s)
      return fail(s.message());
    evalData = forRank(std::move(evalData), trainer);
  }

  uint64_t first = trainer.stepCount(), last = options.steps;
  if (options.epochs) {
    if (perEpoch == 0)
      return fail("--epochs needs data (--data or --tokens); synthetic data "
                  "has no epochs");
    last = *options.epochs * perEpoch;
  }
  if (options.scheduleEndsWithRun)
    if (Status s = trainer.endScheduleAt(last); !s)
      return fail("--lr-schedule: " + s.message());
  // (A run with nothing left to train still evaluates and saves: that is
  // how a checkpoint is evaluated.)
  if (first >= last)
    std::printf("already at step %llu of %llu: nothing to train\n",
                static_cast<unsigned long long>(first),
                static_cast<unsigned long long>(last));

  std::ofstream metrics;
  if (!options.metrics.empty() && leader) {
    if (!options.resume.empty())
      if (Status s = keepMetricsUntil(options.metrics, first); !s)
        return fail(s.message());
    metrics.open(options.metrics,
                 options.resume.empty() ? std::ios::trunc : std::ios::app);
    if (!metrics)
      return fail(options.metrics + ": cannot write");
    metrics << std::setprecision(std::numeric_limits<double>::max_digits10);
  }
  // Periodic checkpoints continue this run's: a directory holding another
  // run's, or this one's past the step resumed from, would mix two runs
  // under --resume latest and --keep-last.
  if (options.saveEvery) {
    auto saved = checkpointsIn(options.checkpointDir);
    if (!saved.empty() && options.resume.empty())
      return fail(options.checkpointDir +
                  " holds the checkpoints of another "
                  "run (up to " +
                  saved.back().second +
                  "): continue it with "
                  "--resume latest, or give another --checkpoint-dir");
    if (!saved.empty() && saved.back().first > first)
      return fail(options.checkpointDir + " holds checkpoints past step " +
                  std::to_string(first) + " (up to " + saved.back().second +
                  "), which this run would mix with its own: move them, or "
                  "give another --checkpoint-dir");
  }
  auto save = [&](uint64_t step) -> Status {
    if (leader)
      if (std::error_code ec =
              llvm::sys::fs::create_directories(options.checkpointDir))
        return Status::error(options.checkpointDir +
                             ": cannot create: " + ec.message());
    std::string path = options.checkpointDir + "/step-" + std::to_string(step) +
                       ".safetensors";
    if (Status s = trainer.saveCheckpoint(path); !s)
      return s;
    if (leader && options.keepLast) { // the oldest, never the one just saved
      auto saved = checkpointsIn(options.checkpointDir);
      for (size_t i = 0; i + options.keepLast < saved.size(); ++i)
        if (saved[i].first < step)
          std::remove(saved[i].second.c_str());
    }
    return Status();
  };
  Evaluation evaluation;
  auto runEvaluation = [&](uint64_t step) -> Status {
    if (Status s = evaluate(trainer, *evalData, *communicator, evaluation); !s)
      return s;
    if (metrics) {
      metrics << "{\"step\": " << step
              << ", \"eval_loss\": " << JsonNumber{evaluation.loss};
      if (evaluation.accuracy)
        metrics << ", \"eval_accuracy\": " << *evaluation.accuracy;
      metrics << ", \"eval_examples\": " << evaluation.examples
              << ", \"eval_s\": " << evaluation.seconds << "}\n";
      metrics.flush();
    }
    return Status();
  };
  auto printEvaluation = [&](uint64_t step) {
    std::printf("eval at step %llu: loss %.6f",
                static_cast<unsigned long long>(step), evaluation.loss);
    if (evaluation.accuracy)
      std::printf("  accuracy %.4f", *evaluation.accuracy);
    std::printf("  (%lld examples, %s s)\n",
                static_cast<long long>(evaluation.examples),
                readable(evaluation.seconds).c_str());
  };

  // A signal ends the run after the step it interrupts, with a checkpoint;
  // a second one ends it at once (the handler resets itself).
  struct sigaction stopAction = {};
  stopAction.sa_handler = requestStop;
  stopAction.sa_flags = SA_RESETHAND;
  sigemptyset(&stopAction.sa_mask);
  ::sigaction(SIGINT, &stopAction, nullptr);
  ::sigaction(SIGTERM, &stopAction, nullptr);

  // (mpirun gives its ranks a terminal even when its output is a log.)
  bool terminal = ::isatty(STDOUT_FILENO) && mpiWorldSize() == 1;
  StepResult result;
  uint64_t skipped = 0, step = first;
  auto start = std::chrono::steady_clock::now();
  double stepSeconds = 0, dataSeconds = 0;
  Batch batch;
  bool interrupted = false;
  for (; step < last; ++step) {
    auto dataStart = std::chrono::steady_clock::now();
    if (Status s = data->batch(step, batch); !s)
      return fail(s.message());
    auto stepStart = std::chrono::steady_clock::now();
    if (Status s = trainer.setBatch(batch); !s)
      return fail(s.message());
    if (Status s = trainer.step(result); !s)
      return fail(s.message() + "; nothing was saved");
    auto stepEnd = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(stepEnd - stepStart).count();
    double waited =
        std::chrono::duration<double>(stepStart - dataStart).count();
    stepSeconds += seconds;
    dataSeconds += waited;
    double elapsed = std::chrono::duration<double>(stepEnd - start).count();
    uint64_t done = step + 1;
    // samples_per_s measures the step; data_s is the wait for its batch
    // (none while prefetching keeps up).
    double samplesPerSecond = model.batchSize / seconds;
    double epoch = perEpoch ? static_cast<double>(done) / perEpoch : 0;
    if (step == first && !options.dumpGrads.empty()) {
      TensorFile grads = trainer.gradients(); // every rank gathers
      if (leader)
        if (Status s = writeSafetensors(options.dumpGrads, grads); !s)
          return fail(s.message());
    }
    skipped += result.skipped;
    if (metrics) {
      metrics << "{\"step\": " << done
              << ", \"loss\": " << JsonNumber{result.loss}
              << ", \"lr\": " << result.lr
              << ", \"grad_norm\": " << JsonNumber{result.gradNorm}
              << ", \"samples_per_s\": " << samplesPerSecond
              << ", \"step_s\": " << seconds << ", \"data_s\": " << waited
              << ", \"elapsed_s\": " << elapsed;
      if (perEpoch)
        metrics << ", \"epoch\": " << epoch;
      metrics << ", \"peak_bytes\": " << result.peakBytes
              << ", \"heap_bytes\": " << result.heapBytes;
      if (model.ranks > 1)
        metrics << ", \"communicated_elements\": "
                << result.communicatedElements;
      if (model.lossScaling)
        metrics << ", \"loss_scale\": " << result.lossScale
                << ", \"skipped\": " << (result.skipped ? "true" : "false");
      metrics << "}\n" << std::flush; // what a kill leaves is whole lines
    }
    if (leader) {
      double eta = elapsed / (done - first) * (last - done);
      std::string epochText;
      if (perEpoch)
        epochText = "  epoch " + std::to_string(step / perEpoch + 1) + "/" +
                    std::to_string((last + perEpoch - 1) / perEpoch);
      if (terminal) {
        const int width = 24;
        int filled = static_cast<int>(width * (done - first) / (last - first));
        std::printf("\r[%s%s] %llu/%llu%s  loss %.4f  %s samples/s  ETA %s ",
                    std::string(filled, '#').c_str(),
                    std::string(width - filled, '.').c_str(),
                    static_cast<unsigned long long>(done),
                    static_cast<unsigned long long>(last), epochText.c_str(),
                    result.loss, readable(samplesPerSecond).c_str(),
                    duration(eta).c_str());
        std::fflush(stdout);
      } else if (done % options.logEvery == 0 || done == last ||
                 step == first || result.skipped) {
        std::printf("step %llu/%llu%s  loss %.6f  grad_norm %.4f  lr %.3g  "
                    "%s samples/s  ETA %s",
                    static_cast<unsigned long long>(done),
                    static_cast<unsigned long long>(last), epochText.c_str(),
                    result.loss, result.gradNorm, result.lr,
                    readable(samplesPerSecond).c_str(), duration(eta).c_str());
        if (model.lossScaling)
          std::printf("  scale %g%s", result.lossScale,
                      result.skipped ? "  skipped (overflow)" : "");
        std::printf("\n");
        std::fflush(stdout);
      }
    }
    if (evalData && options.evalEvery && done % options.evalEvery == 0 &&
        done != last) {
      if (Status s = runEvaluation(done); !s)
        return fail(s.message());
      if (terminal)
        std::printf("\n");
      printEvaluation(done);
    }
    bool stop = stopSignal != 0;
    if (communicator->size() > 1) { // every rank stops at the same step
      double flag = stop;
      if (Status s =
              communicator->allReduce(&flag, 1, DType::F64, Reduction::Sum);
          !s)
        return fail(s.message());
      stop = flag > 0;
    }
    if (stop || (options.saveEvery && done % options.saveEvery == 0)) {
      if (Status s = save(done); !s)
        return fail(s.message());
    }
    if (stop) {
      interrupted = true;
      ++step;
      break;
    }
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (terminal && leader)
    std::printf("\n");
  if (interrupted) {
    std::printf(
        "stopped by signal %d after step %llu: saved %s/step-%llu."
        "safetensors; go on with --resume latest\n",
        static_cast<int>(stopSignal), static_cast<unsigned long long>(step),
        options.checkpointDir.c_str(), static_cast<unsigned long long>(step));
    return 0;
  }
  double total = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  uint64_t trained = last > first ? last - first : 0;
  if (trained) {
    std::printf(
        "trained %llu steps in %.2f s (%s samples/s), final loss "
        "%.6f\n",
        static_cast<unsigned long long>(trained), total,
        readable(trained * model.batchSize / std::max(stepSeconds, 1e-9))
            .c_str(),
        result.loss);
    if (dataSeconds > 0.01 * total && dataSeconds > 0.1)
      std::printf("waited %.2f s for data (--prefetch %u)\n", dataSeconds,
                  options.prefetch);
    if (model.lossScaling)
      std::printf("loss scaling: %llu of %llu steps skipped on overflow, "
                  "scale now %g\n",
                  static_cast<unsigned long long>(skipped),
                  static_cast<unsigned long long>(trained),
                  trainer.lossScale());
    if (model.ranks > 1)
      std::printf("ZeRO stage %lld on %lld ranks: %lld elements communicated "
                  "per step per rank\n",
                  static_cast<long long>(model.zeroStage),
                  static_cast<long long>(model.ranks),
                  static_cast<long long>(result.communicatedElements));
    std::printf("memory: state %.1f MiB, batch %.1f MiB, workspace %.1f MiB "
                "(planned), heap %.1f MiB; peak %.1f MiB (measured)\n",
                model.stateBytes / 1048576.0, model.batchBytes / 1048576.0,
                model.workspaceBytes / 1048576.0, result.heapBytes / 1048576.0,
                result.peakBytes / 1048576.0);
  }

  uint64_t now = trainer.stepCount();
  if (evalData) {
    if (Status s = runEvaluation(now); !s)
      return fail(s.message());
    printEvaluation(now);
  }
  if (trained && options.saveEvery && now % options.saveEvery != 0)
    if (Status s = save(now); !s)
      return fail(s.message());
  if (!options.save.empty()) {
    if (Status s = trainer.saveCheckpoint(options.save); !s)
      return fail(s.message());
    std::printf("saved %s (step %llu)\n", options.save.c_str(),
                static_cast<unsigned long long>(trainer.stepCount()));
  }
  if (!options.saveSharded.empty()) {
    if (Status s = trainer.saveShardedCheckpoint(options.saveSharded); !s)
      return fail(s.message());
    std::printf("saved %s: %lld shards and an index (step %llu)\n",
                options.saveSharded.c_str(),
                static_cast<long long>(model.ranks),
                static_cast<unsigned long long>(trainer.stepCount()));
  }
  return 0;
}

Status measureOneStep(Trainer &trainer, StepResult &result) {
  if (Status s = trainer.initialize(/*seed=*/0); !s)
    return s;
  std::unique_ptr<Dataset> data = Dataset::synthetic(trainer.model(), 0);
  Batch batch;
  if (Status s = data->batch(0, batch); !s)
    return s;
  if (Status s = trainer.setBatch(batch); !s)
    return s;
  return trainer.step(result);
}

} // namespace gacc
