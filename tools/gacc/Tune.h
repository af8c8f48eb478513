//===- Tune.h - `gacc tune` -------------------------------------*- C++ -*-===//
#ifndef GACC_TOOLS_GACC_TUNE_H
#define GACC_TOOLS_GACC_TUNE_H

#include "compiler/aot/CompileCache.h"
#include "compiler/plan/Tune.h"

namespace gacc {

struct TuneOptions {
  int64_t budgetBytes = 0;
  mlir::gacc::TuneSpace space;
  /// At most this many configurations are measured: the best by the cost
  /// model and those it predicts within 10% of it.
  unsigned measureTop = 3;
  /// Steps each measurement times at most (more while under 0.25 s),
  /// stopping once two in a row agree (in each of two passes when several
  /// configurations are measured).
  unsigned measureSteps = 3;
  /// Where the measured configurations' compiled steps and this machine's
  /// kernel costs are kept (none: compiled and measured every time).
  std::optional<mlir::gacc::CompileCache> cache;
  bool json = false;
  std::string output; ///< the choice, for `gacc run --config`
};

/// Plans the configurations of `options.space` for the step `stepName` of
/// `module` under `baseOptions` (the training flags given, as a pipeline
/// string), measures the best few with short runs on synthetic data, prints
/// a table (or JSON) and writes the fastest to `options.output`. Returns the
/// process exit code; a budget nothing fits is an error naming the least
/// peak and its configuration. `chosen`, if given, receives the choice's
/// training options (`gacc run --auto` trains with them).
int runTune(mlir::ModuleOp module, llvm::StringRef stepName,
            llvm::StringRef baseOptions, const TuneOptions &options,
            std::string *chosen = nullptr);

} // namespace gacc

#endif // GACC_TOOLS_GACC_TUNE_H
