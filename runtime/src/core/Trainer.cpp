//===- Trainer.cpp - run a compiled training step ---------------------------===//
//
// The arenas, their copies on a device, and the calls into the compiled step.
// Saving and loading them in files is Checkpoint.cpp's.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Trainer.h"
#include "gacc/runtime/Collectives.h"
#include "gacc/runtime/CpuMemory.h"
#include "gacc/runtime/Init.h"
#include "gacc/runtime/Optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <sys/mman.h>

namespace gacc::rt {

/// Bytes [first, second) of an arena.
using ByteRange = std::pair<int64_t, int64_t>;

/// A zeroed, page-aligned buffer (null if it does not fit) and its MLIR
/// memref<?xi8> descriptor. Its pages come from the system zeroed, when
/// first touched: nothing is written before the step needs it.
struct Trainer::Arena {
  explicit Arena(int64_t bytes)
      : mapped(static_cast<size_t>(std::max<int64_t>(bytes, 1))) {
    void *pages = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // Not MADV_HUGEPAGE: where the kernel compacts memory to find huge pages
    // on a fault (THP defrag "madvise", the default), GPT-2-small's first
    // step took 8-10 s longer than with 4 KiB pages.
    data = pages == MAP_FAILED ? nullptr : static_cast<std::byte *>(pages);
    descriptor = {data, data, 0, bytes, 1};
  }
  ~Arena() {
    if (data)
      ::munmap(data, mapped);
  }

  size_t mapped;
  std::byte *data;
  ArenaDescriptor descriptor;
  /// The arena's copy in device memory, when the trainer has a device.
  ArenaDescriptor deviceDescriptor{};
  std::byte *device() const {
    return static_cast<std::byte *>(deviceDescriptor.aligned);
  }
};

Trainer::Trainer(ModelInfo model, CompiledStep compiled)
    : model_(std::move(model)), compiled_(std::move(compiled)),
      state_(std::make_unique<Arena>(model_.stateBytes)),
      batch_(std::make_unique<Arena>(model_.batchBytes)),
      io_(std::make_unique<Arena>(model_.ioBytes)),
      workspace_(std::make_unique<Arena>(model_.workspaceBytes)) {
  // What the memory plan leaves to the heap is malloc'ed and freed every
  // step. Keep those blocks in the heap instead of mmap/munmap-ing them
  // each time, which costs a page fault per page per step.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (!state_->data || !batch_->data || !io_->data || !workspace_->data) {
    hostArenas_ = Status::error(
        "the step's arenas do not fit in memory: the plan needs " +
        std::to_string(arenaBytes()) + " bytes (state " +
        std::to_string(model_.stateBytes) + ", batch " +
        std::to_string(model_.batchBytes) + ", io " +
        std::to_string(model_.ioBytes) + ", workspace " +
        std::to_string(model_.workspaceBytes) + ")");
  }
}

// Linux 5.14's; older C library headers lack it, older kernels refuse it.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

bool Trainer::prefault() {
  bool populated = true;
  for (Arena *arena : {state_.get(), batch_.get(), io_.get(), workspace_.get()})
    if (arena->data)
      populated &=
          ::madvise(arena->data, arena->mapped, MADV_POPULATE_WRITE) == 0;
  return populated;
}

Trainer::~Trainer() {
  if (device_)
    device_->release(deviceArena_);
}

Status Trainer::placeArenasOn(std::unique_ptr<DeviceMemory> device) {
  if (!hostArenas_)
    return hostArenas_;
  if (device_)
    return Status::error("the arenas are on a device already");
  // One device allocation holds the four arenas, each 256-byte aligned.
  std::vector<std::pair<Arena *, int64_t>> arenas = {
      {state_.get(), model_.stateBytes},
      {batch_.get(), model_.batchBytes},
      {io_.get(), model_.ioBytes},
      {workspace_.get(), model_.workspaceBytes}};
  auto aligned = [](int64_t bytes) { return (bytes + 255) / 256 * 256; };
  int64_t total = 0;
  for (auto [arena, bytes] : arenas)
    total += aligned(bytes);
  if (Status status = device->allocate(total, deviceArena_); !status)
    return Status::error("the step's arenas (" + std::to_string(total) +
                         " bytes planned) do not fit on the device: " +
                         status.message());
  auto *base = static_cast<std::byte *>(deviceArena_);
  for (auto [arena, bytes] : arenas) {
    arena->deviceDescriptor = {base, base, 0, bytes, 1};
    base += aligned(bytes);
  }
  device_ = std::move(device);
  // What the host initialized goes up before the first step.
  stateNewerOnHost_ = true;
  return Status();
}

void Trainer::noteDeviceStatus(Status status) const {
  if (!status && deviceStatus_)
    deviceStatus_ = Status::error("device: " + status.message());
}

const std::byte *Trainer::hostState(int64_t offset, int64_t bytes) const {
  if (stateNewerOnDevice_) {
    noteDeviceStatus(device_->download(
        state_->data + offset, state_->device() + offset, bytes));
    if (offset == 0 && bytes == model_.stateBytes)
      stateNewerOnDevice_ = false;
  }
  return state_->data + offset;
}

std::byte *Trainer::writableHostState() {
  hostState(0, model_.stateBytes);
  stateNewerOnHost_ = device_ != nullptr;
  stateWritten_ = true;
  initializedWith_.reset();
  return state_->data;
}

int64_t Trainer::arenaBytes() const {
  return model_.stateBytes + model_.batchBytes + model_.ioBytes +
         model_.workspaceBytes;
}

Status Trainer::setCommunicator(Communicator &communicator) {
  if (communicator.size() != model_.ranks)
    return Status::error(
        "the step is compiled for " + std::to_string(model_.ranks) +
        " rank" + (model_.ranks == 1 ? "" : "s") + ", but the job has " +
        std::to_string(communicator.size()) +
        (model_.ranks == 1 ? " (compile it with --ranks)"
                           : " (launch it with mpirun -np " +
                                 std::to_string(model_.ranks) + ")"));
  communicator_ = &communicator;
  // This rank keeps other shards than the one initialize() cut before.
  if (model_.ranks > 1)
    initializedWith_.reset();
  if (model_.rank) {
    int64_t rank = communicator.rank();
    std::memcpy(io_->data + model_.rank->offset, &rank, sizeof(rank));
  }
  return Status();
}

TensorSlot Trainer::wholeSlot(const TensorSlot &slot) {
  TensorSlot whole = slot;
  if (slot.sharded()) {
    whole.shape = slot.unshardedShape;
    whole.unshardedShape.clear();
  }
  return whole;
}

Tensor Trainer::readWhole(const TensorSlot &slot) const {
  if (!slot.sharded())
    return read(*state_, slot);
  Tensor whole(slot.dtype, slot.unshardedShape);
  int64_t shard = slot.shape[0];
  size_t width = byteWidth(slot.dtype);
  std::vector<std::byte> gathered(shard * model_.ranks * width);
  Status status = communicator_->allGather(
      hostState(slot.offset, shard * width), gathered.data(), shard,
      slot.dtype);
  if (!status)
    communicator_->abort("gathering '" + slot.name + "': " + status.message());
  std::memcpy(whole.data(), gathered.data(), whole.byteSize());
  return whole;
}

void Trainer::writeWhole(const TensorSlot &slot, const Tensor &whole) {
  if (!slot.sharded())
    return write(*state_, slot, whole);
  // Elements [r·s, (r+1)·s) of the flat tensor; past its end, padding.
  size_t width = byteWidth(slot.dtype);
  int64_t shard = slot.shape[0], begin = rank() * shard;
  int64_t count = std::clamp<int64_t>(whole.numElements() - begin, 0, shard);
  std::byte *target = writableHostState() + slot.offset;
  std::memset(target, 0, shard * width);
  if (count > 0)
    std::memcpy(target, static_cast<const std::byte *>(whole.data()) +
                            begin * width,
                count * width);
}

/// `tensor` in `dtype` (rounded to nearest even for 16-bit floats).
static Tensor converted(const Tensor &tensor, DType dtype) {
  if (tensor.dtype() == dtype)
    return tensor;
  Tensor out(dtype, tensor.shape());
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    storeElement(dtype, static_cast<std::byte *>(out.data()), i,
                 loadElement(tensor.dtype(),
                             static_cast<const std::byte *>(tensor.data()), i));
  return out;
}

Tensor Trainer::readParameter(const Parameter &param) const {
  return readWhole(param.master ? *param.master : param.slot);
}

void Trainer::writeParameter(const Parameter &param, const Tensor &whole) {
  if (param.master)
    writeWhole(*param.master, whole);
  writeWhole(param.slot, converted(whole, param.slot.dtype));
}

/// Clears the bytes of `dirty` outside `kept` (offsets from `base`; both
/// sorted, `kept` disjoint).
static void clearOutside(std::byte *base, const std::vector<ByteRange> &dirty,
                         const std::vector<ByteRange> &kept) {
  size_t k = 0;
  for (auto [begin, end] : dirty) {
    for (int64_t at = begin; at < end;) {
      while (k < kept.size() && kept[k].second <= at)
        ++k;
      int64_t stop = k < kept.size() ? std::min(end, kept[k].first) : end;
      if (stop > at)
        std::memset(base + at, 0, stop - at);
      if (stop == end)
        break;
      at = kept[k].second;
    }
  }
}

Status Trainer::endScheduleAt(uint64_t total) {
  ScheduleConfig &schedule = model_.schedule;
  if (schedule.kind == ScheduleConfig::Constant)
    return Status();
  if (total == 0 || total < schedule.warmupSteps)
    return Status::error(
        "the schedule's warmup of " + std::to_string(schedule.warmupSteps) +
        " steps does not fit in a run of " + std::to_string(total));
  schedule.totalSteps = total;
  return Status();
}

Status Trainer::initialize(uint64_t seed) {
  if (!hostArenas_)
    return hostArenas_;
  if (initializedWith_ == seed)
    return Status();
  seed_ = seed;
  bool written = stateWritten_;
  std::byte *state = writableHostState();
  // Each parameter's elements that this rank keeps: the whole tensor, or a
  // shard of it (elements [r·s, (r+1)·s) of the flat tensor, past its end
  // zero padding), written where they lie. A 16-bit weight is its f32
  // master's rounding, written in the same pass.
  std::vector<InitRange> ranges;
  auto rangeOf = [&](const Parameter &param, const TensorSlot &slot) {
    InitRange range;
    range.param = param;
    range.param.slot = wholeSlot(slot);
    range.data = state + slot.offset;
    int64_t count = elementCount(range.param.slot.shape).value_or(0);
    range.end = count;
    if (slot.sharded()) {
      int64_t shard = slot.shape[0];
      range.begin = std::min(count, rank() * shard);
      range.end = std::min(count, range.begin + shard);
    }
    return range;
  };
  for (const Parameter &param : model_.params) {
    if (param.init == InitKind::Zeros)
      continue; // zero already, or cleared below
    InitRange range = rangeOf(param, param.master ? *param.master : param.slot);
    if (param.master) {
      InitRange weight = rangeOf(param, param.slot);
      if (weight.begin == range.begin && weight.end == range.end) {
        range.copy = weight.data;
        range.copyType = weight.param.slot.dtype;
      } else {
        ranges.push_back(weight);
      }
    }
    ranges.push_back(range);
  }
  std::vector<ByteRange> kept;
  for (const InitRange &range : ranges) {
    int64_t count = range.end - range.begin;
    int64_t offset = range.data - state;
    kept.push_back({offset, offset + count * int64_t(byteWidth(
                                                  range.param.slot.dtype))});
    if (range.copy) {
      offset = range.copy - state;
      kept.push_back(
          {offset, offset + count * int64_t(byteWidth(range.copyType))});
    }
  }
  std::sort(kept.begin(), kept.end());
  // The state fresh from the system is zero: only what a step or an earlier
  // initialization wrote is cleared, outside the parameters written now.
  if (written)
    clearOutside(state, {{0, model_.stateBytes}}, kept);
  else
    clearOutside(state, initialized_, kept);
  initializeParameters(ranges, seed);
  resetLossScale();
  step_ = optimizerStep_ = 0;
  stateWritten_ = false;
  initialized_ = std::move(kept);
  initializedWith_ = seed;
  return Status();
}

void Trainer::resetLossScale() {
  if (!model_.lossScaling)
    return;
  const LossScaling &scaling = *model_.lossScaling;
  std::byte *state = writableHostState();
  storeElement(scaling.scale.dtype, state + scaling.scale.offset, 0,
               scaling.initScale);
  storeElement(scaling.growthTracker.dtype,
               state + scaling.growthTracker.offset, 0, 0.0);
}

double Trainer::lossScale() const {
  if (!model_.lossScaling)
    return 0.0;
  const TensorSlot &slot = model_.lossScaling->scale;
  return loadElement(slot.dtype,
                     hostState(slot.offset, byteWidth(slot.dtype)), 0);
}

Tensor Trainer::read(const Arena &arena, const TensorSlot &slot) const {
  Tensor tensor(slot.dtype, slot.shape);
  const std::byte *source = &arena == state_.get()
                                ? hostState(slot.offset, tensor.byteSize())
                                : arena.data + slot.offset;
  std::memcpy(tensor.data(), source, tensor.byteSize());
  return tensor;
}

void Trainer::write(Arena &arena, const TensorSlot &slot,
                    const Tensor &tensor) {
  std::byte *base = &arena == state_.get() ? writableHostState() : arena.data;
  std::memcpy(base + slot.offset, tensor.data(), tensor.byteSize());
}

Status Trainer::checkTensor(const std::string &origin, const TensorSlot &slot,
                            const Tensor &tensor) {
  if (tensor.dtype() != slot.dtype || tensor.shape() != slot.shape)
    return Status::error(origin + ": '" + slot.name + "' is " +
                         std::string(dtypeName(tensor.dtype())) + " " +
                         shapeString(tensor.shape()) + ", expected " +
                         std::string(dtypeName(slot.dtype)) + " " +
                         shapeString(slot.shape));
  return Status();
}

TensorSlot Trainer::parameterSlot(const Parameter &param) {
  TensorSlot slot = wholeSlot(param.master ? *param.master : param.slot);
  slot.name = param.slot.name;
  return slot;
}

TensorFile Trainer::gradients() const {
  TensorFile file;
  for (const TensorSlot &slot : model_.grads) {
    Tensor grad = readWhole(slot);
    // With loss scaling a 16-bit gradient slot keeps the scaled gradient
    // (as DeepSpeed's fp16 gradients): unscaled here, in f32.
    if (model_.lossScaling && byteWidth(slot.dtype) == 2) {
      grad = converted(grad, DType::F32);
      for (int64_t e = 0; e < grad.numElements(); ++e)
        grad.dataAs<float>()[e] =
            static_cast<float>(grad.dataAs<float>()[e] / lastStepScale_);
    }
    // "grad.<name>": the gradient of parameter <name> (frozen ones have
    // none).
    file.tensors.emplace(slot.name.substr(std::string("grad.").size()),
                         std::move(grad));
  }
  return file;
}

Status Trainer::setInput(const std::string &name, const Tensor &tensor) {
  const Input *input = model_.findInput(name);
  if (!input)
    return Status::error("no input '" + name + "'");
  if (Status status = checkTensor("input", input->slot, tensor); !status)
    return status;
  write(*batch_, input->slot, tensor);
  return Status();
}

Status Trainer::parameter(const std::string &name, Tensor &out) const {
  const Parameter *param = model_.findParameter(name);
  if (!param)
    return Status::error("no parameter '" + name + "'");
  out = readParameter(*param);
  return Status();
}

Status Trainer::setParameter(const std::string &name, const Tensor &tensor) {
  const Parameter *param = model_.findParameter(name);
  if (!param)
    return Status::error("no parameter '" + name + "'");
  if (Status status = checkTensor("parameter", parameterSlot(*param), tensor);
      !status)
    return status;
  writeParameter(*param, tensor);
  return Status();
}

Status Trainer::setBatch(const Batch &batch) {
  for (const Input &input : model_.inputs) {
    auto it = batch.find(input.slot.name);
    if (it == batch.end())
      return Status::error("batch: missing input '" + input.slot.name + "'");
    if (Status status = checkTensor("batch", input.slot, it->second); !status)
      return status;
  }
  for (const Input &input : model_.inputs)
    write(*batch_, input.slot, batch.at(input.slot.name));
  return Status();
}

Status Trainer::call(StepEntry entry) {
  if (!interruptedCall_)
    return interruptedCall_;
  // On a device, the batch and io arenas go up and io comes back every
  // call; the state goes up only after the host wrote it.
  if (device_) {
    if (stateNewerOnHost_) {
      noteDeviceStatus(
          device_->upload(state_->device(), state_->data, model_.stateBytes));
      stateNewerOnHost_ = false;
    }
    noteDeviceStatus(
        device_->upload(batch_->device(), batch_->data, model_.batchBytes));
    noteDeviceStatus(device_->upload(io_->device(), io_->data, model_.ioBytes));
    if (!deviceStatus_)
      return deviceStatus_;
  }
  auto arena = [&](Arena &a) {
    return device_ ? &a.deviceDescriptor : &a.descriptor;
  };
  struct Call {
    StepEntry entry;
    ArenaDescriptor *state, *batch, *io, *workspace;
  } call{entry, arena(*state_), arena(*batch_), arena(*io_),
         arena(*workspace_)};
  // The step writes the state (on the host or the device).
  stateWritten_ = true;
  initializedWith_.reset();
  setStepCommunicator(communicator_);
  size_t failedBytes = 0;
  bool finished = runCatchingHeapExhaustion(
      [](void *context) {
        auto *c = static_cast<Call *>(context);
        c->entry(c->state, c->batch, c->io, c->workspace);
      },
      &call, failedBytes);
  setStepCommunicator(nullptr);
  if (!finished)
    return interruptedCall_ = Status::error(
               "out of memory in the step: a temporary of " +
               std::to_string(failedBytes) +
               " bytes that the memory plan leaves to the heap could not be "
               "allocated (the plan: " + std::to_string(arenaBytes()) +
               " bytes of arenas, up to " +
               std::to_string(model_.unplannedBytes) +
               " on the heap); the step stopped midway and this trainer's "
               "state is undefined: open it again (from a checkpoint) to go "
               "on");
  if (device_) {
    stateNewerOnDevice_ = true;
    noteDeviceStatus(
        device_->download(io_->data, io_->device(), model_.ioBytes));
  }
  return deviceStatus_;
}

Status Trainer::step(StepResult &result) {
  if (!hostArenas_)
    return hostArenas_;
  if (model_.ranks > 1 && !communicator_)
    return Status::error("the step is compiled for " +
                         std::to_string(model_.ranks) +
                         " ranks: run it in an MPI job of as many (mpirun -np " +
                         std::to_string(model_.ranks) + ")");
  double lr =
      scheduledLearningRate(model_.schedule, model_.optimizer.lr, step_);
  if (Status status =
          writeOptimizerScalars(model_, lr, optimizerStep_, io_->data);
      !status)
    return status;
  int64_t counter = static_cast<int64_t>(step_);
  std::memcpy(io_->data + model_.step.offset, &counter, sizeof(counter));
  result.lossScale = lastStepScale_ = lossScale();
  resetCpuMemoryPeak();
  CpuMemoryStats before = cpuMemoryStats();
  int64_t volume = communicator_ ? communicator_->volume() : 0;
  if (Status status = call(compiled_.step); !status)
    return status;
  result.communicatedElements =
      communicator_ ? communicator_->volume() - volume : 0;
  result.heapBytes = cpuMemoryStats().peakBytes - before.liveBytes;
  result.peakBytes = arenaBytes() + result.heapBytes;
  auto output = [&](const TensorSlot &slot) {
    return loadElement(slot.dtype, io_->data + slot.offset, 0);
  };
  result.loss = output(model_.loss);
  result.gradNorm = output(model_.gradNorm);
  result.lr = lr;
  result.skipped =
      model_.lossScaling && output(model_.lossScaling->foundInf) != 0.0;
  if (!std::isfinite(result.loss) && !result.skipped)
    return Status::error("the loss is " + std::to_string(result.loss) +
                         " at step " + std::to_string(step_ + 1) +
                         ": training diverged");
  if (result.skipped && lossScale() < 1.0)
    return Status::error(
        "the loss scale collapsed at step " + std::to_string(step_ + 1) +
        ": the gradients overflow even at scale " +
        std::to_string(result.lossScale) + " (loss " +
        std::to_string(result.loss) +
        "); the model does not train in f16: use bf16, a lower learning "
        "rate or gradient clipping");
  ++step_;
  if (!result.skipped)
    ++optimizerStep_;
  return Status();
}

Status Trainer::evaluate(double &loss, std::vector<Tensor> &outputs) {
  if (!hostArenas_)
    return hostArenas_;
  if (model_.ranks > 1 && !communicator_)
    return Status::error("the step is compiled for " +
                         std::to_string(model_.ranks) + " ranks");
  if (Status status = call(compiled_.eval); !status)
    return status;
  loss = loadElement(model_.loss.dtype, io_->data + model_.loss.offset, 0);
  outputs.clear();
  for (const TensorSlot &slot : model_.outputs)
    outputs.push_back(read(*io_, slot));
  return Status();
}

const Parameter *ModelInfo::findParameter(const std::string &name) const {
  for (const Parameter &param : params)
    if (param.slot.name == name)
      return &param;
  return nullptr;
}

ModelInfo ModelInfo::globalBatch() const {
  ModelInfo global = *this;
  for (Input &input : global.inputs)
    input.slot.shape[0] *= ranks;
  global.ranks = 1;
  return global;
}

const Input *ModelInfo::findInput(const std::string &name) const {
  for (const Input &input : inputs)
    if (input.slot.name == name)
      return &input;
  return nullptr;
}

} // namespace gacc::rt
