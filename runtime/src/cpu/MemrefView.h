//===- MemrefView.h - MLIR memref descriptors in kernels ------*- C++ -*-===//
//
// How the CPU kernels that compiled code calls with unranked memrefs
// (Matmul.cpp, EmbeddingGradient.cpp, Attention.cpp) read a ranked
// descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CPU_MEMREFVIEW_H
#define GACC_RUNTIME_CPU_MEMREFVIEW_H

#include <cstdint>
#include <vector>

namespace gacc::rt {

/// A ranked memref descriptor: allocated, aligned, offset, sizes, strides.
template <typename T> struct View {
  int64_t rank;
  T *data;
  const int64_t *sizes;
  const int64_t *strides;

  View(int64_t rank, void *descriptor) : rank(rank) {
    auto *fields = static_cast<int64_t *>(descriptor);
    data = reinterpret_cast<T *>(fields[1]) + fields[2];
    sizes = fields + 3;
    strides = fields + 3 + rank;
  }
  int64_t size(int64_t fromEnd) const { return sizes[rank - fromEnd]; }
  int64_t stride(int64_t fromEnd) const { return strides[rank - fromEnd]; }
  /// The offset of batch index `index` (C's batch dimensions), broadcasting
  /// this view's leading dimensions.
  int64_t batchOffset(const std::vector<int64_t> &index) const {
    int64_t offset = 0, batchRank = rank - 2, lead = index.size() - batchRank;
    for (int64_t d = 0; d < batchRank; ++d)
      if (sizes[d] != 1)
        offset += index[lead + d] * strides[d];
    return offset;
  }
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPU_MEMREFVIEW_H
