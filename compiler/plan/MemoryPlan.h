//===- MemoryPlan.h - what a training step needs, before it runs -*- C++ -*-===//
//
// The memory of one step on one rank: the arenas the runtime allocates
// (state: parameters, gradients, optimizer state; the batch; per-step
// scalars and outputs; the workspace that gacc-plan-buffers lays the step's
// temporaries out in) and what the plan leaves to the heap. Computed by
// compiling a copy of the module up to the memory plan, without running.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_PLAN_MEMORYPLAN_H
#define GACC_COMPILER_PLAN_MEMORYPLAN_H

#include "compiler/plan/StateMemory.h"
#include "compiler/plan/StepWork.h"
#include "passes/Passes.h"
#include <optional>

namespace mlir::gacc {

struct MemoryPlan {
  int64_t batchSize = 0, microBatchSize = 0, accumulationSteps = 0;
  StateMemory state;
  /// Arena sizes, as the runtime allocates them (with alignment padding).
  int64_t stateArenaBytes = 0, batchBytes = 0, ioBytes = 0;
  /// Forward values of one micro-batch that its backward reads (what
  /// rematerialization trades for recompute). They live in the workspace.
  int64_t activationBytes = 0;
  /// Mixed precision: the compute type, and the bytes of the low-precision
  /// copies of the f32 master weights the step makes (in the workspace).
  Precision precision = Precision::f32;
  int64_t weightCopyBytes = 0;
  /// The rematerialization policy and what it did to one micro-batch.
  RematPolicy rematPolicy = RematPolicy::none;
  RematReport remat;
  /// The workspace arena: every temporary of the step, placed with reuse.
  int64_t workspaceBytes = 0;
  /// The plan's estimate of the temporaries it could not place.
  int64_t unplannedBytes = 0;
  /// ZeRO: the ranks, and the elements each rank's collectives move per
  /// step, counted as the communicator counts them (Communicator.h).
  int64_t ranks = 1, zeroStage = 0;
  int64_t communicatedElements = 0;
  /// What optimizerStateByChoice gives, for `gacc plan` to print (empty
  /// unless it sets it).
  SmallVector<std::pair<std::string, int64_t>> optimizerStateByChoice;
  /// What the step computes and moves (for `gacc tune`'s cost model).
  StepWork work;

  int64_t peakBytes() const {
    return stateArenaBytes + batchBytes + ioBytes + workspaceBytes +
           unplannedBytes;
  }
};

/// What the runtime measured over one step, for `gacc plan --measure`.
struct MeasuredMemory {
  int64_t peakBytes = 0, heapBytes = 0;
};

/// The optimizer state each registered optimizer would keep in `step`
/// instead of its own (`--optimizer NAME`, with the step's learning rate
/// and weight decay), by name; those that cannot run there are left out.
/// The step is left as it was.
SmallVector<std::pair<std::string, int64_t>>
optimizerStateByChoice(TrainStepOp step);

/// Plans `step` with its current batch and micro-batch sizes, compiled for
/// `target` (cpu, cuda or cuda-emulated: which attention is fused).
FailureOr<MemoryPlan> planMemory(TrainStepOp step, StringRef target);

/// Sets on `step` the micro-batch size with the fewest accumulation steps
/// whose plan fits in `budgetBytes` (the largest that fits, evened out
/// over those steps) and returns its plan. Fails with an error on `step` that
/// names the memory the smallest micro-batch needs when none fits (and
/// with `smallestPlan`, sets it to that plan). `wholeBatch` is the plan at the
/// rank's whole batch when the caller has it already.
FailureOr<MemoryPlan> fitMicroBatch(TrainStepOp step, int64_t budgetBytes,
                                    StringRef target,
                                    const MemoryPlan *wholeBatch = nullptr,
                                    MemoryPlan *smallestPlan = nullptr);

/// For the `budget` rematerialization policy: plans the schedules of the
/// exact DP over a range of activation budgets, and the fixed segmentations
/// (sqrt, matmuls, blocks), and sets on `step` the cheapest whose planned
/// peak fits in `budgetBytes` (the activation budget,
/// kRematActivationBudgetAttrName, or the fixed policy); returns its plan.
/// Fails with an error on `step` that names the least peak any schedule reaches
/// when the budget is below it. With `anyFit`, only whether one fits: the first
/// schedule that does (keeping every activation, else the least-memory one) is
/// set and its plan returned, without looking for a cheaper one.
FailureOr<MemoryPlan> fitRematBudget(TrainStepOp step, int64_t budgetBytes,
                                     StringRef target, bool anyFit = false);

/// "8GiB", "512 MiB", "1.5GB", "1e9", "4096": bytes; nullopt if malformed.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// The report of `gacc plan`: configuration, parameters and the plan.
void printMemoryPlan(llvm::raw_ostream &os, TrainStepOp step,
                     const MemoryPlan &plan,
                     const MeasuredMemory *measured = nullptr);
/// The same as one JSON object.
void printMemoryPlanJson(llvm::raw_ostream &os, TrainStepOp step,
                         const MemoryPlan &plan,
                         const MeasuredMemory *measured = nullptr);

} // namespace mlir::gacc

#endif // GACC_COMPILER_PLAN_MEMORYPLAN_H
