//===- CpuMemory.h - the heap of compiled CPU code ----------------*- C++ -*-===//
//
// Compiled CPU steps allocate their temporaries (activations, gradients in
// flight, workspace) with malloc/free; the runtime routes those calls
// through counting wrappers so that it can report the bytes a step really
// used at its peak.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CPUMEMORY_H
#define GACC_RUNTIME_CPUMEMORY_H

#include <cstddef>
#include <cstdint>

extern "C" {
/// malloc/calloc/free for compiled code, counting live bytes (LLVM turns a
/// malloc followed by zeroing into calloc, so calloc must count alike).
void *gacc_cpu_malloc(size_t bytes);
void *gacc_cpu_calloc(size_t count, size_t size);
void gacc_cpu_free(void *pointer);
}

namespace gacc::rt {

struct CpuMemoryStats {
  int64_t liveBytes = 0;
  int64_t peakBytes = 0;
};

CpuMemoryStats cpuMemoryStats();
/// Starts a new peak measurement from the bytes live now.
void resetCpuMemoryPeak();

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPUMEMORY_H
