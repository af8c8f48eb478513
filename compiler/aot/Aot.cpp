//===- Aot.cpp - compile a training step into an artifact -------------------===//

#include "compiler/aot/Aot.h"
#include "compiler/Describe.h"
#include "compiler/Pipelines.h"
#include "compiler/target/cpu/HostCodegen.h"
#include "compiler/target/cuda/KernelCodegen.h"
#include "gacc/runtime/HostCode.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::gacc;
namespace rt = ::gacc::rt;

FailureOr<rt::Artifact> mlir::gacc::compileArtifact(
    ModuleOp module, const TrainingPipelineOptions &options, EmitKind emit,
    std::string &intermediate,
    function_ref<LogicalResult(PassManager &)> configure,
    TimingScope *timing) {
  auto timed = [&](StringRef stage) {
    return timing ? timing->nest(stage) : TimingScope();
  };
  FailureOr<rt::ModelInfo> model = lowerStep(module, options, configure);
  if (failed(model))
    return failure();
  rt::Artifact artifact;
  // A target's name, which lowerStep accepted.
  artifact.target = options.target.getValue();
  artifact.model = std::move(*model);
  if (emit == EmitKind::Mlir) {
    llvm::raw_string_ostream os(intermediate);
    module.print(os);
    return artifact;
  }

  // Once per process: LLVM's target registry takes no lock, and steps may
  // compile on several threads (gacc tune).
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto host = createHostTargetMachine(/*pic=*/true);
  if (!host)
    return module.emitError("compilation for the host failed: ")
           << llvm::toString(host.takeError());
  // The code is for this CPU: the runtime refuses a CPU without its
  // extensions rather than die of an illegal instruction.
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const std::string &name : rt::checkedCpuFeatures())
    if (features.lookup(name))
      artifact.cpuFeatures.push_back(name);
  llvm::LLVMContext context;
  TimingScope translating = timed("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "gacc_step");
  translating.stop();
  if (!llvmModule)
    return module.emitError("cannot translate the step to LLVM IR");
  llvmModule->setDataLayout((*host)->createDataLayout());
  llvmModule->setTargetTriple((*host)->getTargetTriple());
  std::vector<std::string> imports;
  for (const rt::HostImport &import : rt::hostImports())
    imports.push_back(import.symbol);
  // The kernels load when the runtime says so, not when dlopen runs the
  // module's constructors: the runtime's imports are not bound then.
  if (artifact.target == targetName(StepTarget::Cuda))
    constructorsToFunctions(*llvmModule, "gacc_cuda_load_kernels",
                            "gacc_cuda_unload_kernels");
  importThroughPointers(*llvmModule, imports, rt::kHostImportPrefix);
  if (emit == EmitKind::Llvm || emit == EmitKind::Object) {
    optimizeForHost(*llvmModule, host->get());
    if (emit == EmitKind::Llvm) {
      llvm::raw_string_ostream os(intermediate);
      llvmModule->print(os, nullptr);
      return artifact;
    }
    llvm::Expected<std::string> object = emitObject(*llvmModule, **host);
    if (!object)
      return module.emitError("cannot emit object code: ")
             << llvm::toString(object.takeError());
    intermediate = std::move(*object);
    return artifact;
  }
  TimingScope generating = timed("LLVM: optimize and generate code");
  llvm::Expected<std::vector<std::string>> objects =
      compileForHost(*llvmModule);
  generating.stop();
  if (!objects)
    return module.emitError("cannot emit object code: ")
           << llvm::toString(objects.takeError());
  TimingScope linking = timed("link");
  llvm::Expected<std::string> library = linkSharedObject(*objects);
  if (!library)
    return module.emitError(llvm::toString(library.takeError()));
  artifact.sections["host"] = std::move(*library);
  return artifact;
}

FailureOr<std::string> mlir::gacc::compileCudaKernels(
    ModuleOp module, const TrainingPipelineOptions &options,
    function_ref<LogicalResult(PassManager &)> configure) {
  std::string error;
  FailureOr<CodegenTarget> target =
      parseCodegenTarget(options.target.getValue(), error);
  if (failed(target))
    return module.emitError(error);
  if (target->kind != StepTarget::Cuda)
    return module.emitError("PTX is for --target cuda, not ")
           << options.target.getValue();
  PassManager pm(module.getContext());
  if (configure && failed(configure(pm)))
    return failure();
  buildTrainingPipeline(pm, options);
  buildGaccToLinalgPipeline(pm, target->kind);
  buildBufferizePipeline(pm);
  buildCudaKernelMappingPipeline(pm);
  if (failed(buildCudaKernelCompilationPipeline(pm, target->chip,
                                                target->libdevice)) ||
      failed(pm.run(module)))
    return failure();
  return collectPtx(module);
}
