//===- Tune.h - the fastest configuration that fits a budget ----*- C++ -*-===//
//
// `gacc tune`'s search: every combination of the allowed precisions,
// rematerialization policies, optimizers and (on several ranks) ZeRO stages,
// each with the largest micro-batch whose planned peak fits the memory
// budget (the static plan: nothing runs), and the largest that divides the
// batch where that one does not, ranked by a cost model: the work
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

/// Tune measures the candidates predicted within this fraction of the best
/// prediction.
constexpr double kTuneMargin = 0.10;
/// The search leaves out (prunes) configurations whose time at the whole
/// batch, a lower bound of their time, is predicted this much slower than
/// the best that fits. The bound is the cost model's, whose rates per flop
/// at different micro-batches were off by up to 13% on the machines
/// measured: the margin is kTuneMargin and that error.
constexpr double kTunePruneMargin = 0.25;

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
  /// The schedule the budget policy chose: a fixed segmentation ("sqrt",
  /// "matmuls", "blocks") or the exact DP's ("budget", for
  /// rematActivationBudget bytes of activations), which the options name so
  /// that compiling them does not search again.
  std::string rematSchedule;
  int64_t rematActivationBudget = 0;
  /// The plan at the largest micro-batch that fits, or at the largest that
  /// divides the batch. When none fits: at the smallest (what it would
  /// need); where its state and batch alone exceed the budget, at the whole
  /// batch (at one example when no configuration fits and its state is
  /// below the least peak found).
  MemoryPlan plan;
  bool fits = false;
  /// Left out unplanned: even at the whole batch it is predicted more than
  /// kTunePruneMargin slower than the best that fits. Its plan is empty and
  /// predictedSeconds is that bound.
  bool pruned = false;
  /// The cost model's seconds per step (predictStepSeconds of the plan's
  /// work): its matmuls at their shapes' measured times, its other loop
  /// nests by their bytes, recomputation and every micro-batch included.
  /// 0 where it does not fit (never a choice, not priced).
  double predictedSeconds = 0;

  /// The training options that reproduce it, as a pipeline string
  /// ("precision=bf16 remat=sqrt micro-batch=8"); the budget policy's as
  /// the schedule it chose.
  std::string optionsText() const;
};

/// Plans every configuration of `space` for the step `stepName` of `module`
/// (left unchanged), with the training options `baseOptions` (a pipeline
/// string: batch, ranks, ...) and `budgetBytes`, on the context's threads;
/// candidates in order of time predicted with `costs`: those that fit, the
/// pruned ones, then those that do not fit. Branch and bound: each
/// configuration's time at the whole batch bounds it from below, and one
/// bounded more than kTunePruneMargin slower than the best fitted before
/// it is not fitted (pruned). A fit whose micro-batch does not divide the
/// batch comes with a second candidate, the same configuration at the
/// largest micro-batch that does. A configuration whose state arena and
/// batch alone exceed the budget is not fitted. The planner's diagnostics are
/// not reported; a configuration it refuses is left out. `costs` is called from
/// one thread at a time, and its matmulSeconds, for a shape it does not know
/// (knowsMatmul), only while no other thread plans.
std::vector<TuneCandidate>
planTuneCandidates(ModuleOp module, StringRef stepName, StringRef baseOptions,
                   const TuneSpace &space, int64_t budgetBytes,
                   const KernelCosts &costs);

} // namespace mlir::gacc

#endif // GACC_COMPILER_PLAN_TUNE_H
