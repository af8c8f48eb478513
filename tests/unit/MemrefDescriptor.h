//===- MemrefDescriptor.h - memref descriptors over test data ---*- C++ -*-===//
//
// The ranked memref descriptors (allocated, aligned, offset, sizes,
// strides) that the runtime's CPU kernels read through unranked memrefs
// (MatmulTest.cpp, AttentionTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_TESTS_UNIT_MEMREFDESCRIPTOR_H
#define GACC_TESTS_UNIT_MEMREFDESCRIPTOR_H

#include <cstdint>
#include <vector>

namespace gacc::test {

/// The row-major strides of `sizes`, the innermost `inner`.
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &sizes,
                                            int64_t inner = 1) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = inner;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

/// A memref descriptor over `data`, which it does not own.
struct Memref {
  std::vector<int64_t> fields;

  Memref(const void *data, const std::vector<int64_t> &sizes,
         const std::vector<int64_t> &strides) {
    fields = {reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data),
              0};
    fields.insert(fields.end(), sizes.begin(), sizes.end());
    fields.insert(fields.end(), strides.begin(), strides.end());
  }
  /// Row-major with the innermost stride `inner`.
  Memref(const void *data, const std::vector<int64_t> &sizes, int64_t inner = 1)
      : Memref(data, sizes, rowMajorStrides(sizes, inner)) {}

  int64_t rank() const { return (static_cast<int64_t>(fields.size()) - 3) / 2; }
  void *descriptor() { return fields.data(); }
};

} // namespace gacc::test

#endif // GACC_TESTS_UNIT_MEMREFDESCRIPTOR_H
