//===- Jit.cpp - compile a training step in-process -------------------------===//

#include "compiler/jit/Jit.h"
#include "compiler/Describe.h"
#include "compiler/Pipelines.h"
#include "gacc/runtime/CpuMemory.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"

// Runtime functions compiled code calls (runtime/src/cpu).
extern "C" void memrefCopy(int64_t, void *, void *);
extern "C" void gacc_cpu_matmul_f32(int64_t, void *, int64_t, void *, int64_t,
                                    void *, int32_t, int32_t);
extern "C" void gacc_cpu_matmul_f64(int64_t, void *, int64_t, void *, int64_t,
                                    void *, int32_t, int32_t);
extern "C" void gacc_cpu_matmul_f16_f32(int64_t, void *, int64_t, void *,
                                        int64_t, void *, int32_t, int32_t);
extern "C" void gacc_cpu_matmul_bf16_f32(int64_t, void *, int64_t, void *,
                                         int64_t, void *, int32_t, int32_t);

using namespace mlir;
using namespace mlir::gacc;

/// LLVM's -O2 pipeline for `tm`, without loop unrolling: unrolling the many
/// loops of a step (an accumulation loop holds a whole micro-batch) made
/// ScalarEvolution quadratic, 40-60 s to compile GPT-mini with accumulation
/// instead of 4, and the loops run no faster unrolled.
static llvm::Error optimizeForHost(llvm::Module &module,
                                   llvm::TargetMachine *tm) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(tm, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(module, modules);
  return llvm::Error::success();
}

FailureOr<JitStep>
mlir::gacc::jitCompileStep(ModuleOp module, StringRef stepName,
                           function_ref<LogicalResult(PassManager &)> configure) {
  TrainStepOp step = TrainStepOp::find(module, stepName);
  if (!step)
    return failure();
  FailureOr<StepLayout> layout = computeStepLayout(step);
  if (failed(layout))
    return failure();
  JitStep result;
  result.model = describeStep(step, *layout);

  PassManager pm(module.getContext());
  if (configure && failed(configure(pm)))
    return failure();
  TrainingPipelineOptions options;
  options.step = stepName.str();
  buildCpuPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  describeWorkspace(module, result.model);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  // Optimize for this CPU (its vector width and instructions, such as
  // F16C and AVX512-BF16 conversions), as the JIT's code generator does.
  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return module.emitError("JIT compilation failed: ")
           << llvm::toString(hostBuilder.takeError());
  auto host = hostBuilder->createTargetMachine();
  if (!host)
    return module.emitError("JIT compilation failed: ")
           << llvm::toString(host.takeError());
  auto optimize = [tm = host->get()](llvm::Module *llvmModule) {
    return optimizeForHost(*llvmModule, tm);
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
    auto add = [&](const char *name, auto *function) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("memrefCopy", &memrefCopy);
    // Temporaries go through the runtime's counting heap.
    add("malloc", &gacc_cpu_malloc);
    add("free", &gacc_cpu_free);
    add("gacc_cpu_matmul_f32", &gacc_cpu_matmul_f32);
    add("gacc_cpu_matmul_f64", &gacc_cpu_matmul_f64);
    add("gacc_cpu_matmul_f16_f32", &gacc_cpu_matmul_f16_f32);
    add("gacc_cpu_matmul_bf16_f32", &gacc_cpu_matmul_bf16_f32);
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
