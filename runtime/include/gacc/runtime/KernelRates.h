//===- KernelRates.h - what this machine's CPU kernels take -----*- C++ -*-===//
//
// Timings of the kernels compiled CPU steps call, for `gacc tune`'s cost
// model (compiler/plan/StepWork.h prices a step's matmuls and loop nests
// with them). A matmul shape takes tens of milliseconds to time, the
// bandwidth a few tenths of a second; the tool caches what it measured.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_KERNELRATES_H
#define GACC_RUNTIME_KERNELRATES_H

#include "gacc/runtime/Tensor.h"

#include <cstdint>

namespace gacc::rt {

/// Seconds one call of the step's matmul kernel (gacc_cpu_matmul_<type>)
/// takes for C[batch, m, n] = A[batch, m, k] · B[batch, k, n] with `operand`
/// elements (F32, F64, or F16/BF16 into an f32 C): the fastest of calls
/// repeated for about 20 ms, after one that is not timed.
double measureMatmulSeconds(DType operand, int64_t batch, int64_t m, int64_t n,
                            int64_t k);

/// Bytes per second the thread pool moves in a streaming loop (c = a + b
/// over arrays larger than the caches), the rate of memory-bound loops.
double measureStreamBandwidth();

/// Seconds the thread pool takes to run one parallel loop that does
/// nothing: what every loop nest of a step pays besides its work.
double measureDispatchSeconds();

} // namespace gacc::rt

#endif // GACC_RUNTIME_KERNELRATES_H
