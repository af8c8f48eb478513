//===- Npy.h - read and write NumPy .npy files --------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_NPY_H
#define GACC_RUNTIME_NPY_H

#include "gacc/runtime/File.h"
#include "gacc/runtime/Tensor.h"

namespace gacc::rt {

/// Where the array of a .npy image lies, and what it holds.
struct NpyLayout {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t dataOffset = 0; ///< bytes from the image's start
};
/// Parses and checks the header of a .npy image (see parseNpy) without
/// copying its data; readNpyLayout reads just the header of a file, for
/// arrays read a row at a time.
Status parseNpyLayout(const std::byte *bytes, size_t size,
                      const std::string &origin, NpyLayout &out);
Status readNpyLayout(const RandomAccessFile &file, NpyLayout &out);
/// Parses a little-endian, C-order .npy image (format versions 1 to 3) of
/// f2/f4/f8, i1/u1/i4/i8 or bool; `origin` names it in errors.
Status parseNpy(const std::byte *bytes, size_t size, const std::string &origin,
                Tensor &out);
Status readNpy(const std::string &path, Tensor &out);
/// A version 1.0 image of `tensor`.
std::string serializeNpy(const Tensor &tensor);

} // namespace gacc::rt

#endif // GACC_RUNTIME_NPY_H
