//===- Describe.h - the runtime's description of a compiled step -*- C++ -*-===//
#ifndef GACC_COMPILER_DESCRIBE_H
#define GACC_COMPILER_DESCRIBE_H

#include "compiler/Pipelines.h"
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

/// Configures the training step `options.step` (or the only one) of
/// `module` with `options` (configureTrainStep), describes it for the
/// runtime, and lowers `module` in place to the LLVM dialect with
/// buildCpuPipeline for `options.target` (host code; for cuda, with the
/// kernels' PTX in gpu.binary ops), after `configure` set up the pass
/// manager. The JIT and artifacts both start here. Errors are diagnostics.
FailureOr<::gacc::rt::ModelInfo>
lowerStep(ModuleOp module, const TrainingPipelineOptions &options,
          function_ref<LogicalResult(PassManager &)> configure = {});

/// Loads into `context` every dialect that lowerStep's pipeline for
/// `options.target` produces, so that steps can then be lowered on several
/// threads at once (a context running threads cannot load dialects).
LogicalResult loadStepPipelineDialects(MLIRContext *context,
                                       const TrainingPipelineOptions &options);

} // namespace mlir::gacc

#endif // GACC_COMPILER_DESCRIBE_H
