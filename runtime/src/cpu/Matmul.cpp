//===- Matmul.cpp - the matmul kernel compiled CPU code calls -------------===//
//
// Compiled steps call gacc_cpu_matmul_<type> for every matmul (see
// compiler/target/cpu/MatmulToCall.cpp): C += op(A) · op(B) over broadcast
// batch dimensions, on MLIR unranked memref descriptors, or C = op(A) · op(B)
// when `accumulate` is 0 (the compiler drops the zero fill it replaces). C is
// cut into blocks (each batch, and within it ranges of rows or columns, by the
// shapes alone) that the runtime's thread pool runs, each one single-threaded
// BLAS call: BLAS and the step's loops share the cores, and results do not
// depend on the thread count. Operands go to OpenBLAS as they are when
// their rows or columns are contiguous, packed otherwise; a C with neither
// takes a plain loop, so every layout is correct.
//
// f16 and bf16 operands accumulate into f32 C. bf16 on a CPU with
// AVX512-BF16 takes GemmBf16.cpp's dot products; otherwise BLAS gets the
// operands widened one panel of k at a time.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Tensor.h"
#include "gacc/runtime/ThreadPool.h"

#include "Blas.h"
#include "GemmBf16.h"
#include "HalfTypes.h"
#include "MemrefView.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

using gacc::rt::BFloat16;
using gacc::rt::gemm;
using gacc::rt::Half;
using gacc::rt::SingleThreadedBlas;
using gacc::rt::View;

namespace {
/// A row-major matrix with element strides: `row` between rows, `col`
/// between columns.
template <typename T> struct Strided {
  T *data;
  int64_t row, col;
  T &at(int64_t i, int64_t j) const { return data[i * row + j * col]; }
};

/// Zeroes an m x n block of C.
template <typename T> void zero(Strided<T> c, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    if (c.col == 1)
      std::fill_n(&c.at(i, 0), n, T(0));
    else
      for (int64_t j = 0; j < n; ++j)
        c.at(i, j) = T(0);
}

/// C += op(A) · op(B) by loops, for the layouts BLAS does not take.
template <typename T>
void loopGemm(Strided<const T> a, Strided<const T> b, Strided<T> c, bool ta,
              bool tb, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? a.at(p, i) : a.at(i, p)) * (tb ? b.at(j, p) : b.at(p, j));
      c.at(i, j) += sum;
    }
}

/// A block of C: a batch index and rows [i0, i1), columns [j0, j1).
struct Block {
  std::vector<int64_t> index;
  int64_t i0, i1, j0, j1;
};

/// Calls body(block) for the blocks of C ([batch..., m, n], `rank` of
/// `sizes`) on the thread pool. Each batch is cut along the longer of its
/// rows and columns into an even number of pieces (at most 16, so that two
/// threads share them evenly) of at most 512 rows or columns: every piece
/// packs the whole of the other operand, and at 128 rows or columns that
/// packing took a fifth of GPT-2-small's step. A piece keeps at least about
/// 2 M multiply-adds (tens of microseconds) and 128 rows or columns, in
/// multiples of 16 (BLAS's register tiles).
template <typename F>
void forEachBlock(int64_t rank, const int64_t *sizes, int64_t k, F body) {
  constexpr int64_t kMinBlockWork = int64_t(1) << 21;
  constexpr int64_t kMinBlockExtent = 128, kMaxBlockExtent = 512,
                    kMaxPieces = 16;
  int64_t m = sizes[rank - 2], n = sizes[rank - 1], batches = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batches *= sizes[d];
  bool byRows = m >= n;
  int64_t extent = byRows ? m : n;
  int64_t wanted = (extent + kMaxBlockExtent - 1) / kMaxBlockExtent;
  wanted = std::min(kMaxPieces, std::max<int64_t>((wanted + 1) / 2 * 2, 2));
  int64_t pieces = std::clamp<int64_t>(
      m * n * std::max<int64_t>(k, 1) / kMinBlockWork, 1,
      std::min(wanted, std::max<int64_t>(extent / kMinBlockExtent, 1)));
  if (pieces > 1)
    pieces -= pieces % 2;
  int64_t step = (extent + pieces - 1) / pieces;
  step = std::max<int64_t>((step + 15) / 16 * 16, 1);
  int64_t perBatch = std::max<int64_t>((extent + step - 1) / step, 1);
  gacc::rt::parallelFor(batches * perBatch, 1, [&](int64_t begin,
                                                    int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      Block block{std::vector<int64_t>(rank - 2), 0, m, 0, n};
      for (int64_t d = rank - 3, batch = b / perBatch; d >= 0; --d) {
        block.index[d] = batch % sizes[d];
        batch /= sizes[d];
      }
      int64_t lo = b % perBatch * step, hi = std::min(lo + step, extent);
      (byRows ? block.i0 : block.j0) = lo;
      (byRows ? block.i1 : block.j1) = hi;
      body(block);
    }
  });
}

/// What one block of C multiplies: op(A)'s rows [i0, i1) (A: [m, k], or
/// [k, m] when transposed), op(B)'s columns [j0, j1) and C's block, each by
/// its first element, and the block's sizes.
template <typename T, typename TC> struct BlockOperands {
  const T *a;
  const T *b;
  TC *c;
  int64_t m, n;

  BlockOperands(const View<T> &va, const View<T> &vb, const View<TC> &vc,
                bool ta, bool tb, const Block &block)
      : a(va.data + va.batchOffset(block.index) +
          block.i0 * (ta ? va.stride(1) : va.stride(2))),
        b(vb.data + vb.batchOffset(block.index) +
          block.j0 * (tb ? vb.stride(2) : vb.stride(1))),
        c(vc.data + vc.batchOffset(block.index) + block.i0 * vc.stride(2) +
          block.j0 * vc.stride(1)),
        m(block.i1 - block.i0), n(block.j1 - block.j0) {}
};

/// An operand as BLAS takes it: `data` with unit stride along its rows
/// (`ld` between them), transposed or not.
template <typename T> struct BlasOperand {
  const T *data;
  int64_t ld;
  bool transposed;
};

/// The `rows` x `cols` matrix op(X) at `data` (X's strides `row`, `col`,
/// transposed by `t`) as BLAS takes it: as it is when X's rows or columns
/// are contiguous, else packed into `scratch`. A slice of a convolution's
/// weight is [F, C] with a stride of KH·KW between its columns, which a
/// plain loop multiplied about 10 times slower than packing and BLAS.
template <typename T>
BlasOperand<T> asBlasOperand(const T *data, int64_t row, int64_t col, bool t,
                             int64_t rows, int64_t cols,
                             std::vector<T> &scratch) {
  // X itself is [rows, cols] untransposed, [cols, rows] transposed.
  int64_t xRows = t ? cols : rows, xCols = t ? rows : cols;
  if (col == 1 && (row >= xCols || xRows == 1))
    return {data, std::max(row, xCols), t};
  if (row == 1 && (col >= xRows || xCols == 1))
    return {data, std::max(col, xRows), !t};
  scratch.resize(xRows * xCols);
  for (int64_t i = 0; i < xRows; ++i)
    for (int64_t j = 0; j < xCols; ++j)
      scratch[i * xCols + j] = data[i * row + j * col];
  return {scratch.data(), xCols, t};
}

template <typename T>
void matmul(int64_t rankA, void *descA, int64_t rankB, void *descB,
            int64_t rankC, void *descC, int32_t ta, int32_t tb,
            int32_t accumulate) {
  View<T> a(rankA, descA), b(rankB, descB), c(rankC, descC);
  int64_t k = ta ? a.size(2) : a.size(1);
  SingleThreadedBlas singleThreaded;
  forEachBlock(rankC, c.sizes, k, [&](const Block &block) {
    BlockOperands<T, T> x(a, b, c, ta, tb, block);
    if (c.stride(1) == 1) {
      std::vector<T> packedA, packedB;
      BlasOperand<T> pa = asBlasOperand(x.a, a.stride(2), a.stride(1), ta, x.m,
                                        k, packedA),
                     pb = asBlasOperand(x.b, b.stride(2), b.stride(1), tb, k,
                                        x.n, packedB);
      return gemm(pa.data, pb.data, x.c, pa.transposed, pb.transposed, x.m,
                  x.n, k, pa.ld, pb.ld, c.stride(2), T(accumulate ? 1 : 0));
    }
    Strided<T> blockC{x.c, c.stride(2), c.stride(1)};
    if (!accumulate)
      zero(blockC, x.m, x.n);
    loopGemm<T>({x.a, a.stride(2), a.stride(1)},
                {x.b, b.stride(2), b.stride(1)}, blockC, ta, tb, x.m, x.n, k);
  });
}

#if defined(__x86_64__)
/// IEEE halves to floats with F16C, eight at a time.
__attribute__((target("avx,f16c"))) void widenF16C(const Half *src,
                                                   float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(
                         reinterpret_cast<const __m128i *>(src + i))));
  for (; i < n; ++i)
    dst[i] = gacc::rt::fromF16(src[i].bits);
}
const bool hasF16C = __builtin_cpu_supports("f16c");
#endif

/// `n` elements of `src`, `stride` apart, widened into `dst`.
void widen(const Half *src, int64_t stride, float *dst, int64_t n) {
#if defined(__x86_64__)
  if (stride == 1 && hasF16C)
    return widenF16C(src, dst, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = gacc::rt::fromF16(src[i * stride].bits);
}
void widen(const BFloat16 *src, int64_t stride, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t wide = static_cast<uint32_t>(src[i * stride].bits) << 16;
    std::memcpy(dst + i, &wide, sizeof(float));
  }
}

/// C (f32) += op(A) · op(B) for 16-bit A and B: each panel of at most
/// `panel` steps of k is widened into f32 buffers that keep the operands'
/// orientation (so every row widens as one run) and multiplied by BLAS; the
/// f32 copies stay small.
template <typename T>
void widenedMatmul(int64_t rankA, void *descA, int64_t rankB, void *descB,
                   int64_t rankC, void *descC, int32_t ta, int32_t tb,
                   int32_t accumulate) {
  View<T> a(rankA, descA), b(rankB, descB);
  View<float> c(rankC, descC);
  int64_t k = ta ? a.size(2) : a.size(1);
  SingleThreadedBlas singleThreaded;
  forEachBlock(rankC, c.sizes, k, [&](const Block &block) {
    BlockOperands<T, float> x(a, b, c, ta, tb, block);
    const T *ba = x.a, *bb = x.b;
    float *bc = x.c;
    int64_t m = x.m, n = x.n;
    // bf16 on AVX512-BF16: dot products of the operands as they are, the
    // first block of k storing C (no pass of zeros).
    if constexpr (std::is_same_v<T, BFloat16>)
      if (c.stride(1) == 1 && gacc::rt::hasBf16Dot()) {
        auto bits = [](const BFloat16 *p) {
          return reinterpret_cast<const uint16_t *>(p);
        };
        gacc::rt::gemmBf16(bits(ba), ta ? a.stride(1) : a.stride(2),
                           ta ? a.stride(2) : a.stride(1), bits(bb),
                           tb ? b.stride(1) : b.stride(2),
                           tb ? b.stride(2) : b.stride(1), bc, c.stride(2), m,
                           n, k, accumulate);
        return;
      }
    // Zeroed here, block by block on the pool, where the fill was a pass of
    // its own.
    if (!accumulate)
      zero(Strided<float>{bc, c.stride(2), c.stride(1)}, m, n);
    // About 4 MiB of f32 panels per thread, kept between calls.
    int64_t panel = std::clamp<int64_t>(
        (1 << 20) / std::max<int64_t>(m + n, 1), 1, std::max<int64_t>(k, 1));
    thread_local std::vector<float> pa, pb;
    pa.resize(static_cast<size_t>(m * panel));
    pb.resize(static_cast<size_t>(panel * n));
    for (int64_t p0 = 0; p0 < k; p0 += panel) {
      int64_t kp = std::min(panel, k - p0);
      // op(A)'s panel: [m, kp] stored as A is, [kp, m] when transposed.
      if (ta)
        for (int64_t p = 0; p < kp; ++p)
          widen(ba + (p0 + p) * a.stride(2), a.stride(1), &pa[p * m], m);
      else
        for (int64_t i = 0; i < m; ++i)
          widen(ba + i * a.stride(2) + p0 * a.stride(1), a.stride(1),
                &pa[i * kp], kp);
      // op(B)'s panel: [kp, n], or [n, kp] when transposed.
      if (tb)
        for (int64_t j = 0; j < n; ++j)
          widen(bb + j * b.stride(2) + p0 * b.stride(1), b.stride(1),
                &pb[j * kp], kp);
      else
        for (int64_t p = 0; p < kp; ++p)
          widen(bb + (p0 + p) * b.stride(2), b.stride(1), &pb[p * n], n);
      int64_t lda = ta ? m : kp, ldb = tb ? kp : n;
      if (c.stride(1) == 1)
        gemm(pa.data(), pb.data(), bc, ta, tb, m, n, kp, lda, ldb, c.stride(2),
             1.0f);
      else
        loopGemm<float>({pa.data(), lda, 1}, {pb.data(), ldb, 1},
                        {bc, c.stride(2), c.stride(1)}, ta, tb, m, n, kp);
    }
  });
}
} // namespace

#define GACC_MATMUL(NAME, KERNEL)                                              \
  extern "C" void NAME(int64_t rankA, void *a, int64_t rankB, void *b,         \
                       int64_t rankC, void *c, int32_t transposeA,             \
                       int32_t transposeB, int32_t accumulate) {               \
    KERNEL(rankA, a, rankB, b, rankC, c, transposeA, transposeB, accumulate);  \
  }
GACC_MATMUL(gacc_cpu_matmul_f32, matmul<float>)
GACC_MATMUL(gacc_cpu_matmul_f64, matmul<double>)
GACC_MATMUL(gacc_cpu_matmul_f16_f32, widenedMatmul<Half>)
GACC_MATMUL(gacc_cpu_matmul_bf16_f32, widenedMatmul<BFloat16>)
#undef GACC_MATMUL
