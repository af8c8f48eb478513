//===- LoraJson.h - a LoRA adapter as JSON ----------------------*- C++ -*-===//
//
// One spelling of a LoRA adapter ({"a", "b", "scale", "transposed"}) for
// the two files that carry it: artifacts (Artifact.cpp, each parameter's
// "lora") and checkpoint metadata (Checkpoint.cpp, "lora").
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CORE_LORAJSON_H
#define GACC_RUNTIME_CORE_LORAJSON_H

#include "gacc/runtime/ModelInfo.h"

#include <nlohmann/json.hpp>
#include <optional>

namespace gacc::rt {

inline nlohmann::json loraToJson(const LoraAdapter &adapter) {
  return {{"a", adapter.a},
          {"b", adapter.b},
          {"scale", adapter.scale},
          {"transposed", adapter.transposed}};
}

/// The adapter `json` describes; nullopt if a field is missing or of
/// another type.
inline std::optional<LoraAdapter> loraFromJson(const nlohmann::json &json) {
  auto field = [&](const char *name) {
    return json.is_object() && json.contains(name) ? &json[name] : nullptr;
  };
  const nlohmann::json *a = field("a"), *b = field("b"),
                       *scale = field("scale"),
                       *transposed = field("transposed");
  if (!a || !a->is_string() || !b || !b->is_string() || !scale ||
      !scale->is_number() || !transposed || !transposed->is_boolean())
    return std::nullopt;
  return LoraAdapter{a->get<std::string>(), b->get<std::string>(),
                     scale->get<double>(), transposed->get<bool>()};
}

} // namespace gacc::rt

#endif // GACC_RUNTIME_CORE_LORAJSON_H
