//===- Checkpoint.cpp - a trainer's state on disk, and back ---------------===//
//
// The formats a trainer saves and loads: parameter-only files (--init), whole
// checkpoints in one safetensors file, ZeRO checkpoints sharded into one file
// per rank with an index, and the consolidation of those into a whole one.
// Checkpoint.h describes the files.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Checkpoint.h"
#include "LoraJson.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Trainer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

namespace gacc::rt {

/// The "format" metadata of a whole checkpoint and of a rank's file (and the
/// index) of a sharded one.
static constexpr const char *kCheckpointFormat = "gacc-checkpoint";
static constexpr const char *kShardedFormat = "gacc-sharded-checkpoint";

/// The state a checkpoint keeps besides the parameters.
static std::vector<const TensorSlot *>
checkpointedState(const ModelInfo &model) {
  std::vector<const TensorSlot *> slots;
  for (const TensorSlot &slot : model.optimizerState)
    slots.push_back(&slot);
  if (model.lossScaling) {
    slots.push_back(&model.lossScaling->scale);
    slots.push_back(&model.lossScaling->growthTracker);
  }
  return slots;
}

/// What a checkpoint says of its model, for `gacc export` (Checkpoint.h):
/// the parameters' names and the LoRA adapters.
static std::map<std::string, std::string>
modelMetadata(const ModelInfo &model) {
  nlohmann::json names = nlohmann::json::array(), adapters;
  for (const Parameter &param : model.params)
    names.push_back(param.slot.name);
  for (const auto &[name, adapter] : loraAdapters(model))
    adapters[name] = loraToJson(adapter);
  std::map<std::string, std::string> metadata{{"parameters", names.dump()}};
  if (!adapters.is_null())
    metadata["lora"] = adapters.dump();
  return metadata;
}

/// A step counter as checkpoints keep it: an i64 scalar.
static Tensor counterTensor(uint64_t value) {
  Tensor counter(DType::I64, {});
  *counter.dataAs<int64_t>() = static_cast<int64_t>(value);
  return counter;
}

/// The step counter `name` in `file`, or null if it is missing or not a
/// non-negative i64 scalar.
static const int64_t *readCounter(const TensorFile &file, const char *name) {
  auto it = file.tensors.find(name);
  if (it == file.tensors.end() || it->second.dtype() != DType::I64 ||
      it->second.numElements() != 1 || *it->second.dataAs<int64_t>() < 0)
    return nullptr;
  return it->second.dataAs<int64_t>();
}

Status Trainer::loadParameters(const TensorFile &file,
                               const std::string &origin) {
  // Check everything before changing anything.
  for (const Parameter &param : model_.params) {
    auto it = file.tensors.find(param.slot.name);
    if (it == file.tensors.end())
      return Status::error(origin + ": missing parameter '" + param.slot.name +
                           "'");
    if (Status status = checkTensor(origin, parameterSlot(param), it->second);
        !status)
      return status;
  }
  for (const Parameter &param : model_.params)
    writeParameter(param, file.tensors.at(param.slot.name));
  return Status();
}

TensorFile Trainer::parameters() const {
  TensorFile file;
  for (const Parameter &param : model_.params)
    file.tensors.emplace(param.slot.name, readParameter(param));
  return file;
}

TensorFile Trainer::checkpoint() const {
  TensorFile file = parameters();
  for (const TensorSlot *slot : checkpointedState(model_))
    file.tensors.emplace(slot->name, readWhole(*slot));
  file.tensors.emplace("step", counterTensor(step_));
  file.tensors.emplace("optimizer_step", counterTensor(optimizerStep_));
  file.metadata = modelMetadata(model_);
  file.metadata["format"] = kCheckpointFormat;
  file.metadata["version"] = "1";
  file.metadata["seed"] = std::to_string(seed_);
  return file;
}

std::map<std::string, LoraAdapter> loraAdapters(const ModelInfo &model) {
  std::map<std::string, LoraAdapter> adapters;
  for (const Parameter &param : model.params)
    if (param.lora)
      adapters.emplace(param.slot.name, *param.lora);
  return adapters;
}

Status mergeLoraAdapters(TensorFile &file,
                         const std::map<std::string, LoraAdapter> &adapters) {
  auto matrix = [&](const std::string &name, const Tensor *&out) -> Status {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end() || it->second.shape().size() != 2 ||
        (it->second.dtype() != DType::F32 && it->second.dtype() != DType::F64))
      return Status::error("LoRA merge: no f32 or f64 matrix '" + name + "'");
    out = &it->second;
    return Status();
  };
  for (const auto &[name, adapter] : adapters) {
    const Tensor *weight, *a, *b;
    for (auto [tensor, which] :
         {std::pair{&weight, &name}, std::pair{&a, &adapter.a},
          std::pair{&b, &adapter.b}})
      if (Status status = matrix(*which, *tensor); !status)
        return status;
    int64_t rank = a->shape()[0], in = a->shape()[1], out = b->shape()[0];
    std::vector<int64_t> expected = adapter.transposed
                                        ? std::vector<int64_t>{in, out}
                                        : std::vector<int64_t>{out, in};
    if (b->shape()[1] != rank || weight->shape() != expected)
      return Status::error("LoRA merge: the shapes of '" + name + "', '" +
                           adapter.a + "' and '" + adapter.b +
                           "' do not make W + B·A");
    Tensor merged = *weight;
    // W[o, i] += scale · Σ_k B[o, k] · A[k, i], in double.
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) {
        double sum = 0.0;
        for (int64_t k = 0; k < rank; ++k)
          sum += loadElement(b->dtype(), b->data(), o * rank + k) *
                 loadElement(a->dtype(), a->data(), k * in + i);
        int64_t index = adapter.transposed ? i * out + o : o * in + i;
        storeElement(merged.dtype(), merged.data(), index,
                     loadElement(merged.dtype(), merged.data(), index) +
                         adapter.scale * sum);
      }
    file.tensors[name] = std::move(merged);
  }
  for (const auto &[name, adapter] : adapters) {
    file.tensors.erase(adapter.a);
    file.tensors.erase(adapter.b);
  }
  return Status();
}

Status exportWeights(const TensorFile &checkpoint, bool mergeLora,
                     TensorFile &out) {
  auto format = checkpoint.metadata.find("format");
  auto names = checkpoint.metadata.find("parameters");
  if (format == checkpoint.metadata.end() ||
      format->second != kCheckpointFormat)
    return Status::error("not a gacc checkpoint (no __metadata__ "
                         "format=gacc-checkpoint)");
  if (names == checkpoint.metadata.end())
    return Status::error("the checkpoint does not list its parameters (it "
                         "was written before gacc export existed: resume "
                         "and save it again)");
  nlohmann::json list = nlohmann::json::parse(names->second, nullptr, false);
  if (!list.is_array())
    return Status::error("the checkpoint's parameter list is not a JSON "
                         "array");
  out = TensorFile();
  for (const nlohmann::json &name : list) {
    auto it = name.is_string()
                  ? checkpoint.tensors.find(name.get<std::string>())
                  : checkpoint.tensors.end();
    if (it == checkpoint.tensors.end())
      return Status::error("the checkpoint lacks parameter " + name.dump());
    out.tensors.insert(*it);
  }
  if (!mergeLora)
    return Status();
  auto lora = checkpoint.metadata.find("lora");
  if (lora == checkpoint.metadata.end())
    return Status::error("--merge-lora: the checkpoint has no LoRA adapters");
  nlohmann::json object = nlohmann::json::parse(lora->second, nullptr, false);
  std::map<std::string, LoraAdapter> adapters;
  if (!object.is_object())
    return Status::error("the checkpoint's LoRA metadata is not a JSON object");
  for (const auto &[name, json] : object.items()) {
    std::optional<LoraAdapter> adapter = loraFromJson(json);
    if (!adapter)
      return Status::error("the checkpoint's LoRA metadata for '" + name +
                           "' lacks a, b, scale or transposed");
    adapters.emplace(name, *adapter);
  }
  return mergeLoraAdapters(out, adapters);
}

Status Trainer::restore(const TensorFile &file, const std::string &origin) {
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != kCheckpointFormat)
    return Status::error(origin + ": not a gacc checkpoint (no "
                                  "__metadata__ format=gacc-checkpoint)");
  const int64_t *step = readCounter(file, "step");
  if (!step)
    return Status::error(origin + ": missing or malformed 'step'");
  // Checkpoints from before loss scaling count no skipped steps.
  const int64_t *optimizerStep = file.tensors.count("optimizer_step")
                                     ? readCounter(file, "optimizer_step")
                                     : step;
  if (!optimizerStep)
    return Status::error(origin + ": malformed 'optimizer_step'");
  // A checkpoint of a run without loss scaling (f32, bf16) resumes in f16
  // with a fresh scale, as a GradScaler whose state was not loaded.
  const std::optional<LossScaling> &scaling = model_.lossScaling;
  bool freshScale = scaling && !file.tensors.count(scaling->scale.name) &&
                    !file.tensors.count(scaling->growthTracker.name);
  std::vector<const TensorSlot *> restored;
  for (const TensorSlot *slot : checkpointedState(model_))
    if (!freshScale ||
        (slot != &scaling->scale && slot != &scaling->growthTracker))
      restored.push_back(slot);
  for (const TensorSlot *slot : restored) {
    auto it = file.tensors.find(slot->name);
    if (it == file.tensors.end())
      return Status::error(origin + ": missing optimizer state '" + slot->name +
                           "'");
    if (Status status = checkTensor(origin, wholeSlot(*slot), it->second);
        !status)
      return status;
  }
  if (Status status = loadParameters(file, origin); !status)
    return status;
  for (const TensorSlot *slot : restored)
    writeWhole(*slot, file.tensors.at(slot->name));
  if (freshScale)
    resetLossScale();
  step_ = static_cast<uint64_t>(*step);
  optimizerStep_ = static_cast<uint64_t>(*optimizerStep);
  restoreSeed(file.metadata);
  return Status();
}

void Trainer::restoreSeed(const std::map<std::string, std::string> &metadata) {
  // (Checkpoints from before the seed was saved keep the current one.)
  auto it = metadata.find("seed");
  if (it == metadata.end())
    return;
  char *end = nullptr;
  unsigned long long seed = std::strtoull(it->second.c_str(), &end, 10);
  if (end && *end == '\0' && !it->second.empty())
    seed_ = seed;
}

Status Trainer::saveCheckpoint(const std::string &path) const {
  TensorFile file = checkpoint();
  return rank() == 0 ? writeSafetensors(path, file) : Status();
}

Status Trainer::loadCheckpoint(const std::string &path) {
  TensorFile file;
  if (Status status = readSafetensors(path, file); !status)
    return status;
  return restore(file, path);
}

std::vector<const TensorSlot *> Trainer::checkpointedSlots() const {
  std::vector<const TensorSlot *> slots;
  for (const Parameter &param : model_.params) {
    slots.push_back(&param.slot);
    if (param.master)
      slots.push_back(&*param.master);
  }
  for (const TensorSlot *slot : checkpointedState(model_))
    slots.push_back(slot);
  return slots;
}

/// The name of rank `rank`'s file in a sharded checkpoint of `ranks`.
static std::string shardFileName(int rank, int ranks) {
  return "rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) +
         ".safetensors";
}

Status Trainer::saveShardedCheckpoint(const std::string &dir) const {
  int ranks = static_cast<int>(model_.ranks);
  TensorFile file;
  nlohmann::json tensors = nlohmann::json::object();
  for (const TensorSlot *slot : checkpointedSlots()) {
    file.tensors.emplace(slot->name, read(*state_, *slot));
    tensors[slot->name] = {{"dtype", std::string(dtypeName(slot->dtype))},
                           {"shape", wholeSlot(*slot).shape},
                           {"sharded", slot->sharded()}};
  }
  file.tensors.emplace("step", counterTensor(step_));
  file.tensors.emplace("optimizer_step", counterTensor(optimizerStep_));
  file.metadata = modelMetadata(model_);
  file.metadata["format"] = kShardedFormat;
  file.metadata["rank"] = std::to_string(rank());
  file.metadata["ranks"] = std::to_string(ranks);
  file.metadata["zero_stage"] = std::to_string(model_.zeroStage);
  file.metadata["seed"] = std::to_string(seed_);
  ::mkdir(dir.c_str(), 0777); // an existing one is fine; writing says more
  Status written =
      writeSafetensors(dir + "/" + shardFileName(rank(), ranks), file);
  // The index appears only once every rank's file is complete.
  double failed = written ? 0.0 : 1.0;
  if (communicator_ && ranks > 1)
    if (Status s =
            communicator_->allReduce(&failed, 1, DType::F64, Reduction::Sum);
        !s)
      return s;
  if (!written)
    return written;
  if (failed != 0.0)
    return Status::error(dir + ": another rank could not write its shard; "
                               "no index written");
  if (rank() != 0)
    return Status();
  nlohmann::json files = nlohmann::json::array();
  for (int r = 0; r < ranks; ++r)
    files.push_back(shardFileName(r, ranks));
  nlohmann::json index = {{"format", kShardedFormat},
                          {"version", 1},
                          {"ranks", ranks},
                          {"zero_stage", model_.zeroStage},
                          {"step", step_},
                          {"files", files},
                          {"tensors", tensors}};
  return writeFileAtomically(dir + "/index.json", index.dump(2) + "\n");
}

/// The index of the sharded checkpoint in `dir`, checked.
static Status readShardIndex(const std::string &dir, nlohmann::json &index) {
  std::string text;
  if (Status s = readFile(dir + "/index.json", text); !s)
    return Status::error(dir + ": not a complete sharded checkpoint (" +
                         s.message() + ")");
  index = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object() ||
      index.value("format", "") != kShardedFormat || !index.contains("ranks") ||
      !index["ranks"].is_number_integer() || !index.contains("files") ||
      !index["files"].is_array() ||
      index["files"].size() != index["ranks"].get<size_t>() ||
      !index.contains("tensors") || !index["tensors"].is_object())
    return Status::error(dir + "/index.json: malformed sharded checkpoint "
                               "index");
  for (const auto &name : index["files"])
    if (!name.is_string() ||
        name.get<std::string>().find('/') != std::string::npos)
      return Status::error(dir + "/index.json: bad file name");
  return Status();
}

Status Trainer::loadShardedCheckpoint(const std::string &dir) {
  nlohmann::json index;
  if (Status s = readShardIndex(dir, index); !s)
    return s;
  if (index["ranks"].get<int64_t>() != model_.ranks ||
      index.value("zero_stage", -1) != model_.zeroStage)
    return Status::error(
        dir + ": saved by " + index["ranks"].dump() + " ranks in ZeRO stage " +
        index.value("zero_stage", nlohmann::json(-1)).dump() +
        ", this step runs " + std::to_string(model_.ranks) + " in stage " +
        std::to_string(model_.zeroStage) +
        ": consolidate it (gacc consolidate) and resume from that");
  std::string path = dir + "/" + index["files"][rank()].get<std::string>();
  TensorFile file;
  if (Status s = readSafetensors(path, file); !s)
    return s;
  auto meta = [&](const char *key) {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string() : it->second;
  };
  if (meta("format") != kShardedFormat ||
      meta("rank") != std::to_string(rank()))
    return Status::error(path + ": not rank " + std::to_string(rank()) +
                         "'s shard of a gacc checkpoint");
  std::vector<const TensorSlot *> slots = checkpointedSlots();
  for (const TensorSlot *slot : slots) {
    auto it = file.tensors.find(slot->name);
    if (it == file.tensors.end())
      return Status::error(path + ": missing '" + slot->name + "'");
    if (Status s = checkTensor(path, *slot, it->second); !s)
      return s;
  }
  for (const char *counter : {"step", "optimizer_step"})
    if (!readCounter(file, counter))
      return Status::error(path + ": missing or malformed '" + counter + "'");
  for (const TensorSlot *slot : slots)
    write(*state_, *slot, file.tensors.at(slot->name));
  step_ = static_cast<uint64_t>(*readCounter(file, "step"));
  optimizerStep_ = static_cast<uint64_t>(*readCounter(file, "optimizer_step"));
  restoreSeed(file.metadata);
  return Status();
}

Status consolidateCheckpoint(const std::string &dir, TensorFile &out) {
  nlohmann::json index;
  if (Status s = readShardIndex(dir, index); !s)
    return s;
  std::vector<TensorFile> shards(index["files"].size());
  for (size_t r = 0; r < shards.size(); ++r) {
    std::string path = dir + "/" + index["files"][r].get<std::string>();
    if (Status s = readSafetensors(path, shards[r]); !s)
      return s;
  }
  out = TensorFile();
  for (auto &[name, entry] : index["tensors"].items()) {
    std::vector<int64_t> shape = entry.value("shape", std::vector<int64_t>());
    std::optional<DType> dtype = parseDType(entry.value("dtype", ""));
    std::optional<int64_t> count = elementCount(shape);
    if (!dtype || !count)
      return Status::error(dir + "/index.json: bad entry '" + name + "'");
    Tensor whole(*dtype, shape);
    size_t width = byteWidth(*dtype), filled = 0;
    size_t parts = entry.value("sharded", false) ? shards.size() : 1;
    for (size_t r = 0; r < parts; ++r) {
      auto it = shards[r].tensors.find(name);
      if (it == shards[r].tensors.end() || it->second.dtype() != *dtype)
        return Status::error(dir + ": rank " + std::to_string(r) +
                             "'s file lacks '" + name + "'");
      size_t bytes = std::min(it->second.byteSize(), whole.byteSize() - filled);
      std::memcpy(static_cast<std::byte *>(whole.data()) + filled,
                  it->second.data(), bytes);
      filled += bytes;
    }
    if (filled != static_cast<size_t>(*count) * width)
      return Status::error(dir + ": the shards of '" + name +
                           "' do not make up its shape");
    out.tensors.emplace(name, std::move(whole));
  }
  // A 16-bit parameter's value is its f32 master's.
  static constexpr std::string_view kMaster = "master.";
  for (auto it = out.tensors.begin(); it != out.tensors.end();) {
    if (it->first.compare(0, kMaster.size(), kMaster) != 0) {
      ++it;
      continue;
    }
    out.tensors[it->first.substr(kMaster.size())] = std::move(it->second);
    it = out.tensors.erase(it);
  }
  for (const char *counter : {"step", "optimizer_step"}) {
    auto it = shards[0].tensors.find(counter);
    if (it == shards[0].tensors.end())
      return Status::error(dir + ": rank 0's file lacks '" + counter + "'");
    out.tensors.emplace(counter, it->second);
  }
  for (const char *key : {"parameters", "lora", "seed"})
    if (auto it = shards[0].metadata.find(key); it != shards[0].metadata.end())
      out.metadata[key] = it->second;
  out.metadata["format"] = kCheckpointFormat;
  out.metadata["version"] = "1";
  return Status();
}

} // namespace gacc::rt
