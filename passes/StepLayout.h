//===- StepLayout.h - where a compiled step keeps its tensors ---*- C++ -*-===//
//
// A compiled training step works on three byte arenas that the runtime
// owns: `state` (parameters, gradients, optimizer state: what lives across
// steps and goes into checkpoints), `batch` (the inputs of one step) and
// `io` (per-step scalars in, loss and outputs out). This analysis places
// every tensor; gacc-build-step emits views at these offsets and the
// runtime reads and writes the same offsets.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_STEPLAYOUT_H
#define GACC_PASSES_STEPLAYOUT_H

#include "dialects/gacc/GaccOps.h"
#include "passes/optimizers/Optimizer.h"
#include <string>

namespace mlir::gacc {

/// Offsets are multiples of this, so every tensor is cache-line aligned.
inline constexpr int64_t kSlotAlignment = 64;

/// The io slot of the optimizer's per-step scalar "<name>" (see
/// optimizers/Optimizer.h), which the runtime computes each step.
inline constexpr llvm::StringLiteral kHyperPrefix = "hyper.";
inline std::string hyperSlotName(StringRef scalar) {
  return (kHyperPrefix + scalar).str();
}

/// Dynamic loss scaling keeps the scale and the count of good steps since
/// it last changed in the state arena (checkpoints keep them), and reports
/// in io whether the step found an infinity or NaN (1) and was skipped.
inline constexpr llvm::StringLiteral kLossScaleSlot = "loss_scale";
inline constexpr llvm::StringLiteral kGrowthTrackerSlot =
    "loss_scale.growth_tracker";
inline constexpr llvm::StringLiteral kFoundInfSlot = "found_inf";

/// The f32 master weight of a parameter kept in 16 bits.
inline constexpr llvm::StringLiteral kMasterPrefix = "master.";

/// This process's rank (i64) on several ranks, set by the runtime.
inline constexpr llvm::StringLiteral kRankSlot = "rank";

struct Slot {
  std::string name;
  RankedTensorType type;
  int64_t offset = 0;
  /// For this rank's shard of a tensor (see Zero.h): the whole tensor's
  /// type; null otherwise.
  RankedTensorType unsharded;
  int64_t bytes() const;
};

struct ArenaLayout {
  SmallVector<Slot> slots;
  int64_t bytes = 0;
  const Slot &add(StringRef name, RankedTensorType type,
                  RankedTensorType unsharded = {});
  /// Adds `name` right after the previous slot, aligned to its element
  /// only: small scalars that share a cache line.
  const Slot &addPacked(StringRef name, RankedTensorType type);
  const Slot *find(StringRef name) const;

private:
  const Slot &place(StringRef name, RankedTensorType type,
                    RankedTensorType unsharded, int64_t alignment);
};

struct StepLayout {
  /// Parameters by name; gradients "grad.<name>" and optimizer state
  /// "<slot>.<name>" of the trainable ones (a frozen parameter has neither,
  /// and is never sharded), for each of the optimizer's state slots of that
  /// parameter, which keep torch.optim's names ("momentum_buffer",
  /// "exp_avg"); with loss scaling,
  /// kLossScaleSlot and kGrowthTrackerSlot. In mixed precision, a parameter
  /// the model reads only in 16 bits (lowPrecisionParams) keeps its weight
  /// and gradient in 16 bits and its f32 master weight as optimizer state,
  /// kMasterPrefix + name, as DeepSpeed does (16 bytes per parameter with
  /// AdamW); the others are their own master. Under ZeRO, the state the
  /// stage shards holds this rank's shard.
  ArenaLayout state;
  /// Inputs by name (this rank's examples).
  ArenaLayout batch;
  /// The optimizer's per-step scalars (hyperSlotName, packed into the first
  /// cache line), "loss", "grad_norm", "step" (the step counter, i64, which
  /// seeds dropout), then the model's further results as "output.<i>"; with
  /// loss scaling, kFoundInfSlot after "grad_norm"; on several ranks,
  /// kRankSlot (i64) after "step".
  ArenaLayout io;
  /// The step's optimizer.
  const Optimizer *optimizer = nullptr;
  /// Its state slots ("exp_avg.<parameter>", ...: those of each trainable
  /// parameter in turn) and its per-step scalar names, in order.
  SmallVector<std::string> optimizerState;
  SmallVector<std::string> stepScalars;
  /// The element type every parameter shares.
  Type element;
};

/// Lays out the arenas of `step`; fails with a diagnostic on `step` when it
/// cannot be compiled (parameters of different element types).
FailureOr<StepLayout> computeStepLayout(TrainStepOp step);

} // namespace mlir::gacc

#endif // GACC_PASSES_STEPLAYOUT_H
