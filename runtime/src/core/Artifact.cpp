//===- Artifact.cpp - the compiled-model container --------------------------===//

#include "gacc/runtime/Artifact.h"
#include "LoraJson.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Optimizer.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace gacc::rt {
namespace {
using Json = nlohmann::json;

constexpr size_t kPrefixBytes = 16; // magic, version, header size
constexpr size_t kSectionAlignment = 64;

uint64_t fnv1a64(const char *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

void putU32(std::string &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t getU32(const std::string &bytes, size_t offset) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(
                 static_cast<unsigned char>(bytes[offset + i]))
             << (8 * i);
  return value;
}

/// Enumerations by name, so that the format does not depend on their order.
template <typename E, size_t N>
using Names = std::array<std::pair<E, const char *>, N>;

constexpr Names<InitKind, 8> kInitKinds = {{
    {InitKind::Zeros, "zeros"},
    {InitKind::Ones, "ones"},
    {InitKind::Normal, "normal"},
    {InitKind::Uniform, "uniform"},
    {InitKind::XavierUniform, "xavier_uniform"},
    {InitKind::XavierNormal, "xavier_normal"},
    {InitKind::KaimingUniform, "kaiming_uniform"},
    {InitKind::KaimingNormal, "kaiming_normal"},
}};
constexpr Names<InputKind, 4> kInputKinds = {{
    {InputKind::Features, "features"},
    {InputKind::Labels, "labels"},
    {InputKind::Tokens, "tokens"},
    {InputKind::Mask, "mask"},
}};
constexpr Names<ScheduleConfig::Kind, 3> kSchedules = {{
    {ScheduleConfig::Constant, "constant"},
    {ScheduleConfig::WarmupCosine, "warmup_cosine"},
    {ScheduleConfig::WarmupPolynomial, "warmup_polynomial"},
}};

template <typename E, size_t N> const char *nameOf(const Names<E, N> &names, E value) {
  for (const auto &[e, name] : names)
    if (e == value)
      return name;
  return "";
}

/// A malformed header: the first problem, as a message.
struct Malformed {
  std::string what;
};

/// An integer of type T. A number with a fraction or outside T is an
/// error: nlohmann's get<T>() would truncate it, or be undefined.
template <typename T> T integerFrom(const Json &value, const std::string &what) {
  bool fits = value.is_number_unsigned()
                  ? value.get<uint64_t>() <=
                        static_cast<uint64_t>(std::numeric_limits<T>::max())
                  : value.is_number_integer() &&
                        (std::is_signed_v<T> || value.get<int64_t>() >= 0);
  if (!fits)
    throw Malformed{what + " is not an integer in range"};
  return value.get<T>();
}

template <typename T> T integerAt(const Json &json, const char *field) {
  return integerFrom<T>(json.at(field), std::string("'") + field + "'");
}

std::vector<int64_t> shapeAt(const Json &json, const char *field) {
  std::vector<int64_t> shape;
  for (const Json &dim : json.at(field))
    shape.push_back(integerFrom<int64_t>(dim, std::string("a dimension of '") +
                                                  field + "'"));
  return shape;
}

template <typename E, size_t N>
E valueOf(const Names<E, N> &names, const Json &json, const char *field) {
  std::string name = json.at(field).get<std::string>();
  for (const auto &[e, known] : names)
    if (name == known)
      return e;
  throw Malformed{std::string("unknown ") + field + " '" + name + "'"};
}

Json slotJson(const TensorSlot &slot) {
  Json json = {{"name", slot.name},
               {"dtype", std::string(dtypeName(slot.dtype))},
               {"shape", slot.shape},
               {"offset", slot.offset}};
  if (slot.sharded())
    json["unsharded_shape"] = slot.unshardedShape;
  return json;
}

TensorSlot slotFrom(const Json &json) {
  TensorSlot slot;
  slot.name = json.at("name").get<std::string>();
  std::string dtype = json.at("dtype").get<std::string>();
  std::optional<DType> parsed = parseDType(dtype);
  if (!parsed)
    throw Malformed{"unknown dtype '" + dtype + "' of '" + slot.name + "'"};
  slot.dtype = *parsed;
  slot.shape = shapeAt(json, "shape");
  slot.offset = integerAt<int64_t>(json, "offset");
  std::optional<int64_t> count = elementCount(slot.shape);
  if (slot.offset < 0 || !count ||
      *count > std::numeric_limits<int64_t>::max() /
                   static_cast<int64_t>(byteWidth(slot.dtype)))
    throw Malformed{"bad offset or shape of '" + slot.name + "'"};
  if (json.contains("unsharded_shape")) {
    slot.unshardedShape = shapeAt(json, "unsharded_shape");
    if (slot.shape.size() != 1 || !elementCount(slot.unshardedShape))
      throw Malformed{"bad shard of '" + slot.name + "'"};
  }
  return slot;
}

Json slotsJson(const std::vector<TensorSlot> &slots) {
  Json list = Json::array();
  for (const TensorSlot &slot : slots)
    list.push_back(slotJson(slot));
  return list;
}

std::vector<TensorSlot> slotsFrom(const Json &json) {
  std::vector<TensorSlot> slots;
  for (const Json &slot : json)
    slots.push_back(slotFrom(slot));
  return slots;
}

/// The optimizer's kind, learning rate and other hyperparameters (numbers;
/// booleans as 0 or 1).
OptimizerConfig optimizerFrom(const Json &json) {
  OptimizerConfig optimizer;
  optimizer.kind = json.at("kind").get<std::string>();
  optimizer.lr = json.at("lr").get<double>();
  for (const auto &[name, value] : json.items()) {
    if (name == "kind" || name == "lr")
      continue;
    if (!value.is_number() && !value.is_boolean())
      throw Malformed{"optimizer hyperparameter '" + name +
                      "' is not a number"};
    optimizer.hyperparameters[name] =
        value.is_boolean() ? double(value.get<bool>()) : value.get<double>();
  }
  return optimizer;
}

Json modelJson(const ModelInfo &model) {
  Json params = Json::array();
  for (const Parameter &param : model.params) {
    Json entry = {{"slot", slotJson(param.slot)},
                  {"init", nameOf(kInitKinds, param.init)},
                  {"scale", param.scale},
                  {"seed", param.seed}};
    if (param.master)
      entry["master"] = slotJson(*param.master);
    if (param.frozen)
      entry["frozen"] = true;
    if (param.lora)
      entry["lora"] = loraToJson(*param.lora);
    params.push_back(entry);
  }
  Json inputs = Json::array();
  for (const Input &input : model.inputs) {
    Json entry = {{"slot", slotJson(input.slot)},
                  {"kind", nameOf(kInputKinds, input.kind)},
                  {"classes", input.classes}};
    if (input.ignoreIndex)
      entry["ignore_index"] = *input.ignoreIndex;
    if (input.meanOverCounted)
      entry["mean_over_counted"] = true;
    inputs.push_back(entry);
  }
  Json optimizer = {{"kind", model.optimizer.kind},
                    {"lr", model.optimizer.lr}};
  for (const auto &[name, value] : model.optimizer.hyperparameters)
    optimizer[name] = value;
  Json json = {{"params", params},
               {"grads", slotsJson(model.grads)},
               {"optimizer_state", slotsJson(model.optimizerState)},
               {"inputs", inputs},
               {"hyper", slotsJson(model.hyper)},
               {"loss", slotJson(model.loss)},
               {"grad_norm", slotJson(model.gradNorm)},
               {"step", slotJson(model.step)},
               {"outputs", slotsJson(model.outputs)},
               {"state_bytes", model.stateBytes},
               {"batch_bytes", model.batchBytes},
               {"io_bytes", model.ioBytes},
               {"workspace_bytes", model.workspaceBytes},
               {"unplanned_bytes", model.unplannedBytes},
               {"batch_size", model.batchSize},
               {"ranks", model.ranks},
               {"zero_stage", model.zeroStage},
               {"optimizer", optimizer},
               {"schedule",
                {{"kind", nameOf(kSchedules, model.schedule.kind)},
                 {"warmup_steps", model.schedule.warmupSteps},
                 {"total_steps", model.schedule.totalSteps},
                 {"min_lr", model.schedule.minLr},
                 {"power", model.schedule.power}}}};
  if (model.gradClipNorm)
    json["grad_clip_norm"] = *model.gradClipNorm;
  if (model.rank)
    json["rank"] = slotJson(*model.rank);
  if (model.lossScaling)
    json["loss_scaling"] = {
        {"scale", slotJson(model.lossScaling->scale)},
        {"growth_tracker", slotJson(model.lossScaling->growthTracker)},
        {"found_inf", slotJson(model.lossScaling->foundInf)},
        {"init_scale", model.lossScaling->initScale}};
  return json;
}

ModelInfo modelFrom(const Json &json) {
  ModelInfo model;
  for (const Json &param : json.at("params")) {
    Parameter described;
    described.slot = slotFrom(param.at("slot"));
    if (param.contains("master"))
      described.master = slotFrom(param.at("master"));
    described.init = valueOf(kInitKinds, param, "init");
    described.scale = param.at("scale").get<double>();
    described.seed = integerAt<uint64_t>(param, "seed");
    described.frozen = param.value("frozen", false);
    if (param.contains("lora")) {
      described.lora = loraFromJson(param.at("lora"));
      if (!described.lora)
        throw Malformed{"bad lora adapter of '" + described.slot.name + "'"};
    }
    model.params.push_back(described);
  }
  model.grads = slotsFrom(json.at("grads"));
  model.optimizerState = slotsFrom(json.at("optimizer_state"));
  for (const Json &input : json.at("inputs")) {
    Input described;
    described.slot = slotFrom(input.at("slot"));
    described.kind = valueOf(kInputKinds, input, "kind");
    described.classes = integerAt<int64_t>(input, "classes");
    if (input.contains("ignore_index"))
      described.ignoreIndex = integerAt<int64_t>(input, "ignore_index");
    described.meanOverCounted = input.value("mean_over_counted", false);
    model.inputs.push_back(described);
  }
  model.hyper = slotsFrom(json.at("hyper"));
  model.loss = slotFrom(json.at("loss"));
  model.gradNorm = slotFrom(json.at("grad_norm"));
  model.step = slotFrom(json.at("step"));
  model.outputs = slotsFrom(json.at("outputs"));
  model.stateBytes = integerAt<int64_t>(json, "state_bytes");
  model.batchBytes = integerAt<int64_t>(json, "batch_bytes");
  model.ioBytes = integerAt<int64_t>(json, "io_bytes");
  model.workspaceBytes = integerAt<int64_t>(json, "workspace_bytes");
  model.unplannedBytes = integerAt<int64_t>(json, "unplanned_bytes");
  model.batchSize = integerAt<int64_t>(json, "batch_size");
  model.ranks = integerAt<int64_t>(json, "ranks");
  model.zeroStage = integerAt<int64_t>(json, "zero_stage");
  for (int64_t bytes : {model.stateBytes, model.batchBytes, model.ioBytes,
                        model.workspaceBytes, model.unplannedBytes})
    if (bytes < 0)
      throw Malformed{"negative arena size"};
  if (model.ranks < 1 || model.batchSize % model.ranks != 0 ||
      model.zeroStage < 0 || model.zeroStage > 3)
    throw Malformed{"bad ranks or ZeRO stage"};
  if (json.contains("rank"))
    model.rank = slotFrom(json.at("rank"));
  model.optimizer = optimizerFrom(json.at("optimizer"));
  const Json &schedule = json.at("schedule");
  model.schedule.kind = valueOf(kSchedules, schedule, "kind");
  model.schedule.warmupSteps = integerAt<uint64_t>(schedule, "warmup_steps");
  model.schedule.totalSteps = integerAt<uint64_t>(schedule, "total_steps");
  model.schedule.minLr = schedule.at("min_lr").get<double>();
  model.schedule.power = schedule.value("power", 1.0);
  if (json.contains("grad_clip_norm"))
    model.gradClipNorm = json.at("grad_clip_norm").get<double>();
  if (json.contains("loss_scaling")) {
    const Json &scaling = json.at("loss_scaling");
    model.lossScaling = LossScaling{
        slotFrom(scaling.at("scale")), slotFrom(scaling.at("growth_tracker")),
        slotFrom(scaling.at("found_inf")),
        scaling.at("init_scale").get<double>()};
  }
  // Every slot must lie inside its arena.
  auto inside = [&](const TensorSlot &slot, int64_t arena) {
    if (slot.offset > arena || slot.bytes() > arena - slot.offset)
      throw Malformed{"'" + slot.name + "' lies outside its arena"};
  };
  for (const Parameter &param : model.params) {
    inside(param.slot, model.stateBytes);
    if (param.master)
      inside(*param.master, model.stateBytes);
  }
  for (const std::vector<TensorSlot> *slots :
       {&model.grads, &model.optimizerState})
    for (const TensorSlot &slot : *slots)
      inside(slot, model.stateBytes);
  for (const Input &input : model.inputs)
    inside(input.slot, model.batchBytes);
  for (const TensorSlot *slot : {&model.loss, &model.gradNorm, &model.step})
    inside(*slot, model.ioBytes);
  for (const TensorSlot &slot : model.hyper)
    inside(slot, model.ioBytes);
  if (Status scalars = checkOptimizerScalars(model); !scalars)
    throw Malformed{scalars.message()};
  for (const TensorSlot &slot : model.outputs)
    inside(slot, model.ioBytes);
  if (model.lossScaling) {
    inside(model.lossScaling->scale, model.stateBytes);
    inside(model.lossScaling->growthTracker, model.stateBytes);
    inside(model.lossScaling->foundInf, model.ioBytes);
  }
  if (model.rank)
    inside(*model.rank, model.ioBytes);
  return model;
}

size_t alignUp(size_t value) {
  return (value + kSectionAlignment - 1) / kSectionAlignment *
         kSectionAlignment;
}
} // namespace

std::string serializeArtifact(const Artifact &artifact) {
  // Section offsets count from the data area, which starts at the first
  // aligned offset after the header.
  Json sections = Json::array();
  size_t next = 0;
  for (const auto &[name, bytes] : artifact.sections) {
    sections.push_back({{"name", name},
                        {"offset", next},
                        {"size", bytes.size()},
                        {"fnv1a64", hex(fnv1a64(bytes.data(), bytes.size()))}});
    next = alignUp(next + bytes.size());
  }
  Json header = {{"target", artifact.target},
                 {"cpu_features", artifact.cpuFeatures},
                 {"model", modelJson(artifact.model)},
                 {"sections", sections}};
  std::string body = header.dump();
  header["checksum"] = hex(fnv1a64(body.data(), body.size()));
  std::string text = header.dump();

  std::string out(kArtifactMagic, sizeof(kArtifactMagic));
  putU32(out, kArtifactVersion);
  putU32(out, static_cast<uint32_t>(text.size()));
  out += text;
  size_t data = alignUp(out.size());
  for (const Json &section : sections) {
    out.resize(data + section["offset"].get<size_t>(), '\0');
    out += artifact.sections.at(section["name"].get<std::string>());
  }
  return out;
}

Status parseArtifact(const std::string &bytes, const std::string &origin,
                     const std::string &target, Artifact &out) {
  auto error = [&](const std::string &what) {
    return Status::error(origin + ": " + what);
  };
  if (bytes.size() < kPrefixBytes ||
      std::memcmp(bytes.data(), kArtifactMagic, sizeof(kArtifactMagic)) != 0)
    return error("not a gacc artifact (no GACCART magic)");
  uint32_t version = getU32(bytes, 8);
  if (version != kArtifactVersion)
    return error("artifact format version " + std::to_string(version) +
                 ", this runtime reads version " +
                 std::to_string(kArtifactVersion) + ": compile it again");
  size_t headerSize = getU32(bytes, 12);
  if (kPrefixBytes + headerSize > bytes.size())
    return error("truncated: the header needs " +
                 std::to_string(kPrefixBytes + headerSize) + " bytes, the file has " +
                 std::to_string(bytes.size()));
  Artifact artifact;
  try {
    Json header = Json::parse(bytes.substr(kPrefixBytes, headerSize));
    std::string checksum = header.at("checksum").get<std::string>();
    header.erase("checksum");
    std::string body = header.dump();
    if (checksum != hex(fnv1a64(body.data(), body.size())))
      return error("corrupt header (checksum mismatch)");
    artifact.target = header.at("target").get<std::string>();
    if (!target.empty() && artifact.target != target)
      return error("compiled for target '" + artifact.target +
                   "', not '" + target + "'");
    if (header.contains("cpu_features"))
      artifact.cpuFeatures =
          header.at("cpu_features").get<std::vector<std::string>>();
    artifact.model = modelFrom(header.at("model"));
    size_t data = alignUp(kPrefixBytes + headerSize);
    for (const Json &section : header.at("sections")) {
      std::string name = section.at("name").get<std::string>();
      size_t offset = integerAt<size_t>(section, "offset");
      size_t size = integerAt<size_t>(section, "size");
      if (offset > bytes.size() || data > bytes.size() - offset ||
          size > bytes.size() - data - offset)
        return error("truncated: section '" + name + "' needs bytes up to " +
                     std::to_string(data + offset + size) + ", the file has " +
                     std::to_string(bytes.size()));
      if (section.at("fnv1a64").get<std::string>() !=
          hex(fnv1a64(bytes.data() + data + offset, size)))
        return error("corrupt section '" + name + "' (checksum mismatch)");
      artifact.sections[name] = bytes.substr(data + offset, size);
    }
  } catch (const Json::exception &e) {
    return error(std::string("malformed header: ") + e.what());
  } catch (const Malformed &e) {
    return error("malformed header: " + e.what);
  }
  out = std::move(artifact);
  return Status();
}

Status writeArtifact(const std::string &path, const Artifact &artifact) {
  return writeFileAtomically(path, serializeArtifact(artifact));
}

Status readArtifact(const std::string &path, const std::string &target,
                    Artifact &out) {
  std::string bytes;
  if (Status status = readFile(path, bytes); !status)
    return status;
  return parseArtifact(bytes, path, target, out);
}

} // namespace gacc::rt
