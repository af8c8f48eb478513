//===- train_artifact.cpp - train an artifact with the runtime alone --------===//
//
// What bench/gpu/gpu_bench.sh runs on a GPU machine without LLVM: trains an
// artifact (any target) on the runtime's synthetic data for the model
// (seed 1, the same batches for every target), prints each step's loss and
// the time to open it (on a GPU, loading the kernels) and the samples per
// second after the first 3 steps (warm-up):
// the time of setting the batch (on a GPU, its upload) and stepping, not
// of synthesizing the batch, which a data loader would overlap.
//
//   gacc-train-artifact MODEL.gacc STEPS
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/Trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace gacc::rt;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.gacc STEPS\n", argv[0]);
    return 2;
  }
  int steps = std::atoi(argv[2]);
  std::unique_ptr<Trainer> trainer;
  auto opening = std::chrono::steady_clock::now();
  if (Status s = openTrainer(argv[1], /*seed=*/0, trainer); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  // On a GPU, opening loads the kernels (the driver compiles the PTX of
  // the chips the artifact has no machine code for).
  std::printf("open_s %.3f\n", std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - opening)
                                    .count());
  std::unique_ptr<Dataset> data = Dataset::synthetic(trainer->model(), 1);
  int64_t samples = trainer->model().inputs.front().slot.shape[0];
  double seconds = 0;
  int64_t peakBytes = 0;
  for (int step = 0; step < steps; ++step) {
    Batch batch;
    StepResult result;
    Status s = data->batch(step, batch);
    auto start = std::chrono::steady_clock::now();
    if (s)
      s = trainer->setBatch(batch);
    if (s)
      s = trainer->step(result);
    if (!s) {
      std::fprintf(stderr, "error: step %d: %s\n", step + 1,
                   s.message().c_str());
      return 1;
    }
    if (step >= 3)
      seconds += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    std::printf("loss %d %.9g\n", step + 1, result.loss);
    peakBytes = std::max(peakBytes, result.peakBytes);
  }
  // The memory plan's arenas (the workspace holds the activations) and
  // the measured high-water mark, the heap's temporaries included.
  const ModelInfo &model = trainer->model();
  std::printf("memory_mib planned %.1f workspace %.1f peak %.1f\n",
              (model.stateBytes + model.batchBytes + model.ioBytes +
               model.workspaceBytes + model.unplannedBytes) /
                  1048576.0,
              model.workspaceBytes / 1048576.0, peakBytes / 1048576.0);
  if (steps > 3)
    std::printf("samples_per_s %.1f\n", samples * (steps - 3) / seconds);
  return 0;
}
