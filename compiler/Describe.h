//===- Describe.h - the runtime's description of a compiled step -*- C++ -*-===//
#ifndef GACC_COMPILER_DESCRIBE_H
#define GACC_COMPILER_DESCRIBE_H

#include "gacc/runtime/ModelInfo.h"
#include "passes/StepLayout.h"

namespace mlir::gacc {

/// What the runtime needs to run `step` compiled with `layout`: slots,
/// initializers, input roles and class counts, optimizer and schedule.
::gacc::rt::ModelInfo describeStep(TrainStepOp step, const StepLayout &layout);

/// Fills in the workspace the memory plan gave the entry points of
/// `lowered` (the module after gacc-plan-buffers, at any later stage): the
/// larger of the step's and eval's, which never run at the same time.
void describeWorkspace(ModuleOp lowered, ::gacc::rt::ModelInfo &info);

} // namespace mlir::gacc

#endif // GACC_COMPILER_DESCRIBE_H
