//===- StateMemory.cpp - memory that lives across training steps
//------------===//

#include "compiler/plan/StateMemory.h"
#include "dialects/gacc/GaccShapes.h"
#include "passes/Zero.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::gacc;

static int64_t optimizerSlots(Attribute optimizer) {
  return llvm::TypeSwitch<Attribute, int64_t>(optimizer)
      .Case([](SGDAttr sgd) { return sgd.getMomentum().isZero() ? 0 : 1; })
      .Case([](AdamWAttr) { return 2; })
      .Default([](Attribute) { return 0; });
}

gacc::StateMemory gacc::computeStateMemory(TrainStepOp step) {
  StateMemory memory;
  memory.optimizerSlots = optimizerSlots(step.getOptimizer());
  auto module = step->getParentOfType<ModuleOp>();
  ZeroAttr zero = step.getEffectiveZero();
  for (ParamOp param : module.getOps<ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    int64_t bytes = getStaticByteSize(type).value_or(0);
    // This rank's shard: flat, padded (Zero.h).
    int64_t shard = getStaticByteSize(shardType(type, zero.getRanks())).value_or(0);
    ++memory.parameterCount;
    memory.parameterElements += type.getNumElements();
    memory.parameterBytes += shardsParameters(zero) ? shard : bytes;
    memory.gradientBytes += shardsGradients(zero) ? shard : bytes;
    memory.optimizerBytes +=
        memory.optimizerSlots * (shardsOptimizerState(zero) ? shard : bytes);
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
