//===- StateMemory.cpp - memory that lives across training steps ----------===//

#include "compiler/plan/StateMemory.h"
#include "dialects/gacc/GaccShapes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::gacc;

gacc::StateMemory gacc::computeStateMemory(TrainStepOp step,
                                           const StepLayout &layout) {
  StateMemory memory;
  auto module = step->getParentOfType<ModuleOp>();
  for (ParamOp param : module.getOps<ParamOp>()) {
    ++memory.parameterCount;
    memory.parameterElements += param.getTensorType().getNumElements();
    if (!param.getFrozen())
      memory.trainableElements += param.getTensorType().getNumElements();
  }
  // The slots say what this rank keeps: 16-bit weights and gradients with
  // f32 master weights in mixed precision, shards under ZeRO.
  for (const Slot &slot : layout.state.slots) {
    StringRef name = slot.name;
    if (name == kLossScaleSlot || name == kGrowthTrackerSlot)
      continue;
    if (module.lookupSymbol<ParamOp>(name))
      memory.parameterBytes += slot.bytes();
    else if (name.starts_with("grad."))
      memory.gradientBytes += slot.bytes();
    else
      memory.optimizerBytes += slot.bytes();
  }
  return memory;
}

std::string gacc::formatBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.1f %s", value, units[unit]);
  return text;
}
