/* The MLP example (examples/mlp.mlir: image [64, 784] f32, label [64] i32)
 * trained through the runtime's C API with a synthetic task: a random label
 * whose pixel (of the first 10) is raised by 1. Reads a parameter back,
 * checks that a wrong size is refused, saves a checkpoint, overwrites a
 * parameter and restores it from the checkpoint, and fails unless the mean
 * loss of the last 10 steps is below the first 10's.
 *
 *   train_host_c MLP.gacc [STEPS] [CHECKPOINT] */

#include "gacc/runtime/c_api.h"

#include <stdio.h>
#include <stdlib.h>

enum { B = 64, D = 784, C = 10 };

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MLP.gacc [STEPS] [CHECKPOINT]\n", argv[0]);
    return 2;
  }
  int steps = argc > 2 ? atoi(argv[2]) : 200;
  gacc_trainer *trainer;
  if (gacc_trainer_open(argv[1], 0, &trainer) != 0) {
    fprintf(stderr, "error: %s\n", gacc_last_error());
    return 1;
  }
  static float image[B * D];
  static int32_t label[B];
  double first = 0, last = 0;
  srand(7);
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < B; ++i) {
      for (int j = 0; j < D; ++j)
        image[i * D + j] = (float)rand() / (float)RAND_MAX;
      label[i] = rand() % C;
      image[i * D + label[i]] += 1.0f;
    }
    double loss;
    if (gacc_trainer_set_input(trainer, "image", image, sizeof(image)) != 0 ||
        gacc_trainer_set_input(trainer, "label", label, sizeof(label)) != 0 ||
        gacc_trainer_step(trainer, &loss, NULL) != 0) {
      fprintf(stderr, "error: %s\n", gacc_last_error());
      return 1;
    }
    if (step < 10)
      first += loss / 10;
    if (step >= steps - 10)
      last += loss / 10;
  }
  size_t bytes;
  if (gacc_trainer_parameter_bytes(trainer, "fc2.bias", &bytes) != 0 ||
      bytes != C * sizeof(float)) {
    fprintf(stderr, "error: fc2.bias: %s\n", gacc_last_error());
    return 1;
  }
  float bias[C];
  if (gacc_trainer_get_parameter(trainer, "fc2.bias", bias, sizeof(bias)) != 0 ||
      gacc_trainer_set_input(trainer, "image", image, 3) == 0) {
    fprintf(stderr, "error: parameter read or size check\n");
    return 1;
  }
  printf("rejected: %s\n", gacc_last_error());
  /* A checkpoint brings back what set_parameter overwrote. */
  if (argc > 3) {
    float zeros[C] = {0}, back[C];
    if (gacc_trainer_save_checkpoint(trainer, argv[3]) != 0 ||
        gacc_trainer_set_parameter(trainer, "fc2.bias", zeros,
                                   sizeof(zeros)) != 0 ||
        gacc_trainer_get_parameter(trainer, "fc2.bias", back, sizeof(back)) !=
            0 ||
        back[0] != 0.0f ||
        gacc_trainer_load_checkpoint(trainer, argv[3]) != 0 ||
        gacc_trainer_get_parameter(trainer, "fc2.bias", back, sizeof(back)) !=
            0 ||
        back[0] != bias[0]) {
      fprintf(stderr, "error: checkpoint round trip: %s\n",
              gacc_last_error());
      return 1;
    }
  }
  printf("steps %llu, loss %.4f -> %.4f, fc2.bias[0] %.4f\n",
         (unsigned long long)gacc_trainer_step_count(trainer), first, last,
         bias[0]);
  gacc_trainer_close(trainer);
  return last < first ? 0 : 1;
}
