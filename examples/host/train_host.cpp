// Trains a compiled classifier (features in, class labels out, e.g.
// examples/mlp.mlir compiled with `gacc compile`) with its own data loop
// through the runtime's C++ API: a synthetic task whose label is a random
// class whose feature (of the first `classes`) is raised by 1, which a
// linear layer learns. Prints the loss, saves a checkpoint, and fails
// unless the mean loss of the last 10 steps is below the first 10's.
//
//   train_host MODEL.gacc [STEPS] [CHECKPOINT]

#include "gacc/runtime/Trainer.h"

#include <cstdio>
#include <cstdlib>
#include <random>

using namespace gacc::rt;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gacc [STEPS] [CHECKPOINT]\n", argv[0]);
    return 2;
  }
  int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  std::unique_ptr<Trainer> trainer;
  if (Status s = openTrainer(argv[1], /*seed=*/0, trainer); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  const ModelInfo &model = trainer->model();
  const Input *features = nullptr, *labels = nullptr;
  for (const Input &input : model.inputs) {
    if (input.kind == InputKind::Features && input.slot.dtype == DType::F32)
      features = &input;
    if (input.kind == InputKind::Labels && input.classes > 0)
      labels = &input;
  }
  if (!features || !labels || features->slot.shape.size() != 2) {
    std::fprintf(stderr, "error: expected f32 features [B, D] and labels\n");
    return 1;
  }
  int64_t batch = features->slot.shape[0], width = features->slot.shape[1];
  int64_t classes = std::min(labels->classes, width);

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> pick(0, classes - 1);
  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    Tensor x(DType::F32, features->slot.shape);
    Tensor y(labels->slot.dtype, labels->slot.shape);
    for (int64_t i = 0; i < batch; ++i) {
      float *row = x.dataAs<float>() + i * width;
      for (int64_t j = 0; j < width; ++j)
        row[j] = uniform(rng);
      int64_t label = pick(rng);
      row[label] += 1.0f;
      storeElement(y.dtype(), y.data(), i, static_cast<double>(label));
    }
    StepResult result;
    if (Status s = trainer->setInput(features->slot.name, x); !s ||
        !(s = trainer->setInput(labels->slot.name, y)) ||
        !(s = trainer->step(result))) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
    if (step < 10)
      first += result.loss / 10;
    if (step >= steps - 10)
      last += result.loss / 10;
    if (step % 50 == 0 || step + 1 == steps)
      std::printf("step %d loss %.4f\n", step + 1, result.loss);
  }
  if (argc > 3)
    if (Status s = trainer->saveCheckpoint(argv[3]); !s) {
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
  std::printf("mean loss of the first and last 10 steps: %.4f -> %.4f\n",
              first, last);
  return last < first ? 0 : 1;
}
