//===- Run.cpp - the `gacc run` training loop -------------------------------===//

#include "Run.h"
#include "gacc/runtime/Safetensors.h"

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace gacc {
using namespace rt;

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

/// Mean loss and accuracy over one pass of `dataset` (on several ranks,
/// over every rank's slice: the loss comes reduced from the step, the
/// accuracy's counts are summed on `communicator`).
Status evaluate(Trainer &trainer, Dataset &dataset, Communicator &communicator,
                double &loss, std::optional<double> &accuracy) {
  const ModelInfo &model = trainer.model();
  // Accuracy needs logits [..., C] next to labels [...].
  const Input *labels = nullptr;
  if (!model.outputs.empty())
    for (const Input &input : model.inputs)
      if (input.kind == InputKind::Labels &&
          std::vector<int64_t>(model.outputs[0].shape.begin(),
                               model.outputs[0].shape.end() - 1) ==
              input.slot.shape)
        labels = &input;
  double lossSum = 0;
  int64_t correct = 0, counted = 0;
  Batch batch;
  std::vector<Tensor> outputs;
  for (uint64_t b = 0; b < dataset.batchesPerEpoch(); ++b) {
    double batchLoss = 0;
    if (Status s = dataset.batch(b, batch); !s)
      return s;
    if (Status s = trainer.setBatch(batch); !s)
      return s;
    if (Status s = trainer.evaluate(batchLoss, outputs); !s)
      return s;
    lossSum += batchLoss;
    if (!labels)
      continue;
    const Tensor &logits = outputs[0];
    const Tensor &truth = batch.at(labels->slot.name);
    int64_t classes = logits.shape().back();
    for (int64_t i = 0; i < truth.numElements(); ++i) {
      double label = loadElement(truth.dtype(), truth.data(), i);
      if (labels->ignoreIndex && label == *labels->ignoreIndex)
        continue;
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (loadElement(logits.dtype(), logits.data(), i * classes + c) >
            loadElement(logits.dtype(), logits.data(), i * classes + best))
          best = c;
      correct += best == static_cast<int64_t>(label);
      ++counted;
    }
  }
  loss = lossSum / static_cast<double>(dataset.batchesPerEpoch());
  double counts[2] = {static_cast<double>(correct),
                      static_cast<double>(counted)};
  if (Status s = communicator.allReduce(counts, 2, DType::F64, Reduction::Sum);
      !s)
    return s;
  if (counts[1] > 0)
    accuracy = counts[0] / counts[1];
  return Status();
}

void printProgress(uint64_t done, uint64_t total, double loss,
                   double samplesPerSecond) {
  const int width = 30;
  int filled = static_cast<int>(width * done / std::max<uint64_t>(total, 1));
  std::printf("\r[%s%s] %llu/%llu  loss %.4f  %.0f samples/s",
              std::string(filled, '#').c_str(),
              std::string(width - filled, '.').c_str(),
              static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(total), loss, samplesPerSecond);
  std::fflush(stdout);
}
/// The ranks of this job: MPI's for a step compiled for several, else one
/// (refusing an MPI job of several ranks, whose copies would each train
/// alone).
Status joinJob(Trainer &trainer, std::unique_ptr<Communicator> &out) {
  const ModelInfo &model = trainer.model();
  if (model.ranks > 1) {
    if (Status s = createMpiCommunicator(out); !s)
      return s;
  } else {
    const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
    out = createSingleRankCommunicator();
    if (size && std::atoi(size) > 1)
      return Status::error("the step is compiled for 1 rank, but mpirun "
                           "started " + std::string(size) +
                           ": give --ranks " + size);
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
    struct stat info;
    bool sharded = ::stat(options.resume.c_str(), &info) == 0 &&
                   S_ISDIR(info.st_mode);
    if (Status s = sharded ? trainer.loadShardedCheckpoint(options.resume)
                           : trainer.loadCheckpoint(options.resume);
        !s)
      return fail(s.message());
  }

  std::unique_ptr<Dataset> data, evalData;
  if (options.data.empty()) {
    data = Dataset::synthetic(global, options.seed);
  } else if (Status s = Dataset::open(options.data, global, options.seed,
                                      /*shuffle=*/true, data);
             !s) {
    return fail(s.message());
  }
  data = forRank(std::move(data), trainer);
  if (!options.evalData.empty()) {
    if (Status s = Dataset::open(options.evalData, global, options.seed,
                                 /*shuffle=*/false, evalData);
        !s)
      return fail(s.message());
    evalData = forRank(std::move(evalData), trainer);
  }

  std::ofstream metrics;
  if (!options.metrics.empty() && leader) {
    metrics.open(options.metrics);
    if (!metrics)
      return fail(options.metrics + ": cannot write");
  }

  bool terminal = ::isatty(STDOUT_FILENO);
  uint64_t first = trainer.stepCount(), last = first + options.steps;
  StepResult result;
  uint64_t skipped = 0;
  auto start = std::chrono::steady_clock::now();
  Batch batch;
  for (uint64_t step = first; step < last; ++step) {
    if (Status s = data->batch(step, batch); !s)
      return fail(s.message());
    // samples_per_s measures the step, not the data source (a loader runs
    // beside training in a real pipeline).
    auto stepStart = std::chrono::steady_clock::now();
    if (Status s = trainer.setBatch(batch); !s)
      return fail(s.message());
    if (Status s = trainer.step(result); !s)
      return fail(s.message() + "; nothing was saved");
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - stepStart)
                         .count();
    double samplesPerSecond = model.batchSize / seconds;
    if (step == first && !options.dumpGrads.empty()) {
      TensorFile grads = trainer.gradients(); // every rank gathers
      if (leader)
        if (Status s = writeSafetensors(options.dumpGrads, grads); !s)
          return fail(s.message());
    }
    skipped += result.skipped;
    if (metrics) {
      metrics << std::setprecision(std::numeric_limits<double>::max_digits10)
              << "{\"step\": " << step + 1
              << ", \"loss\": " << JsonNumber{result.loss}
              << ", \"lr\": " << result.lr
              << ", \"grad_norm\": " << JsonNumber{result.gradNorm}
              << ", \"samples_per_s\": " << samplesPerSecond
              << ", \"peak_bytes\": " << result.peakBytes
              << ", \"heap_bytes\": " << result.heapBytes;
      if (model.ranks > 1)
        metrics << ", \"communicated_elements\": "
                << result.communicatedElements;
      if (model.lossScaling)
        metrics << ", \"loss_scale\": " << result.lossScale
                << ", \"skipped\": " << (result.skipped ? "true" : "false");
      metrics << "}\n";
    }
    if (!leader)
      continue;
    if (terminal)
      printProgress(step + 1 - first, options.steps, result.loss,
                    samplesPerSecond);
    else if ((step + 1) % 10 == 0 || step + 1 == last || step == first ||
             result.skipped) {
      std::printf("step %llu  loss %.6f  grad_norm %.4f  lr %.3g  %.0f "
                  "samples/s",
                  static_cast<unsigned long long>(step + 1), result.loss,
                  result.gradNorm, result.lr, samplesPerSecond);
      if (model.lossScaling)
        std::printf("  scale %g%s", result.lossScale,
                    result.skipped ? "  skipped (overflow)" : "");
      std::printf("\n");
    }
  }
  if (terminal && leader)
    std::printf("\n");
  double total = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  std::printf("trained %llu steps in %.2f s (%.0f samples/s), final loss "
              "%.6f\n",
              static_cast<unsigned long long>(options.steps), total,
              options.steps * model.batchSize / std::max(total, 1e-9),
              result.loss);
  if (model.lossScaling)
    std::printf("loss scaling: %llu of %llu steps skipped on overflow, "
                "scale now %g\n",
                static_cast<unsigned long long>(skipped),
                static_cast<unsigned long long>(options.steps),
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

  if (evalData) {
    double loss = 0;
    std::optional<double> accuracy;
    if (Status s = evaluate(trainer, *evalData, *communicator, loss, accuracy);
        !s)
      return fail(s.message());
    std::printf("eval: loss %.6f", loss);
    if (accuracy)
      std::printf("  accuracy %.4f", *accuracy);
    std::printf("  (%llu batches)\n",
                static_cast<unsigned long long>(evalData->batchesPerEpoch()));
  }
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
