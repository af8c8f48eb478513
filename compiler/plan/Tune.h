//===- Tune.h - the fastest configuration that fits a budget ----*- C++ -*-===//
//
// `gacc tune`'s search: every combination of the allowed precisions,
// rematerialization policies, optimizers and (on several ranks) ZeRO stages,
// each with the largest micro-batch whose planned peak fits the memory
// budget (the static plan: nothing runs), ranked by a cost model: the work
// each plan counts (StepWork), priced with this machine's kernel costs. The
// tool (tools/gacc/Tune.cpp) measures the best few and picks the fastest.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_PLAN_TUNE_H
#define GACC_COMPILER_PLAN_TUNE_H

#include "compiler/Pipelines.h"
#include "compiler/plan/MemoryPlan.h"
#include "compiler/plan/StepWork.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::gacc {

/// What the search may set; an empty list keeps what the model says.
struct TuneSpace {
  SmallVector<std::string> precisions = {"f32", "bf16"};
  SmallVector<std::string> remats = {"none", "blocks", "sqrt", "matmuls",
                                     "budget"};
  SmallVector<std::string> optimizers;
  /// ZeRO stages to try when the options ask for several ranks.
  SmallVector<int64_t> zeroStages = {0, 1, 2, 3};
};

/// One configuration: the options it sets and what the plan says of it.
struct TuneCandidate {
  std::string precision, remat, optimizer;
  std::optional<int64_t> zeroStage;
  /// The budget policy's peak budget (the search's budget), else 0.
  int64_t rematBudget = 0;
  /// The plan at the largest micro-batch that fits (or, when none does, at
  /// the smallest: what it would need).
  MemoryPlan plan;
  bool fits = false;
  /// The cost model's seconds per step (predictStepSeconds of the plan's
  /// work): its matmuls at their shapes' measured times, its other loop
  /// nests by their bytes, recomputation and every micro-batch included.
  double predictedSeconds = 0;

  /// The training options that reproduce it, as a pipeline string
  /// ("precision=bf16 remat=sqrt micro-batch=8").
  std::string optionsText() const;
};

/// Plans every configuration of `space` for the step `stepName` of `module`
/// (left unchanged), with the training options `baseOptions` (a pipeline
/// string: batch, ranks, ...) and `budgetBytes`, on the context's threads;
/// candidates in order of time predicted with `costs`, those that fit
/// first. The planner's diagnostics are not reported; a configuration it
/// refuses is left out. `costs` is called from one thread at a time.
std::vector<TuneCandidate>
planTuneCandidates(ModuleOp module, StringRef stepName, StringRef baseOptions,
                   const TuneSpace &space, int64_t budgetBytes,
                   const KernelCosts &costs);

} // namespace mlir::gacc

#endif // GACC_COMPILER_PLAN_TUNE_H
