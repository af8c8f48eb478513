//===- Optimizer.h - the optimizers a step updates with ---------*- C++ -*-===//
//
// One class per optimizer attribute of gacc.train_step (SGD.cpp, Adam.cpp,
// Adafactor.cpp) says what a compiled step needs of it: its hyperparameters by
// torch.optim's names (what the artifact records for the runtime), its
// per-parameter state (what the step layout allocates and checkpoints save,
// by torch.optim's state names), the per-step scalars its update reads and
// the update itself. Per-step scalars are what torch.optim computes on the
// host from the step counter (the scheduled learning rate, bias
// corrections): the runtime computes them by name each step
// (runtime/src/core/Optimizer.cpp) and the step reads each from its own io
// slot.
//
// Adding an optimizer: its attribute (dialects/gacc/GaccAttrs.td, in
// Gacc_OptimizerAttr and in TrainStepOp::getBaseLearningRate), a class in a new
// file here with one GACC_OPTIMIZER line in Optimizers.def, and the runtime's
// formula for its per-step scalars other than "lr".
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_OPTIMIZERS_OPTIMIZER_H
#define GACC_PASSES_OPTIMIZERS_OPTIMIZER_H

#include "dialects/gacc/GaccBuilders.h"

namespace mlir::gacc {

/// A hyperparameter as the runtime reads it (booleans as 0 or 1).
struct Hyperparameter {
  StringRef name;
  double value;
};

/// One tensor of optimizer state a parameter keeps: slot "<name>.<parameter>"
/// of `type` (in the f32 weights' element type unless the optimizer stores
/// it otherwise), zero before the first step.
struct StateSlot {
  StringRef name;
  RankedTensorType type;
  /// Under ZeRO, whether every rank keeps the same whole tensor (Adafactor's
  /// factored moments, small and updated from sums over the ranks) rather
  /// than a state of its own shard.
  bool replicated = false;
};

/// The learning rate: a hyperparameter of every optimizer and the per-step
/// scalar that the runtime provides for all (the scheduled rate).
inline constexpr llvm::StringLiteral kLearningRate = "lr";

/// Where the flat shard that a rank updates under ZeRO stages 1-3 lies in
/// its parameter (passes/Zero.h): elements [rank·s, (rank+1)·s) of `whole`,
/// flattened and zero-padded.
struct UpdatedShard {
  RankedTensorType whole;
  /// An index.
  Value rank;
  int64_t ranks;
};

/// What the update of one parameter reads and writes; gacc-build-step
/// implements it over the arenas.
class UpdateContext {
public:
  UpdateContext(TensorMath &math, Value finite,
                std::optional<double> ownWeightDecay = std::nullopt,
                std::optional<UpdatedShard> shard = std::nullopt)
      : math(math), shard(shard), finite(finite),
        ownWeightDecay(ownWeightDecay) {}
  virtual ~UpdateContext() = default;

  /// This parameter's weight decay: its own (`gacc.weight_decay`, a
  /// parameter group's) or the optimizer's.
  double weightDecay(const llvm::APFloat &optimizers) const {
    return ownWeightDecay.value_or(optimizers.convertToDouble());
  }
  /// Whether it differs from the optimizer's, which per-step scalars such
  /// as AdamW's decay factor assume.
  bool hasOwnWeightDecay(const llvm::APFloat &optimizers) const {
    return ownWeightDecay && *ownWeightDecay != optimizers.convertToDouble();
  }

  /// Builds at the update's place, in the parameters' element type.
  TensorMath &math;
  /// Set when the update sees this rank's flat shard of the weights, not
  /// the whole parameter.
  std::optional<UpdatedShard> shard;
  /// `partial` (the same shape on every rank) summed over the ranks: for an
  /// update that is not elementwise, the sums its shard contributes to.
  virtual Value sumOverRanks(Value partial) = 0;
  /// This parameter's state slot `name` (one of the optimizer's
  /// getStateSlots) as the step found it.
  virtual Value readState(StringRef name) = 0;
  /// Writes this parameter's state slot `name`.
  virtual void writeState(StringRef name, Value value) = 0;
  /// The per-step scalar `name` (one of the optimizer's getStepScalars), a
  /// rank-0 tensor.
  virtual Value scalar(StringRef name) = 0;
  /// `updated`, or `old` on a step that dynamic loss scaling skips because a
  /// gradient was not finite.
  Value unlessSkipped(Value updated, Value old) {
    return finite ? math.select(finite, updated, old) : updated;
  }

private:
  Value finite;
  std::optional<double> ownWeightDecay;
};

class Optimizer {
public:
  virtual ~Optimizer() = default;
  /// How the artifact and the runtime name it: the attribute's mnemonic.
  virtual StringRef getName() const = 0;
  virtual bool handles(Attribute optimizer) const = 0;
  /// Every hyperparameter of `optimizer`, by torch.optim's names
  /// (kLearningRate first).
  virtual SmallVector<Hyperparameter>
  getHyperparameters(Attribute optimizer) const = 0;
  /// The state kept for a parameter whose f32 weights have type `whole`,
  /// updated as `updated` (`whole`, or under ZeRO this rank's flat shard of
  /// it), by torch.optim's names ("exp_avg"). A slot shaped as `updated`
  /// is, under ZeRO, this rank's shard of the whole parameter's state.
  virtual SmallVector<StateSlot>
  getStateSlots(Attribute optimizer, RankedTensorType whole,
                RankedTensorType updated) const = 0;
  /// An attribute of this optimizer with learning rate `lr` and weight decay
  /// `weightDecay`: `like`'s other hyperparameters when it is one of this
  /// optimizer's attributes, else this optimizer's defaults (those of
  /// transformers' `--optim` choices). Null after a diagnostic from
  /// `emitError` when they are not valid for it.
  virtual Attribute
  rebuild(MLIRContext *context, Attribute like, double lr, double weightDecay,
          function_ref<InFlightDiagnostic()> emitError) const = 0;
  /// The per-step scalars the update reads, of those the runtime provides:
  /// kLearningRate (the scheduled rate, for every optimizer) and those of
  /// the optimizer's formula.
  virtual SmallVector<StringRef> getStepScalars(Attribute optimizer) const = 0;
  /// The update of one parameter `param` (f32 weights: the parameter's own,
  /// its master weights, or this rank's shard of either) by `grad` (unscaled
  /// and clipped): writes the new state and returns the new weights.
  virtual Value buildUpdate(Attribute optimizer, UpdateContext &context,
                            Value param, Value grad) const = 0;
};

/// Implements Optimizer for the attribute class `AttrT`: subclasses define
/// the typed hooks.
template <typename AttrT>
class OptimizerOf : public Optimizer {
public:
  StringRef getName() const final { return AttrT::getMnemonic(); }
  bool handles(Attribute optimizer) const final {
    return isa<AttrT>(optimizer);
  }
  SmallVector<Hyperparameter>
  getHyperparameters(Attribute optimizer) const final {
    return hyperparameters(cast<AttrT>(optimizer));
  }
  SmallVector<StateSlot> getStateSlots(Attribute optimizer,
                                       RankedTensorType whole,
                                       RankedTensorType updated) const final {
    return stateSlots(cast<AttrT>(optimizer), whole, updated);
  }
  Attribute rebuild(MLIRContext *context, Attribute like, double lr,
                    double weightDecay,
                    function_ref<InFlightDiagnostic()> emitError) const final {
    return rebuildImpl(context, like, lr, weightDecay, emitError);
  }
  SmallVector<StringRef> getStepScalars(Attribute optimizer) const final {
    return stepScalars(cast<AttrT>(optimizer));
  }
  Value buildUpdate(Attribute optimizer, UpdateContext &context, Value param,
                    Value grad) const final {
    return update(cast<AttrT>(optimizer), context, param, grad);
  }

protected:
  virtual SmallVector<Hyperparameter> hyperparameters(AttrT optimizer) const = 0;
  virtual SmallVector<StateSlot> stateSlots(AttrT optimizer,
                                            RankedTensorType whole,
                                            RankedTensorType updated) const = 0;
  /// rebuild's, which may also take hyperparameters from another
  /// optimizer's `like` (Adam's betas for AdamW).
  virtual AttrT
  rebuildImpl(MLIRContext *context, Attribute like, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const = 0;
  virtual SmallVector<StringRef> stepScalars(AttrT optimizer) const = 0;
  virtual Value update(AttrT optimizer, UpdateContext &context, Value param,
                       Value grad) const = 0;
};

/// Each registered optimizer (Optimizers.def).
#define GACC_OPTIMIZER(Name) const Optimizer &get##Name##Optimizer();
#include "passes/optimizers/Optimizers.def"

/// The registered optimizer of the attribute `optimizer`, or null.
const Optimizer *lookupOptimizer(Attribute optimizer);

/// The registered optimizer named `name` (its attribute's mnemonic), or
/// null.
const Optimizer *lookupOptimizer(StringRef name);
/// Every registered optimizer, in Optimizers.def's order.
ArrayRef<const Optimizer *> registeredOptimizers();
/// The names of the registered optimizers, for diagnostics and help.
std::string registeredOptimizerNames();

/// An attribute of optimizer `to` replacing the registered optimizer
/// attribute `current`: with `current`'s learning rate and weight decay
/// unless `lr` or `weightDecay` are given, and what else `to` shares with
/// it (Optimizer::rebuild). Null after a diagnostic from `emitError`.
Attribute switchOptimizer(const Optimizer &to, Attribute current,
                          std::optional<double> lr,
                          std::optional<double> weightDecay,
                          function_ref<InFlightDiagnostic()> emitError);

/// `lookupOptimizer`, or a diagnostic on `step` naming the attribute.
FailureOr<const Optimizer *> lookupOptimizer(TrainStepOp step);

} // namespace mlir::gacc

#endif // GACC_PASSES_OPTIMIZERS_OPTIMIZER_H
