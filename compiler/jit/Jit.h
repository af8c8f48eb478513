//===- Jit.h - compile a training step in-process ------------------*- C++ -*-===//
#ifndef GACC_COMPILER_JIT_JIT_H
#define GACC_COMPILER_JIT_JIT_H

#include "compiler/Pipelines.h"
#include "compiler/aot/CompileCache.h"
#include "gacc/runtime/DeviceMemory.h"
#include "gacc/runtime/Trainer.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::gacc {

struct JitStep {
  ::gacc::rt::ModelInfo model;
  ::gacc::rt::CompiledStep compiled;
};

/// Compiles the training step of `module` that `options` name, configured
/// with them, for their target as an artifact would be (compileArtifact)
/// and loads its code into this process (rt::loadHostCode).
/// `module` is lowered in place. `configure` may set up the pass manager
/// first (a tool applies -mlir-print-ir-after-all, -mlir-timing and the
/// like there). With `cache`, the artifact comes from it when it holds the
/// step (and `module` is not lowered), or is stored in it. With `timing`,
/// the cache's lookup, compileArtifact's stages and the load are timed in
/// it. For cuda, the
/// kernels load when the JIT initializes: open the device first. Errors are
/// reported as diagnostics.
FailureOr<JitStep>
jitCompileStep(ModuleOp module, const TrainingPipelineOptions &options = {},
               function_ref<LogicalResult(PassManager &)> configure = {},
               const CompileCache *cache = nullptr,
               TimingScope *timing = nullptr);

/// The JIT's host API, the in-process counterpart of rt::openTrainer (no
/// MLIR or LLVM types but the options): compiles the MLIR text of a model
/// (`name` labels it in messages) with `options` (the step, its target
/// "cpu", "cuda" or "cuda-emulated", batch, micro-batch, remat, precision,
/// ZeRO, optimizer overrides: what the `gacc` flags of the same names set)
/// and returns the same Trainer, with parameters initialized from
/// `options.seed` (and its arenas on the target's device), through the
/// compile cache the environment names (CompileCache::fromEnvironment). Bad options,
/// parse, verification and compilation errors come back as a Status
/// holding the located diagnostics.
::gacc::rt::Status compileTrainer(const std::string &mlirText,
                                  const std::string &name,
                                  const TrainingPipelineOptions &options,
                                  std::unique_ptr<::gacc::rt::Trainer> &out);

} // namespace mlir::gacc

#endif // GACC_COMPILER_JIT_JIT_H
