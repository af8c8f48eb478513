//===- ThreadPool.h - the threads compiled CPU steps run on ------*- C++ -*-===//
//
// One pool per process runs the parallel loop nests of compiled CPU code
// (gacc_cpu_parallel_for) and its matmuls (runtime/src/cpu/Matmul.cpp,
// one single-threaded BLAS call per block), so that loops and BLAS share
// the cores instead of oversubscribing them.
//
// Work is cut into chunks whose bounds depend on the work alone, never on
// the number of threads, and every chunk computes what it would serially:
// results are bitwise the same for any thread count.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_THREADPOOL_H
#define GACC_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <type_traits>

namespace gacc::rt {

/// The threads the pool runs on: the caller and threads() - 1 workers. By
/// default $GACC_NUM_THREADS, else the cores this process may run on.
int threads();
/// Sets the pool's thread count (at least 1), e.g. from `--threads`.
void setThreads(int count);

/// Calls task(context, begin, end) for the chunks [i * grain, (i + 1) *
/// grain) of [0, extent) (the last one shorter), on the pool's threads, and
/// returns when every chunk is done. A call made on a pool thread or while
/// another thread uses the pool runs its chunks in the calling thread.
using ChunkTask = void (*)(void *context, int64_t begin, int64_t end);
void parallelFor(int64_t extent, int64_t grain, ChunkTask task,
                 void *context);

/// parallelFor with body(begin, end) for each chunk.
template <typename Body>
void parallelFor(int64_t extent, int64_t grain, Body &&body) {
  using Type = std::remove_reference_t<Body>;
  parallelFor(
      extent, grain,
      [](void *context, int64_t begin, int64_t end) {
        (*static_cast<Type *>(context))(begin, end);
      },
      const_cast<void *>(static_cast<const void *>(&body)));
}

} // namespace gacc::rt

/// What compiled code calls for a parallel loop nest: gacc::rt::parallelFor.
extern "C" void gacc_cpu_parallel_for(gacc::rt::ChunkTask task, void *context,
                                      int64_t extent, int64_t grain);

#endif // GACC_RUNTIME_THREADPOOL_H
