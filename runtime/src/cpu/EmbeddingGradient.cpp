//===- EmbeddingGradient.cpp - an embedding table's gradient by rows ------===//
//
// What compiled CPU code calls for `one_hot(ids)ᵀ · dy`, the gradient of a
// gacc.embedding (compiler/target/cpu/MatmulToCall.cpp): each row of dy
// added into the row of its id, instead of a [V x P] · [P x D] product (at
// GPT-2's vocabulary, 39.5 G multiply-adds a step for 0.8 M additions).
// Ids outside [0, V) add nothing, as their one-hot rows are zero.
//
// The columns are cut into chunks on the thread pool; each chunk adds the
// rows in position order, so the sums do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/ThreadPool.h"

#include "MemrefView.h"

#include <algorithm>
#include <cstdint>

using gacc::rt::View;

namespace {
/// C [V, D] (+)= the rows of dy [P, D] added at ids [P...] (any shape,
/// contiguous).
template <typename T, typename Id>
void addRows(int64_t rankIds, void *descIds, int64_t rankDy, void *descDy,
             int64_t rankC, void *descC, int32_t accumulate) {
  View<Id> ids(rankIds, descIds);
  View<T> dy(rankDy, descDy), c(rankC, descC);
  int64_t positions = 1;
  for (int64_t d = 0; d < rankIds; ++d)
    positions *= ids.sizes[d];
  int64_t rows = c.size(2), width = c.size(1);
  int64_t dyRow = dy.stride(2), dyCol = dy.stride(1);
  int64_t cRow = c.stride(2), cCol = c.stride(1);
  // Chunks of 64 columns: a cache line of each row per position.
  constexpr int64_t kColumns = 64;
  gacc::rt::parallelFor(width, kColumns, [&](int64_t begin, int64_t end) {
    if (!accumulate)
      for (int64_t v = 0; v < rows; ++v)
        for (int64_t j = begin; j < end; ++j)
          c.data[v * cRow + j * cCol] = T(0);
    for (int64_t p = 0; p < positions; ++p) {
      int64_t id = static_cast<int64_t>(ids.data[p]);
      if (id < 0 || id >= rows)
        continue;
      T *out = c.data + id * cRow;
      const T *in = dy.data + p * dyRow;
      for (int64_t j = begin; j < end; ++j)
        out[j * cCol] += in[j * dyCol];
    }
  });
}
} // namespace

#define GACC_EMBEDDING_GRADIENT(NAME, T, ID)                                   \
  extern "C" void NAME(int64_t rankIds, void *ids, int64_t rankDy, void *dy,   \
                       int64_t rankC, void *c, int32_t accumulate) {           \
    addRows<T, ID>(rankIds, ids, rankDy, dy, rankC, c, accumulate);            \
  }
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f32_i32, float, int32_t)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f32_i64, float, int64_t)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f64_i32, double, int32_t)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f64_i64, double, int64_t)
#undef GACC_EMBEDDING_GRADIENT
