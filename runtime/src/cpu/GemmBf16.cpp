//===- GemmBf16.cpp - bf16 matmuls on AVX512-BF16 dot products ------------===//
//
// C (f32) = or += op(A) · op(B) for bf16 A and B with the CPU's VDPBF16PS,
// which multiplies pairs of bf16 along k and adds both products to an f32
// accumulator: twice the multiply-adds of an f32 FMA per instruction, and
// no widened copies of the operands. Organized as BLIS is: B is packed a
// kc x nc block at a time into strips of 32 columns holding k in pairs, A
// an mc x kc block at a time into panels of 12 rows of pairs, and a 12 x 32
// micro-kernel keeps its tile of C in 24 registers over the block's k.
// Packing pads with zeros, so the kernel always runs whole tiles and only
// its stores are masked. The first block of k stores C rather than adding
// to it, so C = A·B needs no pass of zeros. The order of the sums is fixed
// by the shapes.
//
//===----------------------------------------------------------------------===//

#include "GemmBf16.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics start some results from an undefined vector,
// which -W(maybe-)uninitialized reports at every use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace gacc::rt {
namespace {
constexpr int64_t kRows = 12;    // MR: rows of the micro-kernel's tile
constexpr int64_t kColumns = 32; // NR: two registers of 16 floats
constexpr int64_t kDepth = 384;  // kc: a strip of B (24 KiB) stays in L1
constexpr int64_t kBlockRows = 8 * kRows;    // mc: A's block (72 KiB) in L2
constexpr int64_t kBlockColumns = 48 * kColumns; // nc

#if defined(__x86_64__)
#define GACC_BF16_TARGET                                                       \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/// C's tile [rows x 32] (rows <= 12, columns masked) = (or, with `add`,
/// +=) the dot products of `pairs` pairs of A's panel and B's strip.
GACC_BF16_TARGET void microKernel(int64_t pairs, const uint32_t *a,
                                  const uint16_t *b, float *c, int64_t ldc,
                                  int64_t rows, __mmask16 low, __mmask16 high,
                                  bool add) {
  __m512 acc[kRows][2];
#pragma GCC unroll 12
  for (int64_t i = 0; i < kRows; ++i)
    acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + p * 2 * kColumns);
    __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + p * 2 * kColumns + 32);
#pragma GCC unroll 12
    for (int64_t i = 0; i < kRows; ++i) {
      __m512bh ai = (__m512bh)_mm512_set1_epi32(a[p * kRows + i]);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
    }
  }
#pragma GCC unroll 12
  for (int64_t i = 0; i < kRows; ++i) {
    if (i >= rows)
      break;
    float *row = c + i * ldc;
    if (add) {
      acc[i][0] = _mm512_add_ps(_mm512_maskz_loadu_ps(low, row), acc[i][0]);
      acc[i][1] =
          _mm512_add_ps(_mm512_maskz_loadu_ps(high, row + 16), acc[i][1]);
    }
    _mm512_mask_storeu_ps(row, low, acc[i][0]);
    _mm512_mask_storeu_ps(row + 16, high, acc[i][1]);
  }
}

/// The indices that interleave two vectors of 32 bf16 into pairs:
/// (x[j], y[j]) for j < 16 with kLow, j >= 16 with kHigh
/// (_mm512_permutex2var_epi16 numbers y's lanes from 32).
GACC_BF16_TARGET __m512i interleaveIndices(int first) {
  alignas(64) uint16_t lanes[32];
  for (int j = 0; j < 16; ++j) {
    lanes[2 * j] = static_cast<uint16_t>(first + j);
    lanes[2 * j + 1] = static_cast<uint16_t>(32 + first + j);
  }
  return _mm512_load_si512(lanes);
}

/// Transposes the 16 x 16 32-bit words in `rows`.
GACC_BF16_TARGET void transpose16x16(__m512i rows[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(rows[i], rows[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(rows[i], rows[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    rows[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    rows[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    rows[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    rows[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_i32x4(rows[i + j], rows[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_i32x4(rows[i + j], rows[i + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    rows[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
    rows[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
  }
}

/// A[i0 + i, p0 + p] for i < mc, p < kc into panels of 12 rows: panel r
/// holds pairs (p, p + 1) of its rows as [pairs][12] 32-bit words; rows and
/// the odd k past the block are zeros. Whole panels take vector code:
/// 16 x 16 transposes of pairs when rows run along k (A as stored), an
/// interleave of two k-rows when they run along m (A transposed).
GACC_BF16_TARGET void packA(const uint16_t *a, int64_t rowStride,
                            int64_t colStride, int64_t mc, int64_t kc,
                            uint32_t *packed) {
  const __m512i low = interleaveIndices(0);
  constexpr __mmask16 kPanel = (1u << kRows) - 1;
  int64_t pairs = (kc + 1) / 2;
  for (int64_t r = 0; r < mc; r += kRows, packed += pairs * kRows) {
    int64_t rows = std::min(kRows, mc - r);
    const uint16_t *panel = a + r * rowStride;
    int64_t p = 0;
    if (rows == kRows && colStride == 1)
      for (; 2 * (p + 16) <= kc; p += 16) {
        __m512i words[16];
        for (int64_t i = 0; i < 16; ++i)
          words[i] = i < kRows
                         ? _mm512_loadu_si512(panel + i * rowStride + 2 * p)
                         : _mm512_setzero_si512();
        transpose16x16(words);
        for (int64_t q = 0; q < 16; ++q)
          _mm512_mask_storeu_epi32(packed + (p + q) * kRows, kPanel, words[q]);
      }
    for (; p < pairs; ++p) {
      uint32_t *out = packed + p * kRows;
      const uint16_t *even = panel + 2 * p * colStride;
      const uint16_t *odd = 2 * p + 1 < kc ? even + colStride : nullptr;
      if (rows == kRows && odd && rowStride == 1) {
        __m512i e = _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(kPanel, even));
        __m512i o = _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(kPanel, odd));
        _mm512_mask_storeu_epi32(out, kPanel, _mm512_permutex2var_epi16(e, low, o));
      } else {
        for (int64_t i = 0; i < kRows; ++i)
          out[i] = i < rows ? even[i * rowStride] |
                                  (odd ? uint32_t(odd[i * rowStride]) << 16 : 0)
                            : 0;
      }
    }
  }
}

/// B[p0 + p, j0 + j] for p < kc, j < nc into strips of 32 columns: strip s
/// holds [pairs][32 columns] words of two bf16 (rows 2p and 2p + 1);
/// columns and the odd k past the block are zeros. Whole strips take vector
/// code: an interleave of two rows when they run along n (B as stored),
/// 16 x 16 transposes of pairs when columns run along k (B transposed, as
/// a linear layer's weight).
GACC_BF16_TARGET void packB(const uint16_t *b, int64_t rowStride,
                            int64_t colStride, int64_t kc, int64_t nc,
                            uint16_t *packedBits) {
  const __m512i low = interleaveIndices(0), high = interleaveIndices(16);
  auto *packed = reinterpret_cast<uint32_t *>(packedBits);
  int64_t pairs = (kc + 1) / 2;
  for (int64_t s = 0; s < nc; s += kColumns, packed += pairs * kColumns) {
    int64_t columns = std::min(kColumns, nc - s);
    const uint16_t *strip = b + s * colStride;
    int64_t p = 0;
    if (columns == kColumns && rowStride == 1)
      for (; 2 * (p + 16) <= kc; p += 16)
        for (int64_t half = 0; half < kColumns; half += 16) {
          __m512i words[16];
          for (int64_t j = 0; j < 16; ++j)
            words[j] = _mm512_loadu_si512(strip + (half + j) * colStride + 2 * p);
          transpose16x16(words);
          for (int64_t q = 0; q < 16; ++q)
            _mm512_storeu_si512(packed + (p + q) * kColumns + half, words[q]);
        }
    for (; p < pairs; ++p) {
      uint32_t *out = packed + p * kColumns;
      const uint16_t *even = strip + 2 * p * rowStride;
      const uint16_t *odd = 2 * p + 1 < kc ? even + rowStride : nullptr;
      if (columns == kColumns && odd && colStride == 1) {
        __m512i e = _mm512_loadu_si512(even), o = _mm512_loadu_si512(odd);
        _mm512_storeu_si512(out, _mm512_permutex2var_epi16(e, low, o));
        _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi16(e, high, o));
      } else {
        for (int64_t j = 0; j < kColumns; ++j)
          out[j] = j < columns
                       ? even[j * colStride] |
                             (odd ? uint32_t(odd[j * colStride]) << 16 : 0)
                       : 0;
      }
    }
  }
}

bool detect() {
  if (const char *off = std::getenv("GACC_DISABLE_AVX512BF16"))
    if (*off && std::strcmp(off, "0") != 0)
      return false;
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bf16");
}
#endif
} // namespace

bool hasBf16Dot() {
#if defined(__x86_64__)
  static const bool available = detect();
  return available;
#else
  return false;
#endif
}

void gemmBf16(const uint16_t *a, int64_t aRowStride, int64_t aColStride,
              const uint16_t *b, int64_t bRowStride, int64_t bColStride,
              float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
              bool accumulate) {
#if defined(__x86_64__)
  if (k == 0) { // no block of k writes C
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  thread_local std::vector<uint32_t> packedA;
  thread_local std::vector<uint16_t> packedB;
  int64_t maxPairs = (std::min(k, kDepth) + 1) / 2;
  packedA.resize(static_cast<size_t>(kBlockRows * maxPairs));
  packedB.resize(static_cast<size_t>(kBlockColumns * maxPairs * 2));
  for (int64_t jc = 0; jc < n; jc += kBlockColumns) {
    int64_t nc = std::min(kBlockColumns, n - jc);
    for (int64_t pc = 0; pc < k; pc += kDepth) {
      int64_t kc = std::min(kDepth, k - pc), pairs = (kc + 1) / 2;
      packB(b + pc * bRowStride + jc * bColStride, bRowStride, bColStride, kc,
            nc, packedB.data());
      for (int64_t ic = 0; ic < m; ic += kBlockRows) {
        int64_t mc = std::min(kBlockRows, m - ic);
        packA(a + ic * aRowStride + pc * aColStride, aRowStride, aColStride,
              mc, kc, packedA.data());
        for (int64_t jr = 0; jr < nc; jr += kColumns) {
          int64_t columns = std::min(kColumns, nc - jr);
          __mmask16 low = columns >= 16 ? 0xFFFF : (1u << columns) - 1;
          __mmask16 high =
              columns <= 16 ? 0 : columns >= 32 ? 0xFFFF : (1u << (columns - 16)) - 1;
          const uint16_t *strip = packedB.data() + jr * pairs * 2;
          for (int64_t ir = 0; ir < mc; ir += kRows)
            microKernel(pairs, packedA.data() + ir * pairs, strip,
                        c + (ic + ir) * ldc + jc + jr, ldc,
                        std::min(kRows, mc - ir), low, high,
                        accumulate || pc > 0);
        }
      }
    }
  }
#else
  (void)a, (void)aRowStride, (void)aColStride, (void)b, (void)bRowStride,
      (void)bColStride, (void)c, (void)ldc, (void)m, (void)n, (void)k,
      (void)accumulate;
  std::abort();
#endif
}

} // namespace gacc::rt
