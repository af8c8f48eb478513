//===- ReadersFuzzer.cpp - fuzz the runtime's file readers ----------------===//
//
// The bytes go to every reader of untrusted files: safetensors (checkpoints,
// parameters, data), .npy (data) and artifacts, whole and as an artifact
// header sealed with a valid checksum, so that mutations get past the
// checksum to the model description's validation. Whatever a reader
// accepts must serialize and read back to the same bytes: accepting an
// input and then misreading it would be a silent wrong answer.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Artifact.h"
#include "gacc/runtime/Npy.h"
#include "gacc/runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace gacc::rt;

namespace {

/// Reads `bytes` as a `format` file with `parse`; what it accepts must
/// serialize and read back to the same bytes.
template <typename T, typename Parse, typename Serialize>
void read(const char *format, const std::string &bytes, Parse parse,
          Serialize serialize) {
  T value;
  if (!parse(bytes, "input", value))
    return;
  std::string once = serialize(value);
  T again;
  Status status = parse(once, "reserialized", again);
  if (status && serialize(again) == once)
    return;
  std::fprintf(stderr, "gacc-readers-fuzzer: a %s file it wrote %s %s\n",
               format, status ? "reads back differently" : "does not read back:",
               status.message().c_str());
  std::abort();
}

Status parseSafetensorsText(const std::string &bytes, const std::string &origin,
                            TensorFile &out) {
  return parseSafetensors(reinterpret_cast<const std::byte *>(bytes.data()),
                          bytes.size(), origin, out);
}

Status parseNpyText(const std::string &bytes, const std::string &origin,
                    Tensor &out) {
  return parseNpy(reinterpret_cast<const std::byte *>(bytes.data()),
                  bytes.size(), origin, out);
}

Status parseAnyArtifact(const std::string &bytes, const std::string &origin,
                        Artifact &out) {
  return parseArtifact(bytes, origin, /*target=*/"", out);
}

/// FNV-1a 64 as docs/artifact.md defines it, written apart from the
/// runtime's so that the two check each other.
std::string fnv1a64Hex(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(hash));
  return hex;
}

/// `header` (JSON text) as a whole artifact whose header checksum holds;
/// empty if it is not a JSON object.
std::string sealAsArtifactHeader(const std::string &header) {
  using Json = nlohmann::json;
  Json json = Json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object())
    return "";
  json.erase("checksum");
  json["checksum"] = fnv1a64Hex(json.dump());
  std::string text = json.dump();
  std::string out(kArtifactMagic, sizeof(kArtifactMagic));
  for (uint32_t value : {kArtifactVersion, uint32_t(text.size())})
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out + text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  read<TensorFile>("safetensors", bytes, parseSafetensorsText,
                   serializeSafetensors);
  read<Tensor>(".npy", bytes, parseNpyText, serializeNpy);
  read<Artifact>("artifact", bytes, parseAnyArtifact, serializeArtifact);
  if (std::string sealed = sealAsArtifactHeader(bytes); !sealed.empty())
    read<Artifact>("artifact", sealed, parseAnyArtifact, serializeArtifact);
  return 0;
}
