//===- GemmBf16.h - bf16 matmuls on AVX512-BF16 dot products ----*- C++ -*-===//
#ifndef GACC_RUNTIME_CPU_GEMMBF16_H
#define GACC_RUNTIME_CPU_GEMMBF16_H

#include <cstdint>

namespace gacc::rt {

/// Whether this CPU has AVX512-BF16 (and gemmBf16 may run), unless
/// $GACC_DISABLE_AVX512BF16 is set (tests of the widening path).
bool hasBf16Dot();

/// C[m x n] (f32, row stride ldc, unit column stride) = A[m x k] · B[k x n]
/// (+= with `accumulate`) for bf16 A and B (their bits) at any element
/// strides: A[i, p] at a[i * aRowStride + p * aColStride], B[p, j] at
/// b[p * bRowStride + j * bColStride]. Single-threaded; needs hasBf16Dot().
void gemmBf16(const uint16_t *a, int64_t aRowStride, int64_t aColStride,
              const uint16_t *b, int64_t bRowStride, int64_t bColStride,
              float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
              bool accumulate);

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPU_GEMMBF16_H
