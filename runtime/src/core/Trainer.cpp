//===- Trainer.cpp - run a compiled training step ---------------------------===//

#include "gacc/runtime/Trainer.h"
#include "gacc/runtime/CpuMemory.h"
#include "gacc/runtime/Init.h"
#include "gacc/runtime/Optimizer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

namespace gacc::rt {

/// A zeroed, 64-byte aligned buffer and its MLIR memref<?xi8> descriptor.
struct Trainer::Arena {
  struct Descriptor {
    void *allocated;
    void *aligned;
    int64_t offset;
    int64_t size;
    int64_t stride;
  };

  explicit Arena(int64_t bytes) {
    size_t rounded = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
    data = static_cast<std::byte *>(std::aligned_alloc(64, rounded));
    std::memset(data, 0, rounded);
    descriptor = {data, data, 0, bytes, 1};
  }
  ~Arena() { std::free(data); }

  std::byte *data;
  Descriptor descriptor;
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
}

Trainer::~Trainer() = default;

int64_t Trainer::arenaBytes() const {
  return model_.stateBytes + model_.batchBytes + model_.ioBytes +
         model_.workspaceBytes;
}

void Trainer::initialize(uint64_t seed) {
  std::memset(state_->data, 0, model_.stateBytes);
  for (const Parameter &param : model_.params)
    initializeParameter(param, seed, state_->data + param.slot.offset);
  step_ = 0;
}

Tensor Trainer::read(const Arena &arena, const TensorSlot &slot) const {
  Tensor tensor(slot.dtype, slot.shape);
  std::memcpy(tensor.data(), arena.data + slot.offset, tensor.byteSize());
  return tensor;
}

void Trainer::write(Arena &arena, const TensorSlot &slot,
                    const Tensor &tensor) {
  std::memcpy(arena.data + slot.offset, tensor.data(), tensor.byteSize());
}

static Status checkTensor(const std::string &origin, const TensorSlot &slot,
                          const Tensor &tensor) {
  if (tensor.dtype() != slot.dtype || tensor.shape() != slot.shape)
    return Status::error(origin + ": '" + slot.name + "' is " +
                         std::string(dtypeName(tensor.dtype())) + " " +
                         shapeString(tensor.shape()) + ", expected " +
                         std::string(dtypeName(slot.dtype)) + " " +
                         shapeString(slot.shape));
  return Status();
}

Status Trainer::loadParameters(const TensorFile &file,
                               const std::string &origin) {
  // Check everything before changing anything.
  for (const Parameter &param : model_.params) {
    auto it = file.tensors.find(param.slot.name);
    if (it == file.tensors.end())
      return Status::error(origin + ": missing parameter '" + param.slot.name +
                           "'");
    if (Status status = checkTensor(origin, param.slot, it->second); !status)
      return status;
  }
  for (const Parameter &param : model_.params)
    write(*state_, param.slot, file.tensors.at(param.slot.name));
  return Status();
}

TensorFile Trainer::parameters() const {
  TensorFile file;
  for (const Parameter &param : model_.params)
    file.tensors.emplace(param.slot.name, read(*state_, param.slot));
  return file;
}

TensorFile Trainer::gradients() const {
  TensorFile file;
  for (size_t i = 0; i < model_.params.size(); ++i)
    file.tensors.emplace(model_.params[i].slot.name,
                         read(*state_, model_.grads[i]));
  return file;
}

TensorFile Trainer::checkpoint() const {
  TensorFile file = parameters();
  for (const TensorSlot &slot : model_.optimizerState)
    file.tensors.emplace(slot.name, read(*state_, slot));
  Tensor step(DType::I64, {});
  *step.dataAs<int64_t>() = static_cast<int64_t>(step_);
  file.tensors.emplace("step", std::move(step));
  file.metadata["format"] = "gacc-checkpoint";
  file.metadata["version"] = "1";
  return file;
}

Status Trainer::restore(const TensorFile &file, const std::string &origin) {
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != "gacc-checkpoint")
    return Status::error(origin + ": not a gacc checkpoint (no "
                                  "__metadata__ format=gacc-checkpoint)");
  auto step = file.tensors.find("step");
  if (step == file.tensors.end() || step->second.dtype() != DType::I64 ||
      step->second.numElements() != 1)
    return Status::error(origin + ": missing or malformed 'step'");
  for (const TensorSlot &slot : model_.optimizerState) {
    auto it = file.tensors.find(slot.name);
    if (it == file.tensors.end())
      return Status::error(origin + ": missing optimizer state '" + slot.name +
                           "'");
    if (Status status = checkTensor(origin, slot, it->second); !status)
      return status;
  }
  if (Status status = loadParameters(file, origin); !status)
    return status;
  for (const TensorSlot &slot : model_.optimizerState)
    write(*state_, slot, file.tensors.at(slot.name));
  step_ = static_cast<uint64_t>(*step->second.dataAs<int64_t>());
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

void Trainer::call(PackedEntry entry) {
  Arena::Descriptor *descriptors[] = {&state_->descriptor, &batch_->descriptor,
                                      &io_->descriptor, &workspace_->descriptor};
  void *args[] = {&descriptors[0], &descriptors[1], &descriptors[2],
                  &descriptors[3]};
  entry(args);
}

Status Trainer::step(StepResult &result) {
  double lr =
      scheduledLearningRate(model_.schedule, model_.optimizer.lr, step_);
  std::array<double, 4> hyper = optimizerScalars(model_.optimizer, lr, step_);
  for (size_t i = 0; i < hyper.size(); ++i)
    storeElement(model_.hyper.dtype, io_->data + model_.hyper.offset, i,
                 hyper[i]);
  int64_t counter = static_cast<int64_t>(step_);
  std::memcpy(io_->data + model_.step.offset, &counter, sizeof(counter));
  resetCpuMemoryPeak();
  CpuMemoryStats before = cpuMemoryStats();
  call(compiled_.step);
  result.heapBytes = cpuMemoryStats().peakBytes - before.liveBytes;
  result.peakBytes = arenaBytes() + result.heapBytes;
  result.loss = loadElement(model_.loss.dtype, io_->data + model_.loss.offset, 0);
  result.gradNorm =
      loadElement(model_.gradNorm.dtype, io_->data + model_.gradNorm.offset, 0);
  result.lr = lr;
  if (!std::isfinite(result.loss))
    return Status::error("the loss is " + std::to_string(result.loss) +
                         " at step " + std::to_string(step_ + 1) +
                         ": training diverged");
  ++step_;
  return Status();
}

Status Trainer::evaluate(double &loss, std::vector<Tensor> &outputs) {
  call(compiled_.eval);
  loss = loadElement(model_.loss.dtype, io_->data + model_.loss.offset, 0);
  outputs.clear();
  for (const TensorSlot &slot : model_.outputs)
    outputs.push_back(read(*io_, slot));
  return Status();
}

const Input *ModelInfo::findInput(const std::string &name) const {
  for (const Input &input : inputs)
    if (input.slot.name == name)
      return &input;
  return nullptr;
}

} // namespace gacc::rt
