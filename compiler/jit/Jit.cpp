//===- Jit.cpp - compile a training step in-process -------------------------===//

#include "compiler/jit/Jit.h"
#include "compiler/Describe.h"
#include "compiler/InitAll.h"
#include "compiler/aot/Aot.h"
#include "gacc/runtime/HostCode.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::gacc;

FailureOr<JitStep> mlir::gacc::jitCompileStep(
    ModuleOp module, const TrainingPipelineOptions &options,
    function_ref<LogicalResult(PassManager &)> configure,
    const CompileCache *cache, TimingScope *timing) {
  // The artifact's code, loaded in this process: one way to make machine
  // code (parallel, cacheable) whether it runs now or later.
  TimingScope lookup = timing && cache ? timing->nest("compile cache")
                                       : TimingScope();
  auto compile = [&] {
    std::string unused;
    return compileArtifact(module, options, EmitKind::Artifact, unused,
                           configure, timing && cache ? &lookup : timing);
  };
  FailureOr<::gacc::rt::Artifact> artifact =
      cache ? cache->getOrCompile(module, options, compile) : compile();
  lookup.stop();
  if (failed(artifact))
    return failure();
  JitStep result;
  TimingScope loading = timing ? timing->nest("load the code") : TimingScope();
  if (::gacc::rt::Status status = ::gacc::rt::loadHostCode(
          artifact->sections["host"], "the compiled step", result.compiled);
      !status)
    return module.emitError(status.message());
  result.model = std::move(artifact->model);
  return result;
}

::gacc::rt::Status
mlir::gacc::compileTrainer(const std::string &mlirText, const std::string &name,
                           const TrainingPipelineOptions &options,
                           std::unique_ptr<::gacc::rt::Trainer> &out) {
  // The target first: its device must be open before the JIT loads kernels.
  std::string error;
  if (failed(parseCodegenTarget(options.target.getValue(), error)))
    return ::gacc::rt::Status::error(error);
  std::unique_ptr<::gacc::rt::DeviceMemory> device;
  if (::gacc::rt::Status s =
          ::gacc::rt::openTargetDevice(options.target.getValue(), device);
      !s)
    return s;
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(mlirText, name), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  std::optional<CompileCache> cache = CompileCache::fromEnvironment();
  FailureOr<JitStep> jit =
      module ? jitCompileStep(*module, options, {}, cache ? &*cache : nullptr)
             : FailureOr<JitStep>();
  if (failed(jit))
    return ::gacc::rt::Status::error(diagnostics.empty() ? name + ": cannot compile"
                                                         : diagnostics);
  out = std::make_unique<::gacc::rt::Trainer>(std::move(jit->model),
                                              std::move(jit->compiled));
  if (::gacc::rt::Status s = out->initialize(options.seed); !s)
    return s;
  return device ? out->placeArenasOn(std::move(device)) : ::gacc::rt::Status();
}
