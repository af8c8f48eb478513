//===- Jit.h - compile a training step in-process ------------------*- C++ -*-===//
#ifndef GACC_COMPILER_JIT_JIT_H
#define GACC_COMPILER_JIT_JIT_H

#include "compiler/Pipelines.h"
#include "gacc/runtime/DeviceMemory.h"
#include "gacc/runtime/Trainer.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::gacc {

struct JitStep {
  ::gacc::rt::ModelInfo model;
  ::gacc::rt::CompiledStep compiled;
};

/// Compiles the training step `stepName` (or the only one) of `module` for
/// the CPU with the MLIR ExecutionEngine. `module` is lowered in place.
/// `configure` may set up the pass manager first (a tool applies
/// -mlir-print-ir-after-all, -mlir-timing and the like there). `target`
/// says what the step runs on (for Cuda, the kernels load when the JIT
/// initializes: open the device first). Errors are reported as diagnostics.
FailureOr<JitStep>
jitCompileStep(ModuleOp module, StringRef stepName,
               function_ref<LogicalResult(PassManager &)> configure = {},
               const CodegenTarget &target = {});

/// The JIT's host API, the in-process counterpart of rt::openTrainer (no
/// MLIR or LLVM types): compiles the MLIR text of a model (`name` labels it
/// in messages) for `target` ("cpu", "cuda" or "cuda-emulated") and returns
/// the same Trainer, with parameters initialized from `seed` (and its
/// arenas on the target's device). Parse, verification and compilation
/// errors come back as a Status holding the located diagnostics.
::gacc::rt::Status compileTrainer(const std::string &mlirText,
                                  const std::string &name,
                                  const std::string &stepName, uint64_t seed,
                                  std::unique_ptr<::gacc::rt::Trainer> &out,
                                  const std::string &target = "cpu");

} // namespace mlir::gacc

#endif // GACC_COMPILER_JIT_JIT_H
