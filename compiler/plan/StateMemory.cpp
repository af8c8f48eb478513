//===- StateMemory.cpp - memory that lives across training steps
//------------===//

#include "compiler/plan/StateMemory.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::gacc;

static int64_t byteSize(RankedTensorType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

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
  for (ParamOp param : module.getOps<ParamOp>()) {
    int64_t bytes = byteSize(param.getTensorType());
    ++memory.parameterCount;
    memory.parameterElements += param.getTensorType().getNumElements();
    memory.parameterBytes += bytes;
    memory.gradientBytes += bytes;
    memory.optimizerBytes += memory.optimizerSlots * bytes;
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

static std::string shapeString(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(type.getShape(), os, "x");
  if (type.getRank() == 0)
    os << "scalar";
  return text;
}

void gacc::printStateReport(raw_ostream &os, TrainStepOp step) {
  auto module = step->getParentOfType<ModuleOp>();
  StateMemory memory = computeStateMemory(step);
  ZeroAttr zero = step.getEffectiveZero();

  os << "step @" << step.getSymName() << ": model @" << step.getModel()
     << ", batch " << step.getBatchSize() << " (micro-batch "
     << step.getEffectiveMicroBatchSize() << ", " << step.getAccumulationSteps()
     << " accumulation step" << (step.getAccumulationSteps() == 1 ? "" : "s")
     << ")\n";
  os << "optimizer " << step.getOptimizer() << "\n";
  os << "schedule " << step.getEffectiveSchedule() << ", precision "
     << stringifyPrecision(step.getEffectivePrecision()) << ", remat "
     << stringifyRematPolicy(step.getEffectiveRemat().getPolicy())
     << ", ZeRO stage " << zero.getStage() << " on " << zero.getRanks()
     << " rank" << (zero.getRanks() == 1 ? "" : "s") << "\n\n";

  size_t nameWidth = 9;
  for (ParamOp param : module.getOps<ParamOp>())
    nameWidth = std::max(nameWidth, param.getSymName().size());
  os << llvm::left_justify("parameter", nameWidth) << "  "
     << llvm::left_justify("shape", 14) << llvm::left_justify("type", 6)
     << llvm::right_justify("elements", 12) << llvm::right_justify("bytes", 12)
     << "\n";
  for (ParamOp param : module.getOps<ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    std::string elementType;
    llvm::raw_string_ostream(elementType) << type.getElementType();
    os << llvm::left_justify(param.getSymName(), nameWidth) << "  "
       << llvm::left_justify(shapeString(type), 14)
       << llvm::left_justify(elementType, 6)
       << llvm::right_justify(std::to_string(type.getNumElements()), 12)
       << llvm::right_justify(formatBytes(byteSize(type)), 12) << "\n";
  }
  os << memory.parameterCount << " parameters, " << memory.parameterElements
     << " elements\n\n";

  os << "memory that lives across steps (one rank, unsharded):\n";
  auto row = [&](StringRef what, int64_t bytes) {
    os << "  " << llvm::left_justify(what, 18)
       << llvm::right_justify(formatBytes(bytes), 12) << "\n";
  };
  row("parameters", memory.parameterBytes);
  row("gradients", memory.gradientBytes);
  row("optimizer state", memory.optimizerBytes);
  row("total", memory.total());
  os << "activations, workspace and the peak need the memory planner, which "
        "is not built yet\n";
}
