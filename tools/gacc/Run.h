//===- Run.h - the `gacc run` training loop -----------------------*- C++ -*-===//
#ifndef GACC_TOOLS_GACC_RUN_H
#define GACC_TOOLS_GACC_RUN_H

#include "gacc/runtime/Trainer.h"

#include <optional>
#include <string>

namespace gacc {

struct RunOptions {
  uint64_t steps = 100;
  uint64_t seed = 0;
  std::optional<double> lr;
  std::string data, evalData, init, save, saveSharded, resume, metrics,
      dumpGrads;
};

/// Trains with `trainer` as the options say; prints progress and a summary
/// to stdout and errors to stderr. Returns the process exit code.
int runTraining(rt::Trainer &trainer, const RunOptions &options);

/// One step from fresh parameters on synthetic data, for measurements.
rt::Status measureOneStep(rt::Trainer &trainer, rt::StepResult &result);

} // namespace gacc

#endif // GACC_TOOLS_GACC_RUN_H
