//===- Jit.cpp - compile a training step in-process -------------------------===//

#include "compiler/jit/Jit.h"
#include "compiler/Describe.h"
#include "compiler/InitAll.h"
#include "compiler/target/cpu/HostCodegen.h"
#include "gacc/runtime/HostCode.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::gacc;

FailureOr<JitStep> mlir::gacc::jitCompileStep(
    ModuleOp module, const TrainingPipelineOptions &options,
    function_ref<LogicalResult(PassManager &)> configure) {
  FailureOr<::gacc::rt::ModelInfo> model =
      lowerStep(module, options, configure);
  if (failed(model))
    return failure();
  JitStep result;
  result.model = std::move(*model);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  // Optimize for this CPU (its vector width and instructions, such as
  // F16C and AVX512-BF16 conversions), as the JIT's code generator does.
  auto host = createHostTargetMachine(/*pic=*/false);
  if (!host)
    return module.emitError("JIT compilation failed: ")
           << llvm::toString(host.takeError());
  auto optimize = [tm = host->get()](llvm::Module *llvmModule) {
    optimizeForHost(*llvmModule, tm);
    return llvm::Error::success();
  };
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine) {
    std::string message = llvm::toString(engine.takeError());
    return module.emitError("JIT compilation failed: ") << message;
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const ::gacc::rt::HostImport &import : ::gacc::rt::hostImports())
      symbols[interner(import.symbol)] = {
          llvm::orc::ExecutorAddr::fromPtr(import.function),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  (*engine)->initialize();

  std::shared_ptr<ExecutionEngine> owner = std::move(*engine);
  for (auto [name, entry] : {std::pair{"_mlir_ciface_gacc_step",
                                       &result.compiled.step},
                             std::pair{"_mlir_ciface_gacc_eval",
                                       &result.compiled.eval}}) {
    auto function = owner->lookup(name);
    if (!function) {
      llvm::consumeError(function.takeError());
      return module.emitError("JIT: no entry point '") << name << "'";
    }
    *entry = reinterpret_cast<::gacc::rt::StepEntry>(*function);
  }
  result.compiled.owner = owner;
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
  FailureOr<JitStep> jit =
      module ? jitCompileStep(*module, options) : FailureOr<JitStep>();
  if (failed(jit))
    return ::gacc::rt::Status::error(diagnostics.empty() ? name + ": cannot compile"
                                                         : diagnostics);
  out = std::make_unique<::gacc::rt::Trainer>(std::move(jit->model),
                                              std::move(jit->compiled));
  if (::gacc::rt::Status s = out->initialize(options.seed); !s)
    return s;
  return device ? out->placeArenasOn(std::move(device)) : ::gacc::rt::Status();
}
