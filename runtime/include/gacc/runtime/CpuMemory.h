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

/// Calls `function(context)`, which runs compiled code. Compiled code does
/// not check what malloc returns: if its heap has no room inside the call,
/// the allocation returns here instead of handing it null. Then the result
/// is false with the bytes asked for in `failedBytes`. (Compiled code holds
/// nothing to unwind; what it allocated before stays allocated.)
bool runCatchingHeapExhaustion(void (*function)(void *), void *context,
                               size_t &failedBytes);

} // namespace gacc::rt

#endif // GACC_RUNTIME_CPUMEMORY_H
