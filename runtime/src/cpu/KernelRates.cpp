//===- KernelRates.cpp - what this machine's CPU kernels take -------------===//

#include "gacc/runtime/KernelRates.h"
#include "gacc/runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

extern "C" {
void gacc_cpu_matmul_f32(int64_t, void *, int64_t, void *, int64_t, void *,
                         int32_t, int32_t, int32_t);
void gacc_cpu_matmul_f64(int64_t, void *, int64_t, void *, int64_t, void *,
                         int32_t, int32_t, int32_t);
void gacc_cpu_matmul_f16_f32(int64_t, void *, int64_t, void *, int64_t, void *,
                             int32_t, int32_t, int32_t);
void gacc_cpu_matmul_bf16_f32(int64_t, void *, int64_t, void *, int64_t, void *,
                              int32_t, int32_t, int32_t);
}

namespace gacc::rt {
namespace {
using Clock = std::chrono::steady_clock;

/// The fastest of `run`'s calls over about `seconds` (at least 3), after
/// one that is not timed (first touches of memory, lazy initialization).
/// 5 ms is hundreds of calls of a small matmul; `gacc tune` times dozens of
/// shapes, and two timings of one shape agreed within 5% (at most 9%).
template <typename F> double fastest(F run, double seconds = 0.005) {
  run();
  double best = 1e30, spent = 0;
  for (int calls = 0; calls < 3 || spent < seconds; ++calls) {
    auto start = Clock::now();
    run();
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, took);
    spent += took;
  }
  return best;
}

/// A rank-3 MLIR memref descriptor (allocated, aligned, offset, sizes,
/// strides) of a contiguous [batch, rows, cols] array.
struct Descriptor3 {
  int64_t fields[9];
  Descriptor3(void *data, int64_t batch, int64_t rows, int64_t cols)
      : fields{reinterpret_cast<int64_t>(data),
               reinterpret_cast<int64_t>(data),
               0,
               batch,
               rows,
               cols,
               rows * cols,
               cols,
               1} {}
};
} // namespace

double measureMatmulSeconds(DType operand, int64_t batch, int64_t m, int64_t n,
                            int64_t k) {
  size_t width = byteWidth(operand);
  bool wide = operand == DType::F32 || operand == DType::F64;
  // Small values in every format (0x3c00 is 1.0 in f16, 0x3f80 in bf16;
  // zero bits are 0.0 for the wide types, which costs BLAS the same).
  std::vector<std::byte> a(batch * m * k * width), b(batch * k * n * width),
      c(batch * m * n * (wide ? width : sizeof(float)));
  if (!wide) {
    uint16_t one = operand == DType::F16 ? 0x3c00 : 0x3f80;
    for (size_t i = 0; i + 1 < a.size(); i += 2)
      std::memcpy(&a[i], &one, 2);
    for (size_t i = 0; i + 1 < b.size(); i += 2)
      std::memcpy(&b[i], &one, 2);
  }
  Descriptor3 da(a.data(), batch, m, k), db(b.data(), batch, k, n),
      dc(c.data(), batch, m, n);
  auto kernel = operand == DType::F32   ? gacc_cpu_matmul_f32
                : operand == DType::F64 ? gacc_cpu_matmul_f64
                : operand == DType::F16 ? gacc_cpu_matmul_f16_f32
                                        : gacc_cpu_matmul_bf16_f32;
  return fastest([&] {
    kernel(3, da.fields, 3, db.fields, 3, dc.fields, 0, 0, /*accumulate=*/0);
  });
}

double measureStreamBandwidth() {
  // Three arrays of 32 MiB: beyond the caches of most machines (some
  // server CPUs' L3 holds them, and measure a higher rate).
  constexpr int64_t n = int64_t(8) << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n);
  double seconds = fastest(
      [&] {
        parallelFor(n, 1 << 16, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            c[i] = a[i] + b[i];
        });
      },
      0.1);
  return 3.0 * n * sizeof(float) / seconds;
}

double measureDispatchSeconds() {
  constexpr int kLoops = 1000;
  int64_t extent = threads();
  return fastest([&] {
           for (int i = 0; i < kLoops; ++i)
             parallelFor(extent, 1, [](int64_t, int64_t) {});
         }) /
         kLoops;
}

} // namespace gacc::rt
