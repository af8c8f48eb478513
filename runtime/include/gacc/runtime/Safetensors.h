//===- Safetensors.h - read and write .safetensors files --------*- C++ -*-===//
//
// The exchange format for parameters, checkpoints, gradients and data
// (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte
// range, then the bytes. Reading validates everything against the file size;
// writing goes to a temporary file renamed into place, so a crash never
// leaves a half-written file under the final name.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_SAFETENSORS_H
#define GACC_RUNTIME_SAFETENSORS_H

#include "gacc/runtime/File.h"
#include "gacc/runtime/Tensor.h"

#include <map>
#include <string>

namespace gacc::rt {

struct TensorFile {
  std::map<std::string, Tensor> tensors;
  /// The optional "__metadata__" string map.
  std::map<std::string, std::string> metadata;
};

/// Parses a safetensors image held in memory; `origin` names it in errors.
Status parseSafetensors(const std::byte *bytes, size_t size,
                        const std::string &origin, TensorFile &out);

Status readSafetensors(const std::string &path, TensorFile &out);

/// Serializes `file` (tensors sorted by name, header padded to 8 bytes).
std::string serializeSafetensors(const TensorFile &file);

/// Writes atomically: a temporary file beside `path`, flushed and renamed.
Status writeSafetensors(const std::string &path, const TensorFile &file);

} // namespace gacc::rt

#endif // GACC_RUNTIME_SAFETENSORS_H
