//===- Pipelines.h - the gacc compilation pipelines --------------*- C++ -*-===//
//
// One build…Pipeline function per stage, each also registered as a named
// pipeline for gacc-opt (IREE's buildXPassPipeline + registerXPassPipeline):
//
//   gacc-training-pipeline    gacc → step/eval functions over gacc ops
//                             (the options applied to the step by
//                             gacc-configure-step, then the differentiation
//                             pipeline, remat, accumulation, step builder,
//                             decomposition)
//   gacc-differentiation-pipeline
//                             autocast, the per-rank and micro-batch
//                             models, the gradient functions (what the
//                             memory planner analyses)
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

#include "compiler/OptionalOption.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::gacc {

/// The options of the training pipeline, named like the `gacc` flags. They
/// are declared once, here, for TrainingPipelineOptions (`Owner` a
/// PassOptions) and for the gacc-configure-step pass (`Owner` a Pass), so
/// that both parse and print the same names. An option left unset (None,
/// "") keeps what the model says.
template <typename Owner> class TrainingOptionList {
  // Declared first: the options register with it as they are built.
  Owner &owner;

public:
  template <typename T>
  using Option =
      std::conditional_t<std::is_same_v<Owner, Pass>, Pass::Option<T>,
                         ::mlir::detail::PassOptions::Option<T>>;
  using Count = std::optional<int64_t>;

  explicit TrainingOptionList(Owner &owner) : owner(owner) {}

  Option<std::string> step{owner, "step",
                           llvm::cl::desc("The gacc.train_step to compile "
                                          "(default: the only one)")};
  Option<std::string> target{
      owner, "target",
      llvm::cl::desc("What the step runs on: cpu, cuda or cuda-emulated "
                     "(read by the entry points and gacc-cpu-pipeline)"),
      llvm::cl::init("cpu")};
  Option<Count> batch{owner, "batch",
                      llvm::cl::desc("Global batch size: rebuild the model "
                                     "for this many examples per step")};
  Option<Count> microBatch{
      owner, "micro-batch",
      llvm::cl::desc("Accumulate gradients over micro-batches of this size")};
  Option<Count> accumulationSteps{
      owner, "accumulation-steps",
      llvm::cl::desc("Accumulate over K micro-batches of ceil(batch / K)")};
  Option<std::string> memoryBudget{
      owner, "memory-budget",
      llvm::cl::desc("The largest micro-batch whose planned peak fits in "
                     "these bytes (8GiB, 512MiB, 1e9, ...)")};
  Option<std::string> remat{
      owner, "remat",
      llvm::cl::desc("Rematerialization policy: none, blocks, sqrt, matmuls "
                     "or budget")};
  Option<std::string> rematBudget{
      owner, "remat-budget",
      llvm::cl::desc("With remat=budget: the peak to stay within (bytes)")};
  Option<std::optional<int64_t>> rematActivationBudget{
      owner, "remat-activation-budget",
      llvm::cl::desc("With remat=budget: the activation budget of the exact "
                     "schedule the planner chose for remat-budget (gacc "
                     "tune writes it), instead of searching again")};
  Option<std::string> precision{
      owner, "precision",
      llvm::cl::desc("Compute precision: f32, f16 or bf16 (f32 master "
                     "weights)")};
  Option<Count> ranks{
      owner, "ranks",
      llvm::cl::desc("ZeRO data-parallel ranks, each reading batch/N "
                     "examples")};
  Option<Count> zeroStage{owner, "zero-stage",
                          llvm::cl::desc("ZeRO stage: 0, 1, 2 or 3")};
  Option<std::string> lora{
      owner, "lora",
      llvm::cl::desc("Low-rank adapters (gacc-lora) on the parameters a "
                     "regular expression names: "
                     "rank=8,alpha=16,dropout=0.05,targets=REGEX")};
  Option<std::string> optimizer{
      owner, "optimizer",
      llvm::cl::desc("Replace the model's optimizer: sgd, adam, adamw, "
                     "adamw8bit or adafactor, with its learning rate and "
                     "weight decay")};
  Option<std::string> lrSchedule{
      owner, "lr-schedule",
      llvm::cl::desc("The learning-rate schedule: constant, or cosine, "
                     "linear or polynomial with warmup and decay, as "
                     "KIND,warmup=N,total=N,min_lr=X,power=X (total: the "
                     "steps the decay ends at)")};
  Option<std::optional<double>> lr{
      owner, "lr", llvm::cl::desc("The optimizer's base learning rate")};
  Option<std::optional<double>> weightDecay{
      owner, "weight-decay", llvm::cl::desc("The optimizer's weight decay")};
  Option<std::optional<double>> gradClip{
      owner, "grad-clip",
      llvm::cl::desc("Clip the global gradient norm to this")};
  Option<uint64_t> seed{
      owner, "seed",
      llvm::cl::desc("Seed of the parameters' initialization (read by the "
                     "entry points that initialize a trainer)"),
      llvm::cl::init(0)};

  /// Takes every option's value from `other`: the pipeline's options into
  /// its gacc-configure-step, and that pass's back for configureTrainStep.
  template <typename OtherOwner>
  void copyFrom(const TrainingOptionList<OtherOwner> &other) {
    step = other.step.getValue();
    target = other.target.getValue();
    batch = other.batch.getValue();
    microBatch = other.microBatch.getValue();
    accumulationSteps = other.accumulationSteps.getValue();
    memoryBudget = other.memoryBudget.getValue();
    remat = other.remat.getValue();
    rematBudget = other.rematBudget.getValue();
    rematActivationBudget = other.rematActivationBudget.getValue();
    precision = other.precision.getValue();
    ranks = other.ranks.getValue();
    zeroStage = other.zeroStage.getValue();
    lora = other.lora.getValue();
    optimizer = other.optimizer.getValue();
    lrSchedule = other.lrSchedule.getValue();
    lr = other.lr.getValue();
    weightDecay = other.weightDecay.getValue();
    gradClip = other.gradClip.getValue();
    seed = other.seed.getValue();
  }
};

/// The one configuration of a training step, for every entry point: the
/// `gacc` CLI, gacc-opt's pipelines, the JIT (compileTrainer), AOT
/// (compileArtifact), `gacc plan`, the C API and Python. Assign an option
/// to set it (`options.microBatch = 8;`), or parse a pipeline string
/// ("micro-batch=8 remat=sqrt precision=bf16").
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions>,
      public TrainingOptionList<::mlir::detail::PassOptions> {
  TrainingPipelineOptions()
      : TrainingOptionList(static_cast<::mlir::detail::PassOptions &>(*this)) {}
};

/// The training pipeline's first stage: autocast, ZeRO's per-rank model,
/// the micro-batch models and the gradient functions the step refers to
/// (what the memory planner analyses before rematerialization), with the
/// attention `options.target` lowers fused (gacc-fuse-attention).
void buildDifferentiationPipeline(OpPassManager &pm,
                                  const TrainingPipelineOptions &options);
/// The whole training stage: gacc-configure-step applies `options` to the
/// step (see ConfigureStep.h), then the transforms build it.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
/// The training stage after differentiation: rematerialization,
/// accumulation, the step's update (what the memory planner runs on a
/// differentiated module for each remat schedule it tries).
void buildStepPipeline(OpPassManager &pm,
                       const TrainingPipelineOptions &options);
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
  /// Cuda: the chip the PTX is for and CUDA's libdevice (findCudaFile).
  std::string chip = "sm_80";
  std::string libdevice;
  /// Cuda: CUDA's ptxas and fatbinary, if the toolkit has them: the step
  /// then carries machine code for sm_80 and sm_90 besides the PTX
  /// (gacc-cuda-assemble-kernels).
  std::string ptxas, fatbinary;
};

/// The target's name: "cpu", "cuda-emulated" or "cuda" (artifacts carry it,
/// the runtime's openTargetDevice opens its device).
StringRef targetName(StepTarget kind);
/// The target whose name is `name`, if one is.
std::optional<StepTarget> parseStepTarget(StringRef name);

/// The target `name` names: "cpu", "cuda" (with CUDA's libdevice, see
/// findCudaFile) or "cuda-emulated"; otherwise failure, with the reason in
/// `error`.
FailureOr<CodegenTarget> parseCodegenTarget(StringRef name,
                                            std::string &error);

/// gacc → fused linalg on tensors for `target`: on the CUDA targets, where
/// memory traffic rather than arithmetic bounds elementwise work, cheap
/// elementwise values are computed again in each user instead of stored
/// (gacc-fuse-elementwise's recompute-producers; on 2 CPU cores it saved
/// memory but slowed GPT-2-small width by 5%: bench/RESULTS.md).
void buildGaccToLinalgPipeline(OpPassManager &pm, StepTarget target);

struct GaccToLinalgOptions : public PassPipelineOptions<GaccToLinalgOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("cpu, cuda or cuda-emulated: what the fusion is for"),
      llvm::cl::init("cpu")};
};

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
/// The whole pipeline: training, to-linalg and codegen for `target`, what
/// `options.target` names (parseCodegenTarget).
LogicalResult buildCpuPipeline(OpPassManager &pm,
                               const TrainingPipelineOptions &options,
                               const CodegenTarget &target);

void registerPipelines();


} // namespace mlir::gacc

#endif // GACC_COMPILER_PIPELINES_H
