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

[[noreturn]] void finding(const char *what, const Status &status) {
  std::fprintf(stderr, "gacc-readers-fuzzer: %s: %s\n", what,
               status.message().c_str());
  std::abort();
}

const std::byte *asBytes(const std::string &text) {
  return reinterpret_cast<const std::byte *>(text.data());
}

void readSafetensors(const std::byte *bytes, size_t size) {
  TensorFile file;
  if (!parseSafetensors(bytes, size, "input", file))
    return;
  std::string once = serializeSafetensors(file);
  TensorFile again;
  if (Status status =
          parseSafetensors(asBytes(once), once.size(), "reserialized", again);
      !status)
    finding("safetensors it wrote do not read back", status);
  if (serializeSafetensors(again) != once)
    finding("safetensors read back differently", Status());
}

void readNpy(const std::byte *bytes, size_t size) {
  Tensor tensor;
  if (!parseNpy(bytes, size, "input", tensor))
    return;
  std::string once = serializeNpy(tensor);
  Tensor again;
  if (Status status = parseNpy(asBytes(once), once.size(), "reserialized", again);
      !status)
    finding(".npy it wrote does not read back", status);
  if (serializeNpy(again) != once)
    finding(".npy read back differently", Status());
}

void readArtifact(const std::string &bytes) {
  Artifact artifact;
  if (!parseArtifact(bytes, "input", /*target=*/"", artifact))
    return;
  std::string once = serializeArtifact(artifact);
  Artifact again;
  if (Status status = parseArtifact(once, "reserialized", "", again); !status)
    finding("an artifact it wrote does not read back", status);
  if (serializeArtifact(again) != once)
    finding("an artifact read back differently", Status());
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
  auto *bytes = reinterpret_cast<const std::byte *>(data);
  readSafetensors(bytes, size);
  readNpy(bytes, size);
  std::string text(reinterpret_cast<const char *>(data), size);
  readArtifact(text);
  if (std::string sealed = sealAsArtifactHeader(text); !sealed.empty())
    readArtifact(sealed);
  return 0;
}
