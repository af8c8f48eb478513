//===- ModelInfo.h - what the runtime knows of a compiled step --*- C++ -*-===//
//
// Everything the runtime needs to run a compiled training step without the
// compiler: where each tensor lives in the arenas (state, batch, io; the
// workspace holds the step's temporaries),
// how parameters are initialized, and the optimizer, schedule and batch
// configuration. The compiler fills it in from the IR.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_MODELINFO_H
#define GACC_RUNTIME_MODELINFO_H

#include "gacc/runtime/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gacc::rt {

/// A tensor at a byte offset of an arena.
struct TensorSlot {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  /// For this rank's ZeRO shard of a tensor: the whole tensor's shape (the
  /// slot holds elements [r·s, (r+1)·s) of it flattened and zero-padded to
  /// ranks·s, s = shape[0]); empty otherwise.
  std::vector<int64_t> unshardedShape;
  bool sharded() const { return !unshardedShape.empty(); }
  int64_t bytes() const {
    return elementCount(shape).value_or(0) * static_cast<int64_t>(byteWidth(dtype));
  }
};

enum class InitKind {
  Zeros, Ones, Normal, Uniform, XavierUniform, XavierNormal, KaimingUniform,
  KaimingNormal
};

/// The low-rank adapter of a frozen weight W (gacc-lora): the model reads
/// `W + scale·B·A`, B [out, r] and A [r, in] the parameters named `b` and
/// `a`, transposed when W is stored [in, out].
struct LoraAdapter {
  std::string a, b;
  double scale = 1.0;
  bool transposed = false;
};

struct Parameter {
  /// What the model reads: in mixed precision, possibly a 16-bit copy of
  /// `master`.
  TensorSlot slot;
  InitKind init = InitKind::Zeros;
  double scale = 1.0;
  uint64_t seed = 0;
  /// The f32 master weights the optimizer updates when `slot` holds 16 bits
  /// (state; the value checkpoints and parameter accessors use).
  std::optional<TensorSlot> master;
  /// State the optimizer never updates (batch norm's running statistics):
  /// no gradient, no optimizer state; the step itself may write it.
  bool frozen = false;
  /// A frozen weight's adapter (gacc-lora).
  std::optional<LoraAdapter> lora;
};

enum class InputKind { Features, Labels, Tokens, Mask };

struct Input {
  TensorSlot slot;
  InputKind kind = InputKind::Features;
  /// For labels and tokens: the number of classes (ids lie in [0, classes)),
  /// from the loss or embedding that reads them; 0 if unknown.
  int64_t classes = 0;
  /// Labels equal to this are ignored by the loss (and may appear in data).
  std::optional<int64_t> ignoreIndex;
  /// For labels: the loss is the mean over the labels it counts (a
  /// token_mean cross-entropy), not over the batch's rows.
  bool meanOverCounted = false;
};

/// The optimizer, as the compiler's optimizer classes (passes/optimizers/)
/// describe it.
struct OptimizerConfig {
  /// Its name: "sgd", "adamw".
  std::string kind;
  /// The base learning rate, which a schedule scales.
  double lr = 0.0;
  /// The others by torch.optim's names ("momentum", "beta1", ...; booleans
  /// as 0 or 1).
  std::map<std::string, double> hyperparameters;
};

/// The learning-rate schedule (#gacc.constant_lr, #gacc.warmup_cosine,
/// #gacc.warmup_polynomial; scheduledLearningRate computes it).
struct ScheduleConfig {
  enum Kind { Constant, WarmupCosine, WarmupPolynomial } kind = Constant;
  uint64_t warmupSteps = 0, totalSteps = 0;
  double minLr = 0.0;
  /// The polynomial decay's exponent (1: linear).
  double power = 1.0;
};

/// Dynamic loss scaling (GradScaler): the compiled step scales the loss,
/// unscales the gradients, skips the update when they overflow and updates
/// the scale; the runtime initializes and checkpoints the scale and watches
/// it collapse.
struct LossScaling {
  /// The scale and the count of good steps since it last changed (state).
  TensorSlot scale, growthTracker;
  /// 1 when the step found an infinity or NaN and was skipped (io).
  TensorSlot foundInf;
  double initScale = 65536.0;
};

struct ModelInfo {
  std::vector<Parameter> params;
  /// Gradient slots of the parameters that are not frozen, in parameter
  /// order ("grad.<name>").
  std::vector<TensorSlot> grads;
  /// Optimizer state slots ("exp_avg.<name>", ...).
  std::vector<TensorSlot> optimizerState;
  std::vector<Input> inputs;
  /// The optimizer's per-step scalars (io), one slot each, named by the
  /// scalar ("lr", "step_size", ...): the runtime computes them each step
  /// (Optimizer.h).
  std::vector<TensorSlot> hyper;
  TensorSlot loss, gradNorm;
  /// The step counter (i64) the compiled step reads, e.g. to seed dropout.
  TensorSlot step;
  /// The model's further results ("output.1", ...), e.g. logits.
  std::vector<TensorSlot> outputs;
  int64_t stateBytes = 0, batchBytes = 0, ioBytes = 0;
  /// The workspace arena: the step's temporaries (activations, gradients in
  /// flight) at the offsets of the compiler's static memory plan.
  int64_t workspaceBytes = 0;
  /// The plan's estimate of the temporaries it left to the heap.
  int64_t unplannedBytes = 0;
  /// The global batch; each of `ranks` ranks holds batchSize / ranks
  /// examples in its inputs.
  int64_t batchSize = 0;
  /// ZeRO data parallelism: the ranks the step was compiled for, its stage,
  /// and on several ranks the io slot of this process's rank (i64).
  int64_t ranks = 1;
  int64_t zeroStage = 0;
  std::optional<TensorSlot> rank;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  std::optional<double> gradClipNorm;
  std::optional<LossScaling> lossScaling;

  /// This model with inputs of the whole global batch: what a dataset
  /// assembles before each rank keeps its slice.
  ModelInfo globalBatch() const;
  const Input *findInput(const std::string &name) const;
  const Parameter *findParameter(const std::string &name) const;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_MODELINFO_H
