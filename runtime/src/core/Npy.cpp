//===- Npy.cpp - read and write NumPy .npy files ----------------------------===//

#include "gacc/runtime/Npy.h"
#include "gacc/runtime/File.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace gacc::rt {

namespace {
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header, the Python dict literal NumPy writes:
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// padded with spaces and a newline. Exactly these three keys, in any
/// order; anything else is an error (never guessed at). Returns the error.
std::string parseHeader(const std::string &text, NpyHeader &out) {
  size_t at = 0;
  auto skipSpaces = [&] {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n'))
      ++at;
  };
  auto consume = [&](char c) {
    skipSpaces();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  };
  auto string = [&](std::string &value) {
    skipSpaces();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return false;
    size_t close = text.find(text[at], at + 1);
    if (close == std::string::npos)
      return false;
    value = text.substr(at + 1, close - at - 1);
    at = close + 1;
    return true;
  };
  auto keyword = [&](const char *word) {
    skipSpaces();
    size_t length = std::strlen(word);
    if (text.compare(at, length, word) != 0)
      return false;
    at += length;
    return true;
  };
  auto dimension = [&](int64_t &value) {
    skipSpaces();
    size_t begin = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9')
      ++at;
    if (at == begin || at - begin > 15)
      return false;
    value = std::stoll(text.substr(begin, at - begin));
    return true;
  };

  bool seenDescr = false, seenOrder = false, seenShape = false;
  if (!consume('{'))
    return "expected '{'";
  while (!consume('}')) {
    std::string key;
    if (!string(key) || !consume(':'))
      return "expected a quoted key and ':'";
    if (key == "descr" && !seenDescr) {
      seenDescr = string(out.descr);
      if (!seenDescr)
        return "'descr' is not a string";
    } else if (key == "fortran_order" && !seenOrder) {
      out.fortranOrder = keyword("True");
      seenOrder = out.fortranOrder || keyword("False");
      if (!seenOrder)
        return "'fortran_order' is not True or False";
    } else if (key == "shape" && !seenShape) {
      if (!consume('('))
        return "'shape' is not a tuple";
      while (!consume(')')) {
        int64_t dim;
        if (!dimension(dim))
          return "'shape' holds something other than a dimension";
        out.shape.push_back(dim);
        // A 1-tuple needs its comma, "(3,)"; the last may omit it.
        if (!consume(',') && !(skipSpaces(), at < text.size() && text[at] == ')'))
          return "expected ',' or ')' in 'shape'";
      }
      seenShape = true;
    } else {
      return "unexpected or repeated key '" + key + "'";
    }
    if (!consume(',') && !(skipSpaces(), at < text.size() && text[at] == '}'))
      return "expected ',' or '}'";
  }
  skipSpaces();
  if (at != text.size())
    return "unexpected text after the dict";
  if (!seenDescr || !seenOrder || !seenShape)
    return "'descr', 'fortran_order' and 'shape' are all required";
  return "";
}

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

namespace {
/// parseNpyLayout of an image of `size` bytes of which `bytes` holds the
/// first `available` (at least its header, or an error says it is cut).
Status parseLayout(const std::byte *bytes, size_t available, uint64_t size,
                   const std::string &origin, NpyLayout &out) {
  auto fail = [&](const std::string &why) {
    return Status::error(origin + ": " + why);
  };
  static const char magic[] = "\x93NUMPY";
  if (available < 10 || std::memcmp(bytes, magic, 6) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<size_t>(bytes[8]) |
                   static_cast<size_t>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (available < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | static_cast<size_t>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return fail("unsupported .npy version " + std::to_string(major));
  }
  if (headerLength > available - headerStart)
    return fail("truncated header");
  std::string header(reinterpret_cast<const char *>(bytes + headerStart),
                     headerLength);

  NpyHeader parsed;
  if (std::string error = parseHeader(header, parsed); !error.empty())
    return fail("malformed header: " + error);
  std::optional<DType> dtype = dtypeOfDescr(parsed.descr);
  if (!dtype)
    return fail("unsupported dtype '" + parsed.descr +
                "' (little-endian f2/f4/f8, i1/u1/i4/i8 or bool)");
  if (parsed.fortranOrder)
    return fail("Fortran-order arrays are not supported; save a C-order copy");
  const std::vector<int64_t> &shape = parsed.shape;
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
  out = NpyLayout{*dtype, shape, dataStart};
  return Status();
}
} // namespace

Status parseNpyLayout(const std::byte *bytes, size_t size,
                      const std::string &origin, NpyLayout &out) {
  return parseLayout(bytes, size, size, origin, out);
}

Status readNpyLayout(const RandomAccessFile &file, NpyLayout &out) {
  // The header: its length is in bytes 8-11 (version 2 and 3) or 8-9.
  std::string prefix(std::min<uint64_t>(file.size(), 12), '\0');
  if (Status s = file.read(0, prefix.size(), prefix.data()); !s)
    return s;
  size_t headerEnd = prefix.size();
  if (prefix.size() >= 10) {
    auto byte = [&](int i) { return static_cast<uint8_t>(prefix[i]); };
    size_t length = prefix[6] == 1 ? byte(8) | byte(9) << 8
                    : prefix.size() < 12
                        ? 0
                        : byte(8) | byte(9) << 8 | byte(10) << 16 |
                              static_cast<size_t>(byte(11)) << 24;
    headerEnd =
        std::min<uint64_t>(file.size(), (prefix[6] == 1 ? 10 : 12) + length);
  }
  std::string header(headerEnd, '\0');
  if (Status s = file.read(0, header.size(), header.data()); !s)
    return s;
  return parseLayout(reinterpret_cast<const std::byte *>(header.data()),
                     header.size(), file.size(), file.path(), out);
}

Status parseNpy(const std::byte *bytes, size_t size, const std::string &origin,
                Tensor &out) {
  NpyLayout layout;
  if (Status status = parseNpyLayout(bytes, size, origin, layout); !status)
    return status;
  out = Tensor(layout.dtype, layout.shape);
  if (out.byteSize())
    std::memcpy(out.data(), bytes + layout.dataOffset, out.byteSize());
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
