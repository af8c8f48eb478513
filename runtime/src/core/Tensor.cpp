//===- Tensor.cpp - host tensors and element types
//--------------------------===//

#include "gacc/runtime/Tensor.h"

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
