//===- Aot.h - compile a training step into an artifact ---------*- C++ -*-===//
#ifndef GACC_COMPILER_AOT_AOT_H
#define GACC_COMPILER_AOT_AOT_H

#include "compiler/Pipelines.h"
#include "gacc/runtime/Artifact.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

namespace mlir::gacc {

/// What `gacc compile --emit` writes instead of an artifact.
enum class EmitKind { Artifact, Mlir, Llvm, Object, Ptx };

/// Compiles the training step of `module` that `options` name, configured
/// with them (lowerStep), into an artifact that the runtime alone loads
/// (rt::Artifact, its shared object in section "host"). `module` is
/// lowered in place. `configure` may set up the pass manager first. With
/// `emit` other than Artifact, stops there and puts that stage's text (MLIR
/// of the LLVM dialect, LLVM IR) or bytes (object code) in `intermediate`.
/// The artifact's target is `options.target`: "cpu", "cuda-emulated" (the
/// runtime runs it on the emulated device) or "cuda" (host code that loads
/// its embedded PTX in gacc_cuda_load_kernels, which the runtime calls once
/// the device is open). Errors are reported as diagnostics.
/// With `timing`, the stages after the pass pipeline (translation to LLVM
/// IR, LLVM's optimization and code generation, linking) are timed in
/// scopes nested in it, next to the passes `configure` may time.
FailureOr<::gacc::rt::Artifact>
compileArtifact(ModuleOp module, const TrainingPipelineOptions &options,
                EmitKind emit, std::string &intermediate,
                function_ref<LogicalResult(PassManager &)> configure = {},
                TimingScope *timing = nullptr);

/// The CUDA kernels of the training step of `module` that `options` name,
/// configured with them, as PTX for the chip of `options.target` ("cuda";
/// see compiler/target/cuda/KernelCodegen.h): the training pipeline, the
/// lowering to linalg, bufferization, then the kernel pipeline. `module` is
/// lowered in place.
FailureOr<std::string>
compileCudaKernels(ModuleOp module, const TrainingPipelineOptions &options,
                   function_ref<LogicalResult(PassManager &)> configure = {});

} // namespace mlir::gacc

#endif // GACC_COMPILER_AOT_AOT_H
