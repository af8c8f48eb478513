//===- Describe.h - the runtime's description of a compiled step -*- C++ -*-===//
#ifndef GACC_COMPILER_DESCRIBE_H
#define GACC_COMPILER_DESCRIBE_H

#include "gacc/runtime/ModelInfo.h"
#include "passes/StepLayout.h"

namespace mlir::gacc {

/// What the runtime needs to run `step` compiled with `layout`: slots,
/// initializers, input roles and class counts, optimizer and schedule.
::gacc::rt::ModelInfo describeStep(TrainStepOp step, const StepLayout &layout);

} // namespace mlir::gacc

#endif // GACC_COMPILER_DESCRIBE_H
