//===- Describe.h - the runtime's description of a compiled step -*- C++ -*-===//
#ifndef GACC_COMPILER_DESCRIBE_H
#define GACC_COMPILER_DESCRIBE_H

#include "gacc/runtime/ModelInfo.h"
#include "passes/StepLayout.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::gacc {

/// What the runtime needs to run `step` compiled with `layout`: slots,
/// initializers, input roles and class counts, optimizer and schedule.
::gacc::rt::ModelInfo describeStep(TrainStepOp step, const StepLayout &layout);

/// Fills in the workspace the memory plan gave the entry points of
/// `lowered` (the module after gacc-plan-buffers, at any later stage): the
/// larger of the step's and eval's, which never run at the same time.
void describeWorkspace(ModuleOp lowered, ::gacc::rt::ModelInfo &info);

/// Lowers the training step `stepName` (or the only one) of `module` in
/// place to the LLVM dialect with buildCpuPipeline, after `configure` set up
/// the pass manager, and describes it for the runtime (the JIT and
/// artifacts both start here). With `emulateCudaKernels`, the step runs the
/// CUDA target's kernels on the CPU. Errors are diagnostics.
FailureOr<::gacc::rt::ModelInfo>
lowerStepForCpu(ModuleOp module, StringRef stepName,
                function_ref<LogicalResult(PassManager &)> configure = {},
                bool emulateCudaKernels = false);

} // namespace mlir::gacc

#endif // GACC_COMPILER_DESCRIBE_H
