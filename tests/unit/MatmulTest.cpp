//===- MatmulTest.cpp - the matmul kernels compiled CPU code calls --------===//
//
// gacc_cpu_matmul_{f16,bf16}_f32 against a double-precision reference over
// the widened operands: transposes, broadcast batch dimensions, several
// panels of k, and strided (non-BLAS) layouts. bf16 takes the AVX512-BF16
// kernel where the CPU has it; ctest runs these again with
// GACC_DISABLE_AVX512BF16=1 for the widening path. Each accumulates into C
// and overwrites it (C starting as NaN, which must not be read), and so do
// the f32 and f64 kernels. The embedding gradient's row additions are
// checked against one_hot(ids)ᵀ · dy.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Tensor.h"
#include "gacc/runtime/ThreadPool.h"

#include "MemrefDescriptor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" void gacc_cpu_matmul_f16_f32(int64_t, void *, int64_t, void *,
                                        int64_t, void *, int32_t, int32_t,
                                        int32_t);
extern "C" void gacc_cpu_matmul_bf16_f32(int64_t, void *, int64_t, void *,
                                         int64_t, void *, int32_t, int32_t,
                                         int32_t);
extern "C" void gacc_cpu_embedding_gradient_f32_i32(int64_t, void *, int64_t,
                                                    void *, int64_t, void *,
                                                    int32_t);
extern "C" void gacc_cpu_embedding_gradient_f64_i64(int64_t, void *, int64_t,
                                                    void *, int64_t, void *,
                                                    int32_t);
extern "C" void gacc_cpu_matmul_f32(int64_t, void *, int64_t, void *, int64_t,
                                    void *, int32_t, int32_t, int32_t);
extern "C" void gacc_cpu_matmul_f64(int64_t, void *, int64_t, void *, int64_t,
                                    void *, int32_t, int32_t, int32_t);

using namespace gacc::rt;
using gacc::test::Memref;

namespace {
/// 16-bit values (bits) of random floats rounded to `dtype`, `inner` apart.
std::vector<uint16_t> random16(DType dtype, int64_t count, int64_t inner,
                               std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> bits(static_cast<size_t>(count * inner));
  for (int64_t i = 0; i < count; ++i)
    storeElement(dtype, reinterpret_cast<std::byte *>(bits.data()), i * inner,
                 uniform(rng));
  return bits;
}

float widen(DType dtype, uint16_t bits) {
  return dtype == DType::F16 ? fromF16(bits) : fromBF16(bits);
}

/// C[batch][m][n] (+= 0.5 or = when not `accumulate`) for A [batchA..., m|k,
/// k|m] and B [k|n, n|k].
void check(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, bool ta,
           bool tb, int64_t inner, bool accumulate = true) {
  std::mt19937 rng(static_cast<unsigned>(m * 7 + n * 5 + k * 3 + ta + 2 * tb));
  std::vector<uint16_t> a = random16(dtype, batch * m * k, inner, rng);
  std::vector<uint16_t> b = random16(dtype, k * n, inner, rng);
  std::vector<float> c(static_cast<size_t>(batch * m * n * inner),
                       accumulate ? 0.5f : NAN);
  Memref ma(a.data(), {batch, ta ? k : m, ta ? m : k}, inner);
  Memref mb(b.data(), {tb ? n : k, tb ? k : n}, inner);
  Memref mc(c.data(), {batch, m, n}, inner);
  auto kernel = dtype == DType::F16 ? gacc_cpu_matmul_f16_f32
                                    : gacc_cpu_matmul_bf16_f32;
  kernel(ma.rank(), ma.descriptor(), mb.rank(), mb.descriptor(), mc.rank(),
         mc.descriptor(), ta, tb, accumulate);
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double expected = accumulate ? 0.5 : 0.0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t ai = s * m * k + (ta ? p * m + i : i * k + p);
          int64_t bi = tb ? j * k + p : p * n + j;
          expected += static_cast<double>(widen(dtype, a[ai * inner])) *
                      widen(dtype, b[bi * inner]);
        }
        float got = c[((s * m + i) * n + j) * inner];
        ASSERT_NEAR(got, expected, 1e-5 * std::sqrt(static_cast<double>(k)))
            << "batch " << s << " (" << i << ", " << j << ") m=" << m
            << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb
            << " inner=" << inner << " accumulate=" << accumulate;
      }
}

/// The f32 or f64 kernel on a [2, m, k] x [k, n] product, accumulating into
/// 0.5 or overwriting NaN, against a double-precision reference.
template <typename T>
void checkWide(void (*kernel)(int64_t, void *, int64_t, void *, int64_t, void *,
                              int32_t, int32_t, int32_t),
               int64_t m, int64_t n, int64_t k, int64_t inner,
               bool accumulate) {
  std::mt19937 rng(static_cast<unsigned>(m + n + k + inner));
  std::uniform_real_distribution<T> uniform(-1, 1);
  std::vector<T> a(static_cast<size_t>(2 * m * k * inner)),
      b(static_cast<size_t>(k * n * inner));
  for (T &x : a)
    x = uniform(rng);
  for (T &x : b)
    x = uniform(rng);
  std::vector<T> c(static_cast<size_t>(2 * m * n * inner),
                   accumulate ? T(0.5) : T(NAN));
  Memref ma(a.data(), {2, m, k}, inner), mb(b.data(), {k, n}, inner),
      mc(c.data(), {2, m, n}, inner);
  kernel(ma.rank(), ma.descriptor(), mb.rank(), mb.descriptor(), mc.rank(),
         mc.descriptor(), 0, 0, accumulate);
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double expected = accumulate ? 0.5 : 0.0;
        for (int64_t p = 0; p < k; ++p)
          expected += double(a[((s * m + i) * k + p) * inner]) *
                      double(b[(p * n + j) * inner]);
        ASSERT_NEAR(c[((s * m + i) * n + j) * inner], expected, 1e-4)
            << "(" << s << ", " << i << ", " << j << ") inner=" << inner
            << " accumulate=" << accumulate;
      }
}
} // namespace

TEST(Matmul, OverwriteOrAccumulate) {
  for (bool accumulate : {true, false})
    for (int64_t inner : {1, 2}) { // BLAS, and the loop for strided layouts
      checkWide<float>(gacc_cpu_matmul_f32, 150, 40, 33, inner, accumulate);
      checkWide<double>(gacc_cpu_matmul_f64, 150, 40, 33, inner, accumulate);
    }
  for (DType dtype : {DType::F16, DType::BF16}) {
    // On AVX512-BF16 the first of k's three blocks stores C, the others add.
    check(dtype, 2, 100, 70, 777, false, true, 1, /*accumulate=*/false);
    check(dtype, 2, 3, 5, 4, true, false, 2, /*accumulate=*/false);
    check(dtype, 1, 3, 5, 0, false, false, 1, /*accumulate=*/false);
  }
}

TEST(Matmul, PiecesCoverC) {
  // Cut into three pieces of 336 rows (or columns) and a last one of 292, on
  // the thread pool.
  for (bool accumulate : {true, false}) {
    checkWide<float>(gacc_cpu_matmul_f32, 1300, 200, 100, 1, accumulate);
    checkWide<float>(gacc_cpu_matmul_f32, 200, 1300, 100, 1, accumulate);
  }
}

/// f32 C = op(A) · op(B) into a contiguous C, with A's elements `aInner`
/// apart along its rows (a convolution weight's tap: [F, C] of
/// [F, C, 3, 3], 9 apart) and B column-major (its rows 1 apart): the
/// kernel hands both to BLAS, A packed and B as its transpose.
static void checkStridedOperands(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                          int64_t aInner) {
  std::mt19937 rng(static_cast<unsigned>(m + 3 * n + 5 * k + ta + 2 * tb));
  std::uniform_real_distribution<float> uniform(-1, 1);
  int64_t aRows = ta ? k : m, aCols = ta ? m : k;
  int64_t bRows = tb ? n : k, bCols = tb ? k : n;
  std::vector<float> a(static_cast<size_t>(aRows * aCols * aInner)),
      b(static_cast<size_t>(bRows * bCols)), c(static_cast<size_t>(m * n), NAN);
  for (float &x : a)
    x = uniform(rng);
  for (float &x : b)
    x = uniform(rng);
  auto aAt = [&](int64_t i, int64_t j) { return a[(i * aCols + j) * aInner]; };
  auto bAt = [&](int64_t i, int64_t j) { return b[j * bRows + i]; };
  Memref ma(a.data(), {1, aRows, aCols}, {0, aCols * aInner, aInner});
  Memref mb(b.data(), {bRows, bCols}, {1, bRows});
  Memref mc(c.data(), {1, m, n});
  gacc_cpu_matmul_f32(ma.rank(), ma.descriptor(), mb.rank(), mb.descriptor(),
                      mc.rank(), mc.descriptor(), ta, tb, /*accumulate=*/0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t p = 0; p < k; ++p)
        expected += double(ta ? aAt(p, i) : aAt(i, p)) *
                    double(tb ? bAt(j, p) : bAt(p, j));
      ASSERT_NEAR(c[i * n + j], expected, 1e-4)
          << "(" << i << ", " << j << ") ta=" << ta << " tb=" << tb;
    }
}

TEST(Matmul, StridedOperandsGoToBlas) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      checkStridedOperands(300, 40, 70, ta, tb, 9);
      // Edges: one row of op(A), one column of op(B) and k = 1.
      checkStridedOperands(1, 40, 70, ta, tb, 9);
      checkStridedOperands(300, 1, 1, ta, tb, 9);
    }
}

TEST(Matmul16, HalfAndBFloatAccumulateInF32) {
  for (DType dtype : {DType::F16, DType::BF16})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check(dtype, 1, 5, 7, 3, ta, tb, 1);
        check(dtype, 3, 4, 6, 9, ta, tb, 1); // B broadcast over A's batch
      }
}

TEST(Matmul16, ManyPanelsOfK) {
  // m + n = 2048 gives panels of 512: k = 1500 takes three.
  check(DType::BF16, 1, 64, 1984, 1500, false, true, 1);
}

TEST(Matmul16, Bf16BlocksAndEdges) {
  // On AVX512-BF16, GemmBf16.cpp's blocking: m past a block of 96 rows and
  // not a multiple of the 12-row tile, n not a multiple of 32, odd k past
  // a block of 384, every transpose.
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      check(DType::BF16, 2, 100, 70, 777, ta, tb, 1);
}

TEST(Matmul16, StridedLayoutsTakeTheLoop) {
  check(DType::F16, 2, 3, 5, 4, true, false, 2);
}

/// The embedding gradient's rows added at their ids, against one_hot(ids)ᵀ ·
/// dy: 300 positions into 17 rows of width 130 (more than one chunk of
/// columns), ids out of range adding nothing, overwriting NaN or adding to
/// 0.5, and the same bits on 1 and 4 threads.
template <typename T, typename Id>
void checkEmbeddingGradient(void (*kernel)(int64_t, void *, int64_t, void *,
                                           int64_t, void *, int32_t),
                            bool accumulate) {
  constexpr int64_t positions = 300, rows = 17, width = 130;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_int_distribution<int> draw(-2, rows + 1);
  std::vector<Id> ids(positions);
  for (Id &id : ids)
    id = static_cast<Id>(draw(rng));
  std::vector<T> dy(positions * width);
  for (T &x : dy)
    x = static_cast<T>(uniform(rng));
  std::vector<std::vector<T>> results;
  int saved = gacc::rt::threads();
  for (int threads : {1, 4}) {
    gacc::rt::setThreads(threads);
    std::vector<T> c(rows * width, accumulate ? T(0.5) : T(NAN));
    Memref mi(ids.data(), {3, positions / 3});
    Memref md(dy.data(), {positions, width}), mc(c.data(), {rows, width});
    kernel(mi.rank(), mi.descriptor(), md.rank(), md.descriptor(), mc.rank(),
           mc.descriptor(), accumulate);
    results.push_back(c);
  }
  gacc::rt::setThreads(saved);
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(),
                        results[0].size() * sizeof(T)),
            0);
  for (int64_t v = 0; v < rows; ++v)
    for (int64_t j = 0; j < width; ++j) {
      double expected = accumulate ? 0.5 : 0.0;
      for (int64_t p = 0; p < positions; ++p)
        if (ids[p] == v)
          expected += double(dy[p * width + j]);
      ASSERT_NEAR(results[0][v * width + j], expected, 1e-4)
          << "row " << v << " column " << j << " accumulate " << accumulate;
    }
}

TEST(EmbeddingGradient, RowsAddedAtTheirIds) {
  for (bool accumulate : {false, true}) {
    checkEmbeddingGradient<float, int32_t>(gacc_cpu_embedding_gradient_f32_i32,
                                           accumulate);
    checkEmbeddingGradient<double, int64_t>(gacc_cpu_embedding_gradient_f64_i64,
                                            accumulate);
  }
}
