//===- StepLayout.cpp - where a compiled step keeps its tensors -------------===//

#include "passes/StepLayout.h"
#include "passes/Passes.h"
#include "passes/Zero.h"
#include "dialects/gacc/GaccShapes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::gacc;

int64_t Slot::bytes() const { return getStaticByteSize(type).value_or(0); }

const Slot &ArenaLayout::place(StringRef name, RankedTensorType type,
                               RankedTensorType unsharded, int64_t alignment) {
  Slot slot{name.str(), type,
            static_cast<int64_t>(llvm::alignTo(bytes, alignment)), unsharded};
  bytes = slot.offset + slot.bytes();
  slots.push_back(slot);
  return slots.back();
}

const Slot &ArenaLayout::add(StringRef name, RankedTensorType type,
                             RankedTensorType unsharded) {
  return place(name, type, unsharded, kSlotAlignment);
}

const Slot &ArenaLayout::addPacked(StringRef name, RankedTensorType type) {
  return place(name, type, {},
               llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

const Slot *ArenaLayout::find(StringRef name) const {
  for (const Slot &slot : slots)
    if (slot.name == name)
      return &slot;
  return nullptr;
}

FailureOr<StepLayout> gacc::computeStepLayout(TrainStepOp step) {
  StepLayout layout;
  auto module = step->getParentOfType<ModuleOp>();
  SmallVector<ParamOp> params(module.getOps<ParamOp>());
  if (params.empty())
    return step.emitOpError("the module declares no gacc.param");
  layout.element = params.front().getTensorType().getElementType();
  for (ParamOp param : params)
    if (param.getTensorType().getElementType() != layout.element)
      return param.emitOpError("has element type ")
             << param.getTensorType().getElementType()
             << ", but compiled steps need every parameter in one type ("
             << layout.element << ")";

  FailureOr<const Optimizer *> optimizer = lookupOptimizer(step);
  if (failed(optimizer))
    return failure();
  layout.optimizer = *optimizer;
  for (StringRef name : layout.optimizer->getStepScalars(step.getOptimizer()))
    layout.stepScalars.push_back(name.str());

  ZeroAttr zero = step.getEffectiveZero();
  FailureOr<llvm::StringSet<>> low = lowPrecisionParams(step);
  if (failed(low))
    return failure();
  Type lowType = step.getEffectivePrecision() == Precision::f16
                     ? Type(Float16Type::get(step.getContext()))
                     : Type(BFloat16Type::get(step.getContext()));
  auto addState = [&](const std::string &name, ParamOp param, bool sharded,
                      bool master) {
    RankedTensorType type = param.getTensorType();
    if (!master && low->contains(param.getSymName()))
      type = type.clone(lowType);
    if (sharded)
      layout.state.add(name, shardType(type, zero.getRanks()), type);
    else
      layout.state.add(name, type);
  };
  // A frozen parameter is whole on every rank; it has no gradient nor
  // optimizer state.
  for (ParamOp param : params)
    addState(param.getSymName().str(), param,
             shardsParameters(zero) && !param.getFrozen(), false);
  SmallVector<ParamOp> trainable = getTrainableParams(module);
  for (ParamOp param : trainable)
    addState(("grad." + param.getSymName()).str(), param,
             shardsGradients(zero), false);
  Attribute optimizerAttr = step.getOptimizer();
  bool shardState = shardsOptimizerState(zero);
  // The state of what this rank updates: the whole parameter, or its flat
  // shard. A shard's slot shaped as the shard is a slice of the whole
  // parameter's; a replicated one is whole on every rank; one shaped
  // otherwise (8-bit AdamW's block maxima) is the rank's own, and the whole
  // is the ranks' side by side.
  for (ParamOp param : trainable) {
    RankedTensorType weights = param.getTensorType().clone(layout.element);
    RankedTensorType updated =
        shardState ? shardType(weights, zero.getRanks()) : weights;
    for (const StateSlot &slot :
         layout.optimizer->getStateSlots(optimizerAttr, weights, updated)) {
      std::string name = (slot.name + "." + param.getSymName()).str();
      Type element = slot.type.getElementType();
      if (!shardState || slot.replicated)
        layout.state.add(name, slot.type);
      else if (slot.type.getShape() == updated.getShape())
        layout.state.add(name, slot.type, weights.clone(element));
      else
        layout.state.add(
            name, slot.type,
            RankedTensorType::get({slot.type.getNumElements() *
                                   static_cast<int64_t>(zero.getRanks())},
                                  element));
      layout.optimizerState.push_back(name);
    }
  }
  for (ParamOp param : params)
    if (low->contains(param.getSymName()))
      addState((kMasterPrefix + param.getSymName()).str(), param,
               shardsOptimizerState(zero), true);
  auto scalar = RankedTensorType::get({}, layout.element);
  if (step.getEffectiveLossScale()) {
    layout.state.add(kLossScaleSlot, scalar);
    layout.state.add(kGrowthTrackerSlot, scalar);
  }

  for (InputOp input : module.getOps<InputOp>())
    layout.batch.add(input.getSymName(), input.getTensorType());

  for (const std::string &name : layout.stepScalars)
    layout.io.addPacked(hyperSlotName(name), scalar);
  func::FuncOp model = step.getModelFunc();
  layout.io.add("loss", cast<RankedTensorType>(model.getResultTypes()[0]));
  layout.io.add("grad_norm", scalar);
  if (step.getEffectiveLossScale())
    layout.io.add(kFoundInfSlot, scalar);
  auto counter = RankedTensorType::get({}, IntegerType::get(step.getContext(), 64));
  layout.io.add("step", counter);
  if (zero.getRanks() > 1)
    layout.io.add(kRankSlot, counter);
  for (auto [i, type] : llvm::enumerate(model.getResultTypes().drop_front()))
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      layout.io.add("output." + std::to_string(i + 1), tensor);
  return layout;
}
