//===- StateMemory.h - memory that lives across training steps --*- C++ -*-===//
//
// Bytes of parameters, gradients and optimizer state of a training step,
// from its state layout. The memory plan (MemoryPlan.h) builds on it.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_PLAN_STATEMEMORY_H
#define GACC_COMPILER_PLAN_STATEMEMORY_H

#include "dialects/gacc/GaccOps.h"
#include "passes/StepLayout.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>

namespace mlir::gacc {

struct StateMemory {
  int64_t parameterCount = 0; ///< Tensors.
  int64_t parameterElements = 0;
  /// Of them, those of trainable (not frozen) parameters.
  int64_t trainableElements = 0;
  int64_t parameterBytes = 0;
  int64_t gradientBytes = 0;
  int64_t optimizerBytes = 0;
};

/// The state memory of one rank of `step`, as `layout` places it.
StateMemory computeStateMemory(TrainStepOp step, const StepLayout &layout);
/// "1.5 MiB"-style byte counts.
std::string formatBytes(int64_t bytes);

} // namespace mlir::gacc

#endif // GACC_COMPILER_PLAN_STATEMEMORY_H
