//===- MemrefCopy.cpp - the strided copy compiled code calls ----------------===//
//
// MLIR lowers memref.copy between non-contiguous layouts to a call of
// `memrefCopy` (otherwise found in libmlir_c_runner_utils, which the
// runtime does not depend on). Same signature and semantics.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
/// The ranked descriptor: allocated, aligned, offset, sizes[rank],
/// strides[rank].
struct Strided {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t shape[];
};
} // namespace

extern "C" void memrefCopy(int64_t elementSize, UnrankedMemRef *source,
                           UnrankedMemRef *target) {
  int64_t rank = source->rank;
  auto *src = static_cast<Strided *>(source->descriptor);
  auto *dst = static_cast<Strided *>(target->descriptor);
  const int64_t *sizes = src->shape;
  const int64_t *srcStrides = src->shape + rank;
  const int64_t *dstStrides = dst->shape + rank;
  char *from = src->aligned + src->offset * elementSize;
  char *to = dst->aligned + dst->offset * elementSize;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  // Odometer over the indices; one element at a time.
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      srcOffset += index[d] * srcStrides[d];
      dstOffset += index[d] * dstStrides[d];
    }
    std::memcpy(to + dstOffset * elementSize, from + srcOffset * elementSize,
                elementSize);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
