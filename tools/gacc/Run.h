//===- Run.h - the `gacc run` training loop -----------------------*- C++ -*-===//
#ifndef GACC_TOOLS_GACC_RUN_H
#define GACC_TOOLS_GACC_RUN_H

#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/Trainer.h"

#include <optional>
#include <string>

namespace gacc {

struct RunOptions {
  // How long: until step `steps` (counted from the start of training, so a
  // resumed run does the rest), or `epochs` passes over the data.
  uint64_t steps = 100;
  std::optional<uint64_t> epochs;
  /// Initialization and data order; a resumed run goes on with its
  /// checkpoint's (an explicitly different one is an error).
  uint64_t seed = 0;
  bool seedGiven = false;
  std::optional<double> lr;
  /// Whether a decaying schedule ends at the run's last step (its total
  /// was not given when it was compiled).
  bool scheduleEndsWithRun = false;

  // Data: a .safetensors file or .npy directory, or a token file; none
  // gives synthetic data. Evaluation every `evalEvery` steps and at the
  // end.
  std::string data, tokens, evalData, evalTokens;
  rt::TokenFileOptions tokenOptions;
  uint64_t evalEvery = 0;
  unsigned prefetch = 4;

  // Checkpoints: `checkpointDir`/step-<N>.safetensors every `saveEvery`
  // steps (and when a signal stops the run), the newest `keepLast` kept
  // (0: all); `resume` is a checkpoint, a sharded directory or "latest"
  // (the newest in `checkpointDir`).
  std::string init, save, saveSharded, resume, checkpointDir = "checkpoints";
  uint64_t saveEvery = 0, keepLast = 0;

  // Output: progress on a terminal, else a line every `logEvery` steps.
  std::string metrics, dumpGrads;
  uint64_t logEvery = 10;
};

/// Trains with `trainer` as the options say; prints progress and a summary
/// to stdout and errors to stderr. Returns the process exit code.
int runTraining(rt::Trainer &trainer, const RunOptions &options);

/// The ranks of the MPI job this process is in (Open MPI's or MPICH's
/// variables), 1 outside one.
int mpiWorldSize();

/// One step from fresh parameters on synthetic data, for measurements.
rt::Status measureOneStep(rt::Trainer &trainer, rt::StepResult &result);

} // namespace gacc

#endif // GACC_TOOLS_GACC_RUN_H
