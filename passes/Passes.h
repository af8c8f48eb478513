//===- Passes.h - gacc passes -------------------------------------*- C++ -*-===//
#ifndef GACC_PASSES_PASSES_H
#define GACC_PASSES_PASSES_H

#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The name of a function derived from `of` for `role` ("grad", "micro4"):
/// `<of>_<role>`, which the pass that inserts it renames if it is taken.
/// Passes find derived functions through the step's references, never by
/// this name.
inline std::string derivedName(func::FuncOp of, const Twine &role) {
  return (of.getSymName() + "_" + role).str();
}

/// Where the backward pass of buildGradientFunction starts.
enum class GradientSeed {
  /// d loss / d loss = 1.
  One,
  /// gacc.loss_scale (dynamic loss scaling): the gradients come out scaled.
  LossScale,
  /// A trailing scalar argument of the gradient function, e.g. the loss
  /// scale over the global normalizer for a micro-batch's summed loss.
  Argument,
};

/// Builds the gradient function of `fn` beside it (see derivedName): its
/// results, then the gradient of result 0 with respect to every gacc.param
/// (see gacc-autodiff), seeded by `seed`. Arguments of `fn` are treated as
/// constants. Counts applied rules into `numRules`.
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp fn,
                                              GradientSeed seed,
                                              int64_t *numRules = nullptr);

/// What gacc-lora adapts, and how (its options).
struct LoraConfig {
  int64_t rank = 8;
  double alpha = 8.0;
  double dropout = 0.0;
  /// A regular expression over whole parameter names.
  std::string targets;
};

/// gacc-lora on `module`: freezes every parameter and adds adapters to the
/// matrices `config` targets; a diagnostic (and the module unchanged) when
/// a target cannot be adapted. A module with adapters is left as it is.
LogicalResult applyLora(ModuleOp module, const LoraConfig &config);

/// `config` from gacc's `--lora` text, "rank=8,alpha=16,dropout=0.05,
/// targets=REGEX" (keys in any order; commas inside the regular expression
/// are kept); a diagnostic from `emitError` for a bad key or value.
FailureOr<LoraConfig> parseLoraConfig(StringRef text,
                                      function_ref<InFlightDiagnostic()> emitError);

/// Warns, at its first batch norm in training, that `step` takes batch
/// statistics over each micro-batch (or each rank's examples), so that it
/// is not equal to one step over the whole batch, as every model without
/// batch norm is; nothing for a step without micro-batches. gacc-split-batch
/// calls it; so does `gacc plan`, whose memory planner compiles copies of
/// the step without warnings.
void warnIfBatchStatisticsDiffer(TrainStepOp step);

/// Places the casts of gacc-mixed-precision in `model` for `precision` (f32:
/// nothing); counts them into `numCasts`. Marks the model with
/// kAutocastDoneAttrName; a marked model is left alone.
LogicalResult autocast(func::FuncOp model, Precision precision,
                       int64_t *numCasts = nullptr);
inline constexpr llvm::StringLiteral kAutocastDoneAttrName =
    GaccDialect::AutocastPrecisionAttrHelper::getNameStr();

/// The parameters a mixed-precision step reads only in its low precision
/// (every read a cast to f16 or bf16): their state keeps 16-bit weights and
/// gradients and the f32 master weights as optimizer state (see
/// StepLayout.h). Before gacc-mixed-precision, what it will do.
FailureOr<llvm::StringSet<>> lowPrecisionParams(TrainStepOp step);

/// The attributes passes leave for each other are declared in the dialect
/// (GaccBase.td's discardableAttrs, checked by its verifier); these are
/// their names.
/// On a gradient function: the parameters its trailing results are the
/// gradients of, in order.
inline constexpr llvm::StringLiteral kGradientsAttrName =
    GaccDialect::GradientsAttrHelper::getNameStr();

/// What gacc-remat did to one gradient function.
struct RematReport {
  /// Bytes of forward values the backward reads, before and after.
  int64_t activationBytes = 0, savedBytes = 0;
  /// Forward ops cloned into the backward, and their estimated time
  /// against the whole forward's (nanoseconds, gacc-remat's cost model).
  int64_t recomputedOps = 0;
  double recomputeCost = 0, forwardCost = 0;
};

/// What gacc-remat does to the gradient functions of a step.
struct RematConfig {
  RematPolicy policy = RematPolicy::none;
  /// For `budget`: bytes the activations the backward keeps may take.
  int64_t activationBudget = 0;
};

/// The step's policy; for `budget`, its `gacc.remat_activation_budget`
/// attribute (what gacc-configure-step derives from the peak budget with
/// the memory planner), else the budget itself.
RematConfig getRematConfig(TrainStepOp step);

/// Rewrites `grad` (from buildGradientFunction) so that its backward keeps
/// only the forward values the policy saves and recomputes the others from
/// them (see gacc-remat). Ops may force a choice with a `gacc.remat`
/// attribute ("save" or "recompute").
FailureOr<RematReport> rematerialize(func::FuncOp grad,
                                     const RematConfig &options);

/// The fewest bytes of kept activations any `budget` schedule of `grad`
/// achieves (gacc-remat's cost model), without rewriting it.
FailureOr<int64_t> minimumRematActivationBytes(func::FuncOp grad);

/// For each of `activationBudgets`, the kept activation bytes (in the cost
/// model's units) of the schedule the `budget` policy chooses within it,
/// or nullopt where none fits; without rewriting `grad`, and in one pass of
/// the schedule search for all. Given as the activation budget, those bytes
/// choose a schedule of the same recompute cost again; budgets with equal
/// bytes choose schedules of equal bytes and cost.
FailureOr<SmallVector<std::optional<int64_t>>>
rematBudgetSchedules(func::FuncOp grad, ArrayRef<int64_t> activationBudgets);

/// The parameter attribute of a parameter group's own weight decay.
inline constexpr llvm::StringLiteral kWeightDecayAttrName =
    GaccDialect::WeightDecayAttrHelper::getNameStr();

/// The step attribute that carries the activation budget.
inline constexpr llvm::StringLiteral kRematActivationBudgetAttrName =
    GaccDialect::RematActivationBudgetAttrHelper::getNameStr();

/// The op attribute that forces gacc-remat to save or recompute its result.
inline constexpr llvm::StringLiteral kRematAttrName =
    GaccDialect::RematAttrHelper::getNameStr();

/// The argument attribute that names the arena an entry point's argument is
/// (`gacc_step(state, batch, io, workspace)`; kArenaRoles in order).
inline constexpr llvm::StringLiteral kArenaAttrName =
    GaccDialect::ArenaAttrHelper::getNameStr();

/// The function attribute gacc-plan-buffers sets: the bytes of the
/// workspace arena the function's planned temporaries need.
inline constexpr llvm::StringLiteral kWorkspaceBytesAttrName =
    GaccDialect::WorkspaceBytesAttrHelper::getNameStr();
/// ... and the bytes of the temporaries it left to the heap.
inline constexpr llvm::StringLiteral kUnplannedBytesAttrName =
    GaccDialect::UnplannedBytesAttrHelper::getNameStr();

} // namespace mlir::gacc

#endif // GACC_PASSES_PASSES_H
