//===- Tensor.h - host tensors and element types ----------------*- C++ -*-===//
#ifndef GACC_RUNTIME_TENSOR_H
#define GACC_RUNTIME_TENSOR_H

#include "gacc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gacc::rt {

/// Element types, named as in safetensors.
enum class DType { F64, F32, F16, BF16, I64, I32, I8, U8, Bool };

/// Bytes per element.
size_t byteWidth(DType dtype);
/// "F32", "BF16", ...: the safetensors spelling.
std::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);

/// Number of elements of `shape`, or nothing if a dimension is negative or
/// the product overflows.
std::optional<int64_t> elementCount(const std::vector<int64_t> &shape);

/// Element `index` of a buffer of `dtype`, as a double (bool and integers
/// exactly up to 2^53).
double loadElement(DType dtype, const std::byte *data, int64_t index);
/// 16-bit floats (IEEE binary16, bfloat16) from their bits, exactly.
float fromF16(uint16_t bits);
inline float fromBF16(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}
/// The 16-bit floats nearest `value` (ties to even; NaN stays NaN).
/// (bfloat16's inline: kernels convert element by element.)
uint16_t toF16(float value);
inline uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (value != value)
    return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
/// Stores `value` rounded to `dtype` (nearest-even for floats).
void storeElement(DType dtype, std::byte *data, int64_t index, double value);

/// "[64, 784]".
std::string shapeString(const std::vector<int64_t> &shape);

/// A dense row-major tensor in host memory that owns its bytes.
class Tensor {
public:
  Tensor() = default;
  /// Zero-filled; `shape` must have a valid element count.
  Tensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numElements() const;
  size_t byteSize() const { return bytes_.size(); }

  std::byte *data() { return bytes_.data(); }
  const std::byte *data() const { return bytes_.data(); }
  template <typename T> T *dataAs() { return reinterpret_cast<T *>(data()); }
  template <typename T> const T *dataAs() const {
    return reinterpret_cast<const T *>(data());
  }

  bool operator==(const Tensor &other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ &&
           bytes_ == other.bytes_;
  }

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<std::byte> bytes_;
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_TENSOR_H
