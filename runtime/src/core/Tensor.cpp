//===- Tensor.cpp - host tensors and element types ------------------------===//

#include "gacc/runtime/Tensor.h"

#include <cmath>
#include <cstring>
#include <vector>
#include <limits>

namespace gacc::rt {

namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t width;
};
constexpr DTypeInfo dtypeTable[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I8, "I8", 1},     {DType::U8, "U8", 1},   {DType::Bool, "BOOL", 1},
};
const DTypeInfo &info(DType dtype) {
  return dtypeTable[static_cast<size_t>(dtype)];
}
} // namespace

size_t byteWidth(DType dtype) { return info(dtype).width; }
std::string_view dtypeName(DType dtype) { return info(dtype).name; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &entry : dtypeTable)
    if (entry.name == name)
      return entry.dtype;
  return std::nullopt;
}

std::optional<int64_t> elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return std::nullopt;
    count *= dim;
  }
  return count;
}

namespace {
uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}
} // namespace

uint16_t toF16(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 16) & 0x8000;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffff;
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | 0x7e00);
  if (exponent >= 31)
    return static_cast<uint16_t>(sign | 0x7c00); // overflow to infinity
  if (exponent <= 0) { // subnormal or zero
    if (exponent < -10)
      return static_cast<uint16_t>(sign);
    mantissa |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) |
                  (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is still correct
  return static_cast<uint16_t>(half);
}

namespace {
float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0) {
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  if (exponent == 31)
    return bitsFloat(sign | 0x7f800000 | (mantissa << 13));
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
template <typename T> T read(const std::byte *data, int64_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}
template <typename T> void write(std::byte *data, int64_t index, T value) {
  std::memcpy(data + index * sizeof(T), &value, sizeof(T));
}
} // namespace

float fromF16(uint16_t bits) {
  // Every f16 value, widened once.
  static const std::vector<float> table = [] {
    std::vector<float> values(1 << 16);
    for (uint32_t bits = 0; bits < values.size(); ++bits)
      values[bits] = halfToFloat(static_cast<uint16_t>(bits));
    return values;
  }();
  return table[bits];
}

double loadElement(DType dtype, const std::byte *data, int64_t index) {
  switch (dtype) {
  case DType::F64: return read<double>(data, index);
  case DType::F32: return read<float>(data, index);
  case DType::F16: return fromF16(read<uint16_t>(data, index));
  case DType::BF16: return fromBF16(read<uint16_t>(data, index));
  case DType::I64: return static_cast<double>(read<int64_t>(data, index));
  case DType::I32: return read<int32_t>(data, index);
  case DType::I8: return read<int8_t>(data, index);
  case DType::U8: return read<uint8_t>(data, index);
  case DType::Bool: return read<uint8_t>(data, index) != 0;
  }
  return 0.0;
}

void storeElement(DType dtype, std::byte *data, int64_t index, double value) {
  switch (dtype) {
  case DType::F64: return write<double>(data, index, value);
  case DType::F32: return write<float>(data, index, static_cast<float>(value));
  case DType::F16:
    return write<uint16_t>(data, index, toF16(static_cast<float>(value)));
  case DType::BF16:
    return write<uint16_t>(data, index, toBF16(static_cast<float>(value)));
  case DType::I64:
    return write<int64_t>(data, index, static_cast<int64_t>(value));
  case DType::I32:
    return write<int32_t>(data, index, static_cast<int32_t>(value));
  case DType::I8: return write<int8_t>(data, index, static_cast<int8_t>(value));
  case DType::U8:
    return write<uint8_t>(data, index, static_cast<uint8_t>(value));
  case DType::Bool: return write<uint8_t>(data, index, value != 0.0);
  }
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)),
      bytes_(static_cast<size_t>(elementCount(shape_).value_or(0)) *
             byteWidth(dtype)) {}

int64_t Tensor::numElements() const {
  return static_cast<int64_t>(bytes_.size() / byteWidth(dtype_));
}

} // namespace gacc::rt
