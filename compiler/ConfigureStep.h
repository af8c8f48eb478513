//===- ConfigureStep.h - training options applied to a step -----*- C++ -*-===//
//
// What `gacc --micro-batch=8 --remat=sqrt --precision=bf16 ...`,
// `--gacc-training-pipeline="micro-batch=8 ..."`, compileTrainer's options
// and Python's keywords all do to a gacc.train_step before the transforms
// run: set its attributes (and rebuild its model for another batch or for
// ZeRO's ranks). The gacc-configure-step pass calls it; so do the entry
// points that must describe the configured step to the runtime before the
// pipeline consumes it (lowerStep, `gacc plan`).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_CONFIGURESTEP_H
#define GACC_COMPILER_CONFIGURESTEP_H

#include "compiler/Pipelines.h"
#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {

/// Sets on `step` what `options` give, in this order (each sees what the
/// ones before set): LoRA adapters (in the step's module, once); optimizer,
/// lr, weight-decay and grad-clip; lr-schedule; precision; ranks and
/// zero-stage; remat and remat-budget; batch, then one of micro-batch,
/// accumulation-steps and memory-budget; the remat budget policy's
/// schedule. The
/// budgets ask the memory planner and report their choice as a remark at the
/// step. A bad value, or a step the values make invalid, is an error at the
/// step. `step`, `target` and `seed` are not read here.
LogicalResult configureTrainStep(TrainStepOp step,
                                 const TrainingPipelineOptions &options);

} // namespace mlir::gacc

#endif // GACC_COMPILER_CONFIGURESTEP_H
