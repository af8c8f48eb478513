//===- Passes.h - gacc compiler passes --------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_PASSES_H
#define GACC_COMPILER_PASSES_H

#include "compiler/Pipelines.h"
#include "dialects/gacc/GaccDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

/// gacc-configure-step with the options of the pipeline it starts.
std::unique_ptr<Pass>
createConfigureStep(const TrainingPipelineOptions &options);

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_COMPILER_PASSES_H
