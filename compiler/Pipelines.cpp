//===- Pipelines.cpp - the gacc compilation pipelines -----------------------===//

#include "compiler/Pipelines.h"
#include "compiler/Passes.h"
#include "compiler/conversion/Passes.h"
#include "compiler/target/common/Passes.h"
#include "compiler/target/cpu/Passes.h"
#include "compiler/target/cuda/KernelCodegen.h"
#include "compiler/target/cuda/Passes.h"
#include "passes/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void gacc::buildDifferentiationPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  // (The step is distributed over its ranks already: by gacc-configure-step,
  // or as the model was written, which its verifier checks.)
  pm.addPass(createMixedPrecision());
  pm.addPass(createSplitBatch());
  // Attention without its T x S intermediates: FlashAttention's kernels on
  // the CUDA targets (what they take), the runtime's blocked kernel on the
  // CPU.
  pm.addPass(createFuseAttention(FuseAttentionOptions{
      .cudaKernelsOnly = parseStepTarget(options.target) != StepTarget::Cpu}));
  pm.addPass(createAutodiff());
}

void gacc::buildTrainingPipeline(OpPassManager &pm,
                                 const TrainingPipelineOptions &options) {
  pm.addPass(createConfigureStep(options));
  buildDifferentiationPipeline(pm, options);
  buildStepPipeline(pm, options);
}

void gacc::buildStepPipeline(OpPassManager &pm,
                             const TrainingPipelineOptions &options) {
  pm.addPass(createRemat());
  pm.addPass(createAccumulate());
  BuildStepOptions buildStep;
  buildStep.stepName = options.step;
  pm.addPass(createBuildStep(buildStep));
  pm.addPass(createDecompose());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void gacc::buildGaccToLinalgPipeline(OpPassManager &pm, StepTarget target) {
  pm.addPass(createConvertGaccToLinalg());
  // Elementwise chains (optimizer updates, activations, their derivatives)
  // become single loops; contractions stay named for the target to lower.
  pm.addPass(createFuseElementwise(
      FuseElementwiseOptions{.recomputeProducers = target != StepTarget::Cpu}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void gacc::buildBufferizePipeline(OpPassManager &pm) {
  pm.addPass(createAccumulateInPlace());
  pm.addPass(createSplitFills());
  // No tensor crosses a function boundary: the entry points, all that
  // gacc-build-step leaves, take the arenas as memrefs. (Bufferizing the
  // boundaries would also order the functions by address, as upstream's
  // module bufferization lists them from a DenseMap: constants they share
  // would become globals in an order, and with names, that vary per run.)
  bufferization::OneShotBufferizePassOptions bufferize;
  // Accumulation loops carry fresh tensors (sums) in their iter_args.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // New parameters, optimizer state and gradients are computed in their
  // slots; the other temporaries go to the workspace arena, and the
  // deallocation pipeline frees what the plan leaves to the heap.
  pm.addNestedPass<func::FuncOp>(createWriteInPlace());
  pm.addNestedPass<func::FuncOp>(createPlanBuffers());
}

StringRef gacc::targetName(StepTarget kind) {
  switch (kind) {
  case StepTarget::Cpu:
    return "cpu";
  case StepTarget::CudaEmulated:
    return "cuda-emulated";
  case StepTarget::Cuda:
    return "cuda";
  }
  llvm_unreachable("a target with no name");
}

std::optional<gacc::StepTarget> gacc::parseStepTarget(StringRef name) {
  for (StepTarget kind :
       {StepTarget::Cpu, StepTarget::CudaEmulated, StepTarget::Cuda})
    if (name == targetName(kind))
      return kind;
  return std::nullopt;
}

FailureOr<gacc::CodegenTarget>
gacc::parseCodegenTarget(StringRef name, std::string &error) {
  CodegenTarget target;
  std::optional<StepTarget> kind = parseStepTarget(name);
  if (!kind) {
    error = "--target " + name.str() + " is unknown (cpu, cuda or cuda-emulated)";
    return failure();
  }
  target.kind = *kind;
  if (target.kind != StepTarget::Cuda)
    return target;
  target.libdevice = findCudaFile("nvvm/libdevice/libdevice.10.bc");
  if (target.libdevice.empty()) {
    error = "--target cuda needs CUDA's libdevice "
            "(nvvm/libdevice/libdevice.10.bc under $CUDA_HOME or "
            "/usr/local/cuda)";
    return failure();
  }
  target.ptxas = findCudaFile("bin/ptxas");
  target.fatbinary = findCudaFile("bin/fatbinary");
  return target;
}

LogicalResult gacc::buildCodegenPipeline(OpPassManager &pm,
                                         const CodegenTarget &target) {
  buildBufferizePipeline(pm);
  pm.addPass(createDeallocateHeapBuffers());
  switch (target.kind) {
  case StepTarget::Cpu:
    pm.addPass(createMatmulToCall());
    pm.addPass(createAttentionToCall());
    pm.addNestedPass<func::FuncOp>(createCopiesToLinalg());
    pm.addNestedPass<func::FuncOp>(createSplitReductions(SplitReductionsOptions{
        .maxOutputs = 64, .parallelism = 64, .partialBytes = 64,
        .laneBytes = 64}));
    pm.addPass(createOutlineLoopNests());
    pm.addNestedPass<func::FuncOp>(createCollapseNests());
    // Chunks of the nests for the runtime's threads
    // (gacc-cpu-dispatch-parallel-calls, after the conversion to LLVM).
    pm.addPass(createSplitParallelNests());
    pm.addPass(createApproximateMath());
    // A layer's calls once, not once per layer (compile time flat in depth).
    pm.addPass(createOutlineRepeats());
    break;
  case StepTarget::CudaEmulated:
    buildCudaKernelMappingPipeline(pm);
    pm.addNestedPass<func::FuncOp>(createEmulateLaunches());
    break;
  case StepTarget::Cuda:
    buildCudaKernelMappingPipeline(pm);
    if (failed(buildCudaKernelCompilationPipeline(pm, target.chip,
                                                  target.libdevice)))
      return failure();
    // Machine code ahead of time where CUDA's assembler is here; otherwise
    // the driver compiles the PTX when the step loads.
    if (!target.ptxas.empty() && !target.fatbinary.empty()) {
      AssembleKernelsOptions assemble;
      assemble.ptxas = target.ptxas;
      assemble.fatbinary = target.fatbinary;
      pm.addPass(createAssembleKernels(assemble));
    }
    // What the host allocates (scratch, what the plan leaves to the heap)
    // is device memory.
    pm.addNestedPass<func::FuncOp>(createDeviceAllocations());
    // One stream per call, the launches queued on it without waiting; the
    // call waits for them at its end.
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
    break;
  }
  pm.addPass(createConvertLinalgToLoopsPass());
  if (target.kind != StepTarget::Cuda) {
    // bf16 arithmetic in f32 with a rounding after each op, as LLVM's x86
    // backend promotes it, and the conversions as integer operations: the
    // same results on every CPU, with or without AVX512-BF16.
    pm.addPass(arith::createArithEmulateUnsupportedFloats(
        arith::ArithEmulateUnsupportedFloatsOptions{.sourceTypeStrs = {"bf16"},
                                                    .targetTypeStr = "f32"}));
    pm.addPass(createExpandBf16Conversions());
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // The emulated kernels' vector loads and stores (tiled matmuls).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (target.kind == StepTarget::Cpu)
    pm.addPass(createDispatchParallelCalls());
  // Launches, device allocations and the kernels' binary: calls to the
  // runtime's mgpu* entry points.
  if (target.kind == StepTarget::Cuda)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

LogicalResult gacc::buildCpuPipeline(OpPassManager &pm,
                                     const TrainingPipelineOptions &options,
                                     const CodegenTarget &target) {
  buildTrainingPipeline(pm, options);
  buildGaccToLinalgPipeline(pm, target.kind);
  return buildCodegenPipeline(pm, target);
}

void gacc::registerPipelines() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "gacc-training-pipeline",
      "Differentiate a model and build its step and eval functions",
      buildTrainingPipeline);
  PassPipelineRegistration<TrainingPipelineOptions>(
      "gacc-differentiation-pipeline",
      "Autocast, the per-rank and micro-batch models, and the gradient "
      "functions the step refers to (what the memory planner analyses)",
      buildDifferentiationPipeline);
  registerPassPipeline(
      "gacc-to-linalg-pipeline", "Lower gacc ops to fused linalg on tensors",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GaccToLinalgOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::optional<StepTarget> target = parseStepTarget(options.target);
        if (!target)
          return errorHandler("target=" + options.target +
                              " is unknown (cpu, cuda or cuda-emulated)");
        buildGaccToLinalgPipeline(pm, *target);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(GaccToLinalgOptions());
      });
  PassPipelineRegistration<>(
      "gacc-bufferize-pipeline",
      "Bufferize linalg on tensors and plan the step's temporaries",
      buildBufferizePipeline);
  PassPipelineRegistration<CodegenOptions>(
      "gacc-codegen-pipeline",
      "Bufferize and lower linalg to the LLVM dialect",
      [](OpPassManager &pm, const CodegenOptions &options) {
        CodegenTarget target;
        if (options.emulateCudaKernels)
          target.kind = StepTarget::CudaEmulated;
        (void)buildCodegenPipeline(pm, target);
      });
  // The whole pipeline, for the target its options name.
  registerPassPipeline(
      "gacc-cpu-pipeline",
      "Compile a training step for its target (cpu by default), end to end",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainingPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error;
        FailureOr<CodegenTarget> target =
            parseCodegenTarget(options.target, error);
        if (failed(target))
          return errorHandler(error);
        return buildCpuPipeline(pm, options, *target);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(TrainingPipelineOptions());
      });
}
