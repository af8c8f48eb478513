//===- Describe.cpp - the runtime's description of a compiled step ----------===//

#include "compiler/Describe.h"
#include "compiler/ConfigureStep.h"
#include "compiler/Pipelines.h"
#include "passes/Passes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;
namespace rt = ::gacc::rt;

static rt::DType dtypeOf(Type type) {
  if (type.isF64())
    return rt::DType::F64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isInteger(64))
    return rt::DType::I64;
  if (type.isInteger(32))
    return rt::DType::I32;
  if (type.isInteger(1))
    return rt::DType::Bool;
  // 8-bit optimizer states: codes 0 to 255, as bitsandbytes' uint8.
  if (type.isInteger(8))
    return rt::DType::U8;
  return rt::DType::F32;
}

static rt::TensorSlot slotOf(const Slot &slot) {
  rt::TensorSlot described;
  described.name = slot.name;
  described.dtype = dtypeOf(slot.type.getElementType());
  described.shape.assign(slot.type.getShape().begin(),
                         slot.type.getShape().end());
  described.offset = slot.offset;
  if (slot.unsharded)
    described.unshardedShape.assign(slot.unsharded.getShape().begin(),
                                    slot.unsharded.getShape().end());
  return described;
}

/// The class count and ignore index of an integer input, from the ops that
/// read it: a cross-entropy's class dimension or an embedding's rows.
static void describeIds(func::FuncOp model, InputOp input, rt::Input &out) {
  model.walk([&](LoadOp load) {
    if (load.getName() != input.getSymName())
      return;
    for (Operation *user : load->getUsers()) {
      if (auto ce = dyn_cast<CrossEntropyOp>(user)) {
        out.classes = ce.getLogits().getType().getShape().back();
        if (std::optional<int64_t> ignore = ce.getIgnoredTarget())
          out.ignoreIndex = *ignore;
        out.meanOverCounted = ce.getReduction() == LossReduction::token_mean;
      } else if (auto embedding = dyn_cast<EmbeddingOp>(user)) {
        out.classes = embedding.getTable().getType().getDimSize(0);
      }
    }
  });
}

rt::ModelInfo mlir::gacc::describeStep(TrainStepOp step, const StepLayout &layout) {
  auto module = step->getParentOfType<ModuleOp>();
  rt::ModelInfo info;
  for (ParamOp param : module.getOps<ParamOp>()) {
    InitAttr init = param.getInit();
    rt::Parameter described;
    described.slot = slotOf(*layout.state.find(param.getSymName()));
    if (const Slot *master = layout.state.find(
            (kMasterPrefix + param.getSymName()).str()))
      described.master = slotOf(*master);
    described.init = static_cast<rt::InitKind>(init.getKind());
    described.scale = init.getScale().convertToDouble();
    described.seed = init.getSeed();
    described.frozen = param.getFrozen();
    if (auto lora = param->getAttrOfType<LoraAttr>(
            GaccDialect::LoraAttrHelper::getNameStr()))
      described.lora = rt::LoraAdapter{
          lora.getA().getValue().str(), lora.getB().getValue().str(),
          lora.getScale().convertToDouble(), lora.getTransposed()};
    info.params.push_back(described);
  }
  for (ParamOp param : getTrainableParams(module))
    info.grads.push_back(
        slotOf(*layout.state.find(("grad." + param.getSymName()).str())));
  for (const std::string &name : layout.optimizerState)
    info.optimizerState.push_back(slotOf(*layout.state.find(name)));
  for (InputOp input : module.getOps<InputOp>()) {
    rt::Input described{slotOf(*layout.batch.find(input.getSymName())),
                        static_cast<rt::InputKind>(input.getKind())};
    describeIds(step.getModelFunc(), input, described);
    info.inputs.push_back(described);
  }
  for (const std::string &scalar : layout.stepScalars) {
    info.hyper.push_back(slotOf(*layout.io.find(hyperSlotName(scalar))));
    info.hyper.back().name = scalar;
  }
  info.loss = slotOf(*layout.io.find("loss"));
  info.gradNorm = slotOf(*layout.io.find("grad_norm"));
  info.step = slotOf(*layout.io.find("step"));
  for (const Slot &slot : layout.io.slots)
    if (StringRef(slot.name).starts_with("output."))
      info.outputs.push_back(slotOf(slot));
  info.stateBytes = layout.state.bytes;
  info.batchBytes = layout.batch.bytes;
  info.ioBytes = layout.io.bytes;
  info.batchSize = step.getBatchSize();
  info.ranks = step.getEffectiveZero().getRanks();
  info.zeroStage = step.getEffectiveZero().getStage();
  if (const Slot *rank = layout.io.find(kRankSlot))
    info.rank = slotOf(*rank);

  info.optimizer.kind = layout.optimizer->getName().str();
  for (Hyperparameter hyper :
       layout.optimizer->getHyperparameters(step.getOptimizer())) {
    if (hyper.name == kLearningRate)
      info.optimizer.lr = hyper.value;
    else
      info.optimizer.hyperparameters[hyper.name.str()] = hyper.value;
  }
  Attribute schedule = step.getEffectiveSchedule();
  if (auto cosine = dyn_cast<WarmupCosineScheduleAttr>(schedule)) {
    info.schedule.kind = rt::ScheduleConfig::WarmupCosine;
    info.schedule.warmupSteps = cosine.getWarmupSteps();
    info.schedule.totalSteps = cosine.getTotalSteps();
    info.schedule.minLr = cosine.getMinLr().convertToDouble();
  } else if (auto polynomial =
                 dyn_cast<WarmupPolynomialScheduleAttr>(schedule)) {
    info.schedule.kind = rt::ScheduleConfig::WarmupPolynomial;
    info.schedule.warmupSteps = polynomial.getWarmupSteps();
    info.schedule.totalSteps = polynomial.getTotalSteps();
    info.schedule.minLr = polynomial.getMinLr().convertToDouble();
    info.schedule.power = polynomial.getPower().convertToDouble();
  }
  if (std::optional<APFloat> clip = step.getGradClipNorm())
    info.gradClipNorm = clip->convertToDouble();
  if (LossScaleAttr lossScale = step.getEffectiveLossScale())
    info.lossScaling = rt::LossScaling{
        slotOf(*layout.state.find(kLossScaleSlot)),
        slotOf(*layout.state.find(kGrowthTrackerSlot)),
        slotOf(*layout.io.find(kFoundInfSlot)),
        lossScale.getInit().convertToDouble()};
  return info;
}

void mlir::gacc::describeWorkspace(ModuleOp lowered, rt::ModelInfo &info) {
  for (StringRef entry : {"gacc_step", "gacc_eval"}) {
    Operation *func = SymbolTable::lookupSymbolIn(lowered, entry);
    if (!func)
      continue;
    auto bytes = [&](StringRef name) -> int64_t {
      auto attr = func->getAttrOfType<IntegerAttr>(name);
      return attr ? attr.getInt() : 0;
    };
    info.workspaceBytes =
        std::max(info.workspaceBytes, bytes(kWorkspaceBytesAttrName));
    info.unplannedBytes =
        std::max(info.unplannedBytes, bytes(kUnplannedBytesAttrName));
  }
}

FailureOr<::gacc::rt::ModelInfo>
mlir::gacc::lowerStep(ModuleOp module, const TrainingPipelineOptions &options,
                      function_ref<LogicalResult(PassManager &)> configure) {
  std::string error;
  FailureOr<CodegenTarget> target =
      parseCodegenTarget(options.target.getValue(), error);
  if (failed(target))
    return module.emitError(error);
  // Configured here, not by the pipeline's gacc-configure-step: the
  // runtime's description is of the configured step, which the pipeline
  // then consumes.
  TrainStepOp step = TrainStepOp::find(module, options.step.getValue());
  if (!step || failed(configureTrainStep(step, options)))
    return failure();
  FailureOr<StepLayout> layout = computeStepLayout(step);
  if (failed(layout))
    return failure();
  ::gacc::rt::ModelInfo model = describeStep(step, *layout);
  if (target->kind == StepTarget::Cuda && model.ranks > 1)
    return step.emitError("ZeRO on GPUs (")
           << model.ranks
           << " ranks) needs NCCL collectives in compiled steps, which are "
              "not built yet: compile for one rank, or for the CPU";
  PassManager pm(module.getContext());
  // Verifying after each of the pipeline's passes took a third of its time
  // at GPT-2 depth; the lit tests verify each pass, and the result is
  // verified here once. `configure` may turn it back on.
  pm.enableVerifier(false);
  if (configure && failed(configure(pm)))
    return failure();
  TrainingPipelineOptions configured; // nothing left to apply
  configured.step = options.step.getValue();
  // What the pipeline does for the target (which attention it fuses).
  configured.target = options.target.getValue();
  if (failed(buildCpuPipeline(pm, configured, *target)) ||
      failed(pm.run(module)) || failed(verify(module)))
    return failure();
  describeWorkspace(module, model);
  return model;
}

LogicalResult
mlir::gacc::loadStepPipelineDialects(MLIRContext *context,
                                     const TrainingPipelineOptions &options) {
  std::string error;
  FailureOr<CodegenTarget> target =
      parseCodegenTarget(options.target.getValue(), error);
  PassManager pm(context);
  if (failed(target) || failed(buildCpuPipeline(pm, options, *target)))
    return failure();
  DialectRegistry dependent;
  pm.getDependentDialects(dependent);
  context->appendDialectRegistry(dependent);
  context->loadAllAvailableDialects();
  return success();
}
