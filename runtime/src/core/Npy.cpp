//===- Npy.cpp - read and write NumPy .npy files ----------------------------===//

#include "gacc/runtime/Npy.h"
#include "gacc/runtime/File.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

namespace gacc::rt {

namespace {
std::optional<DType> dtypeOfDescr(const std::string &descr) {
  static const std::pair<const char *, DType> table[] = {
      {"<f8", DType::F64}, {"<f4", DType::F32}, {"<f2", DType::F16},
      {"<i8", DType::I64}, {"<i4", DType::I32}, {"|i1", DType::I8},
      {"|u1", DType::U8},  {"|b1", DType::Bool}};
  for (auto [name, dtype] : table)
    if (descr == name)
      return dtype;
  return std::nullopt;
}

const char *descrOf(DType dtype) {
  switch (dtype) {
  case DType::F64: return "<f8";
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::I64: return "<i8";
  case DType::I32: return "<i4";
  case DType::I8: return "|i1";
  case DType::U8: return "|u1";
  case DType::Bool: return "|b1";
  case DType::BF16: return nullptr; // NumPy has no bfloat16
  }
  return nullptr;
}
} // namespace

Status parseNpy(const std::byte *bytes, size_t size, const std::string &origin,
                Tensor &out) {
  auto fail = [&](const std::string &why) {
    return Status::error(origin + ": " + why);
  };
  static const char magic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, magic, 6) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<size_t>(bytes[8]) |
                   static_cast<size_t>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | static_cast<size_t>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return fail("unsupported .npy version " + std::to_string(major));
  }
  if (headerLength > size - headerStart)
    return fail("truncated header");
  std::string header(reinterpret_cast<const char *>(bytes + headerStart),
                     headerLength);

  std::smatch match;
  static const std::regex descrRe(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex orderRe(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shapeRe(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, match, descrRe))
    return fail("header has no 'descr'");
  std::optional<DType> dtype = dtypeOfDescr(match[1]);
  if (!dtype)
    return fail("unsupported dtype '" + match[1].str() +
                "' (little-endian f2/f4/f8, i1/u1/i4/i8 or bool)");
  if (!std::regex_search(header, match, orderRe))
    return fail("header has no 'fortran_order'");
  if (match[1] == "True")
    return fail("Fortran-order arrays are not supported; save a C-order copy");
  if (!std::regex_search(header, match, shapeRe))
    return fail("header has no 'shape'");
  std::vector<int64_t> shape;
  std::string dims = match[1];
  static const std::regex dimRe(R"(\s*(\d+)\s*,?)");
  for (std::sregex_iterator it(dims.begin(), dims.end(), dimRe), end;
       it != end; ++it) {
    if ((*it)[1].length() > 15)
      return fail("dimension too large");
    shape.push_back(std::stoll((*it)[1]));
  }
  std::optional<int64_t> count = elementCount(shape);
  if (!count)
    return fail("element count overflows");
  size_t dataStart = headerStart + headerLength;
  uint64_t needed = static_cast<uint64_t>(*count) * byteWidth(*dtype);
  if (size - dataStart != needed)
    return fail("holds " + std::to_string(size - dataStart) +
                " data bytes, but " + shapeString(shape) + " " +
                std::string(dtypeName(*dtype)) + " needs " +
                std::to_string(needed) + " (truncated file?)");
  out = Tensor(*dtype, shape);
  std::memcpy(out.data(), bytes + dataStart, needed);
  return Status();
}

Status readNpy(const std::string &path, Tensor &out) {
  std::string contents;
  if (Status status = readFile(path, contents); !status)
    return status;
  return parseNpy(reinterpret_cast<const std::byte *>(contents.data()),
                  contents.size(), path, out);
}

std::string serializeNpy(const Tensor &tensor) {
  std::string header = "{'descr': '" + std::string(descrOf(tensor.dtype())) +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : tensor.shape())
    header += std::to_string(dim) + ", ";
  if (!tensor.shape().empty())
    header.erase(header.size() - (tensor.shape().size() == 1 ? 1 : 2));
  header += "), }";
  // Pad with spaces so the data starts 64-byte aligned; end with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string image("\x93NUMPY\x01\x00", 8);
  image.push_back(static_cast<char>(header.size() & 0xff));
  image.push_back(static_cast<char>(header.size() >> 8));
  image += header;
  image.append(reinterpret_cast<const char *>(tensor.data()),
               tensor.byteSize());
  return image;
}

} // namespace gacc::rt
