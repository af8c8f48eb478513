//===- Pipelines.h - the gacc compilation pipelines --------------*- C++ -*-===//
//
// One build…Pipeline function per stage, each also registered as a named
// pipeline for gacc-opt (IREE's buildXPassPipeline + registerXPassPipeline):
//
//   gacc-training-pipeline    gacc → step/eval functions over gacc ops
//                             (autodiff, step builder, decomposition)
//   gacc-to-linalg-pipeline   gacc → linalg/tensor/arith/math, fused
//   gacc-bufferize-pipeline   in-place accumulators, bufferization, the
//                             static memory plan (what `gacc plan` reads)
//   gacc-codegen-pipeline     the above, deallocation, the target's
//                             matmuls and kernels, loops, LLVM dialect
//                             (emulate-cuda-kernels: the CUDA target's
//                             kernels run on the CPU instead, for tests;
//                             or, from C++, CUDA kernels and host code)
//   gacc-cpu-pipeline         training, to-linalg and codegen, end to end
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_PIPELINES_H
#define GACC_COMPILER_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::gacc {

struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> step{*this, "step",
                           llvm::cl::desc("The gacc.train_step to compile "
                                          "(default: the only one)"),
                           llvm::cl::init("")};
};

/// The training pipeline's first stage: autocast, ZeRO's per-rank model,
/// the micro-batch models and the gradient functions the step refers to
/// (what the memory planner analyses before rematerialization).
void buildDifferentiationPipeline(OpPassManager &pm);
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
void buildGaccToLinalgPipeline(OpPassManager &pm);
void buildBufferizePipeline(OpPassManager &pm);
/// What a step's code runs on.
enum class StepTarget {
  /// Loops and BLAS on the host.
  Cpu,
  /// The CUDA target's kernels run on the host, block and thread ids as
  /// loop indices (tests the kernels without a GPU).
  CudaEmulated,
  /// PTX kernels that host code launches through the runtime's mgpu*
  /// entry points, on device arenas.
  Cuda,
};

struct CodegenTarget {
  StepTarget kind = StepTarget::Cpu;
  /// Cuda: the chip the PTX is for and CUDA's libdevice (findLibdevice).
  std::string chip = "sm_80";
  std::string libdevice;
};

/// The target's name: "cpu", "cuda-emulated" or "cuda" (artifacts carry it,
/// the runtime's openTargetDevice opens its device).
StringRef targetName(StepTarget kind);

/// The target `name` names: "cpu", "cuda" (with CUDA's libdevice, see
/// findLibdevice) or "cuda-emulated"; otherwise failure, with the reason in
/// `error`.
FailureOr<CodegenTarget> parseCodegenTarget(StringRef name,
                                            std::string &error);

struct CodegenOptions : public PassPipelineOptions<CodegenOptions> {
  Option<bool> emulateCudaKernels{
      *this, "emulate-cuda-kernels",
      llvm::cl::desc("Run the CUDA target's kernels (block and thread ids as "
                     "loop indices) instead of the CPU's loops and BLAS: "
                     "tests the kernels without a GPU"),
      llvm::cl::init(false)};
};

LogicalResult buildCodegenPipeline(OpPassManager &pm,
                                   const CodegenTarget &target = {});
LogicalResult buildCpuPipeline(OpPassManager &pm,
                               const TrainingPipelineOptions &options,
                               const CodegenTarget &target = {});

void registerPipelines();


} // namespace mlir::gacc

#endif // GACC_COMPILER_PIPELINES_H
