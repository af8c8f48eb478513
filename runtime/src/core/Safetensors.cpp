//===- Safetensors.cpp - read and write .safetensors files ----------------===//

#include "gacc/runtime/Safetensors.h"
#include "gacc/runtime/File.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace gacc::rt {

using Json = nlohmann::json;

namespace {
// A header larger than this is refused as corrupt (the reference
// implementation's limit).
constexpr uint64_t maxHeaderBytes = 100u << 20;

uint64_t readLittleEndian64(const std::byte *p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | static_cast<uint64_t>(p[i]);
  return value;
}

Status parseEntry(const std::string &origin, const std::string &name,
                  const Json &entry, uint64_t dataSize, Tensor &tensor,
                  uint64_t &begin, uint64_t &end) {
  auto fail = [&](const std::string &why) {
    return Status::error(origin + ": tensor '" + name + "': " + why);
  };
  if (!entry.is_object())
    return fail("header entry is not an object");
  auto dtypeIt = entry.find("dtype");
  auto shapeIt = entry.find("shape");
  auto offsetsIt = entry.find("data_offsets");
  if (dtypeIt == entry.end() || !dtypeIt->is_string())
    return fail("missing or non-string 'dtype'");
  std::optional<DType> dtype = parseDType(dtypeIt->get<std::string>());
  if (!dtype)
    return fail("unsupported dtype '" + dtypeIt->get<std::string>() + "'");
  if (shapeIt == entry.end() || !shapeIt->is_array())
    return fail("missing or non-array 'shape'");
  std::vector<int64_t> shape;
  for (const Json &dim : *shapeIt) {
    if (!dim.is_number_unsigned())
      return fail("shape entries must be non-negative integers");
    uint64_t value = dim.get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX))
      return fail("dimension too large");
    shape.push_back(static_cast<int64_t>(value));
  }
  std::optional<int64_t> count = elementCount(shape);
  if (!count)
    return fail("element count overflows");
  if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
      offsetsIt->size() != 2 || !(*offsetsIt)[0].is_number_unsigned() ||
      !(*offsetsIt)[1].is_number_unsigned())
    return fail("'data_offsets' must be two non-negative integers");
  begin = (*offsetsIt)[0].get<uint64_t>();
  end = (*offsetsIt)[1].get<uint64_t>();
  if (begin > end || end > dataSize)
    return fail("data_offsets [" + std::to_string(begin) + ", " +
                std::to_string(end) + ") lie outside the " +
                std::to_string(dataSize) + " data bytes (truncated file?)");
  uint64_t expected = static_cast<uint64_t>(*count);
  if (expected > UINT64_MAX / byteWidth(*dtype) ||
      end - begin != expected * byteWidth(*dtype))
    return fail("holds " + std::to_string(end - begin) + " bytes but " +
                std::string(dtypeName(*dtype)) + " " + shapeString(shape) +
                " needs " + std::to_string(expected * byteWidth(*dtype)));
  tensor = Tensor(*dtype, std::move(shape));
  return Status();
}
} // namespace

Status parseSafetensors(const std::byte *bytes, size_t size,
                        const std::string &origin, TensorFile &out) {
  out = TensorFile();
  if (size < 8)
    return Status::error(origin + ": too short for a safetensors file (" +
                         std::to_string(size) + " bytes)");
  uint64_t headerSize = readLittleEndian64(bytes);
  if (headerSize > maxHeaderBytes || headerSize > size - 8)
    return Status::error(origin + ": header length " +
                         std::to_string(headerSize) +
                         " exceeds the file (truncated or not safetensors)");
  const char *headerText = reinterpret_cast<const char *>(bytes + 8);
  Json header = Json::parse(headerText, headerText + headerSize, nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return Status::error(origin + ": header is not a JSON object");

  const std::byte *data = bytes + 8 + headerSize;
  uint64_t dataSize = size - 8 - headerSize;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object())
        return Status::error(origin + ": __metadata__ is not an object");
      for (auto meta = it->begin(); meta != it->end(); ++meta) {
        if (!meta->is_string())
          return Status::error(origin + ": __metadata__ value of '" +
                               meta.key() + "' is not a string");
        out.metadata[meta.key()] = meta->get<std::string>();
      }
      continue;
    }
    Tensor tensor;
    uint64_t begin = 0, end = 0;
    if (Status status =
            parseEntry(origin, it.key(), *it, dataSize, tensor, begin, end);
        !status)
      return status;
    if (end > begin)
      std::memcpy(tensor.data(), data + begin, end - begin);
    ranges.emplace_back(begin, end);
    out.tensors.emplace(it.key(), std::move(tensor));
  }
  // The format requires the tensors to tile the data exactly.
  std::sort(ranges.begin(), ranges.end());
  uint64_t covered = 0;
  for (auto [begin, end] : ranges) {
    if (begin != covered)
      return Status::error(origin +
                           ": tensor data overlaps or leaves a hole "
                           "at byte " +
                           std::to_string(std::min(begin, covered)));
    covered = end;
  }
  if (covered != dataSize)
    return Status::error(origin + ": " + std::to_string(dataSize - covered) +
                         " trailing bytes after the last tensor");
  return Status();
}

Status readSafetensors(const std::string &path, TensorFile &out) {
  std::string contents;
  if (Status status = readFile(path, contents); !status)
    return status;
  return parseSafetensors(reinterpret_cast<const std::byte *>(contents.data()),
                          contents.size(), path, out);
}

std::string serializeSafetensors(const TensorFile &file) {
  Json header = Json::object();
  if (!file.metadata.empty())
    header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : file.tensors) {
    header[name] = {{"dtype", std::string(dtypeName(tensor.dtype()))},
                    {"shape", tensor.shape()},
                    {"data_offsets", {offset, offset + tensor.byteSize()}}};
    offset += tensor.byteSize();
  }
  std::string headerText = header.dump();
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  std::string image;
  image.reserve(8 + headerText.size() + offset);
  uint64_t headerSize = headerText.size();
  for (int i = 0; i < 8; ++i)
    image.push_back(static_cast<char>((headerSize >> (8 * i)) & 0xff));
  image += headerText;
  for (const auto &[name, tensor] : file.tensors)
    image.append(reinterpret_cast<const char *>(tensor.data()),
                 tensor.byteSize());
  return image;
}

Status writeSafetensors(const std::string &path, const TensorFile &file) {
  return writeFileAtomically(path, serializeSafetensors(file));
}

} // namespace gacc::rt
