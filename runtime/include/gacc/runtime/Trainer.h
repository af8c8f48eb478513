//===- Trainer.h - run a compiled training step -------------------*- C++ -*-===//
//
// Owns the arenas of a compiled step (parameters, gradients and optimizer
// state; the batch; per-step scalars and outputs), initializes, loads and
// saves them (in the formats of Checkpoint.h), and calls the compiled code.
// The compiled code comes as plain function pointers: from the JIT or from an
// artifact, the trainer is the same.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_TRAINER_H
#define GACC_RUNTIME_TRAINER_H

#include "gacc/runtime/Checkpoint.h"
#include "gacc/runtime/Communicator.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/DeviceMemory.h"
#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Safetensors.h"

#include <functional>
#include <memory>
#include <optional>

namespace gacc::rt {

/// A memref<?xi8> descriptor as MLIR lays it out: allocated and aligned
/// pointers, offset, size, stride.
struct ArenaDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

/// An entry point compiled with MLIR's C interface
/// (`_mlir_ciface_gacc_step`): the descriptors of the state, batch, io and
/// workspace arenas.
using StepEntry = void (*)(ArenaDescriptor *state, ArenaDescriptor *batch,
                           ArenaDescriptor *io, ArenaDescriptor *workspace);

struct CompiledStep {
  StepEntry step = nullptr;
  StepEntry eval = nullptr;
  /// Keeps the code alive (the JIT engine or a loaded library).
  std::shared_ptr<void> owner;
};

struct StepResult {
  double loss = 0.0;
  double gradNorm = 0.0;
  double lr = 0.0;
  /// Peak bytes of the temporaries the compiled step allocated from the
  /// heap (those the memory plan did not place in the workspace), measured.
  int64_t heapBytes = 0;
  /// The step's measured high-water mark: every arena plus `heapBytes`.
  int64_t peakBytes = 0;
  /// With loss scaling: the scale this step used, and whether its gradients
  /// overflowed so that the update was skipped.
  double lossScale = 0.0;
  bool skipped = false;
  /// Elements this rank's collectives moved in the step, counted by the
  /// communicator as the ZeRO paper counts them (see Communicator.h).
  int64_t communicatedElements = 0;
};

class Trainer {
public:
  Trainer(ModelInfo model, CompiledStep compiled);
  ~Trainer();
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  const ModelInfo &model() const { return model_; }
  /// Bytes of the arenas the trainer holds (state, batch, io, workspace).
  int64_t arenaBytes() const;
  uint64_t stepCount() const { return step_; }
  /// The seed of this run: initialize's, or that of the checkpoint it
  /// resumed from (checkpoints save it, so that the data order a run drew
  /// from it goes on after a resume).
  uint64_t seed() const { return seed_; }
  /// Optimizer updates applied: steps minus those loss scaling skipped
  /// (Adam's bias correction counts these, as torch.optim's state["step"]).
  uint64_t optimizerStepCount() const { return optimizerStep_; }
  /// The loss scale the next step uses; 0 without loss scaling.
  double lossScale() const;

  /// A step compiled for several ranks runs on `communicator` (which must
  /// outlive the trainer and have that many ranks): this process is its
  /// rank. Without one, the trainer is the only rank.
  Status setCommunicator(Communicator &communicator);
  int rank() const { return communicator_ ? communicator_->rank() : 0; }
  /// Fresh parameters from their initializers mixed with `seed` (the same
  /// on every rank, each keeping its shard); zero optimizer state and step.
  /// An error, naming the planned bytes, if the arenas did not fit in
  /// memory when the trainer was made. Again with the same seed while
  /// nothing else wrote the state (openTrainer initializes, then so does
  /// `gacc run`), it has nothing to do.
  Status initialize(uint64_t seed);
  /// Overrides the base learning rate of the optimizer.
  void setLearningRate(double lr) { model_.optimizer.lr = lr; }
  /// Makes a decaying schedule end at step `total` (gacc run's last step);
  /// an error if its warmup is longer. A constant one has nothing to do.
  Status endScheduleAt(uint64_t total);

  /// Copies every parameter from `file` (each must be present, with its
  /// dtype and shape); other tensors in the file are ignored.
  Status loadParameters(const TensorFile &file, const std::string &origin);
  /// Parameters, optimizer state (with the loss scale) and the step
  /// counters, for --save/--resume. A checkpoint without a loss scale (from
  /// an f32 or bf16 run) restores with the initial scale. Under ZeRO the
  /// tensors are whole (consolidated: every rank gathers the shards, so
  /// every rank must call it), and restoring keeps this rank's shards:
  /// checkpoints move between any numbers of ranks and stages.
  TensorFile checkpoint() const;
  Status restore(const TensorFile &file, const std::string &origin);
  /// checkpoint() written to `path` (.safetensors, atomically; by rank 0
  /// only), and restore() from one.
  Status saveCheckpoint(const std::string &path) const;
  Status loadCheckpoint(const std::string &path);
  /// ZeRO checkpoints that never gather (docs/zero.md): `dir` gets one
  /// safetensors file per rank with the slots this rank holds (shards as
  /// they are) and an index.json that rank 0 writes once every rank's file
  /// is complete (every rank must call it). Loading needs the same ranks
  /// and stage; gacc::rt::consolidateCheckpoint turns one into a single
  /// checkpoint for any other.
  Status saveShardedCheckpoint(const std::string &dir) const;
  Status loadShardedCheckpoint(const std::string &dir);
  TensorFile parameters() const;
  /// The gradients of the last step (before clipping; unscaled, in f32
  /// for 16-bit ones kept scaled).
  TensorFile gradients() const;

  /// Copies a batch in; names, dtypes and shapes must match the inputs.
  Status setBatch(const Batch &batch);
  /// Copies one input in (dtype and shape must match); the others keep
  /// what they hold.
  Status setInput(const std::string &name, const Tensor &tensor);
  /// A parameter as users see it: whole, the f32 master weights of a 16-bit
  /// one (writing it also rounds its 16-bit weights).
  static TensorSlot parameterSlot(const Parameter &param);
  /// One parameter, by name; and overwriting it (dtype and shape must
  /// match).
  Status parameter(const std::string &name, Tensor &out) const;
  Status setParameter(const std::string &name, const Tensor &tensor);
  /// Runs the step on `device`'s memory from now on (a GPU's, or the
  /// emulated device of `--target cuda-emulated`): one allocation there
  /// holds the planned arenas; the host keeps state, batch and io in sync
  /// (DeviceMemory.h). An error, naming the planned bytes, if they do not
  /// fit.
  Status placeArenasOn(std::unique_ptr<DeviceMemory> device);
  /// One optimizer step on the current batch. A non-finite loss is an error
  /// and leaves the step counter unchanged, unless loss scaling skipped the
  /// step; a loss scale that backs off below 1 is an error (it collapsed:
  /// the gradients overflow however small the scale).
  Status step(StepResult &result);
  /// Faults in every page of the host arenas now (contents unchanged), so
  /// that a measurement can time the first step rather than discard it:
  /// what is left to fault in is the heap's temporaries (a few percent of
  /// GPT-2's first step). False where the kernel cannot populate (before
  /// Linux 5.14): the first step faults the arenas in as usual.
  bool prefault();
  /// The loss and the model's further outputs on the current batch.
  Status evaluate(double &loss, std::vector<Tensor> &outputs);

private:
  /// The seed a checkpoint's metadata names, if any.
  void restoreSeed(const std::map<std::string, std::string> &metadata);
  struct Arena;
  Tensor read(const Arena &arena, const TensorSlot &slot) const;
  void write(Arena &arena, const TensorSlot &slot, const Tensor &tensor);
  /// A state tensor whole: a shard is all-gathered from every rank.
  Tensor readWhole(const TensorSlot &slot) const;
  /// Writes `whole` into a state slot: for a shard, this rank's part.
  void writeWhole(const TensorSlot &slot, const Tensor &whole);
  /// `slot` with the whole tensor's shape (the slot itself if unsharded).
  static TensorSlot wholeSlot(const TensorSlot &slot);
  /// An error naming `origin` unless `tensor` has the dtype and shape of
  /// `slot`.
  static Status checkTensor(const std::string &origin, const TensorSlot &slot,
                            const Tensor &tensor);
  Tensor readParameter(const Parameter &param) const;
  void writeParameter(const Parameter &param, const Tensor &whole);
  /// The slots a checkpoint keeps: parameters, optimizer state, loss scale.
  std::vector<const TensorSlot *> checkpointedSlots() const;
  Status call(StepEntry entry);
  /// The host copy of state bytes [offset, offset + bytes), downloaded
  /// first if the device has newer ones.
  const std::byte *hostState(int64_t offset, int64_t bytes) const;
  /// The whole host copy of the state, up to date, for writing: the device
  /// gets it before the next call.
  std::byte *writableHostState();
  /// Keeps the first device error, which the next call returns.
  void noteDeviceStatus(Status status) const;
  /// The loss scale at its initial value, no good steps counted.
  void resetLossScale();

  ModelInfo model_;
  CompiledStep compiled_;
  std::unique_ptr<Arena> state_, batch_, io_, workspace_;
  /// Whether the host arenas were allocated (initialize() reports it).
  Status hostArenas_;
  /// Where the step runs when not on the host's arenas (DeviceMemory.h).
  std::unique_ptr<DeviceMemory> device_;
  void *deviceArena_ = nullptr;
  mutable bool stateNewerOnDevice_ = false;
  bool stateNewerOnHost_ = false;
  /// Whether anything but initialize() wrote the host state since it was
  /// mapped or last initialized; until then it is zero outside
  /// `initialized_`, the byte ranges initialize() wrote parameters to.
  bool stateWritten_ = false;
  std::vector<std::pair<int64_t, int64_t>> initialized_;
  /// The seed the state holds the initialization of, until something else
  /// writes it.
  std::optional<uint64_t> initializedWith_;
  mutable Status deviceStatus_;
  /// Set when a call's heap ran out of memory: the step stopped midway and
  /// its state is undefined, so every later call returns this.
  Status interruptedCall_;
  uint64_t step_ = 0, optimizerStep_ = 0;
  uint64_t seed_ = 0;
  /// The loss scale the last step used (its 16-bit f16 gradients are
  /// scaled by it).
  double lastStepScale_ = 1.0;
  Communicator *communicator_ = nullptr;
};

/// The host API's entry: a trainer for the artifact at `path` (see
/// Artifact.h; its target must be "cpu", or "cuda-emulated": then its
/// arenas are on the emulated device), with its code loaded and its
/// parameters initialized from `seed`.
Status openTrainer(const std::string &path, uint64_t seed,
                   std::unique_ptr<Trainer> &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_TRAINER_H
