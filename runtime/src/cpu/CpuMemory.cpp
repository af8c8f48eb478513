//===- CpuMemory.cpp - the heap of compiled CPU code ------------------------===//

#include "gacc/runtime/CpuMemory.h"

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
// Each block starts with its size; 16 bytes keep malloc's alignment.
constexpr size_t kHeader = 16;
std::atomic<int64_t> live{0}, peak{0};

/// Where an allocation that fails returns to (runCatchingHeapExhaustion).
thread_local std::jmp_buf *heapExhausted = nullptr;
thread_local size_t failedAllocation = 0;

void *exhausted(size_t bytes) {
  if (heapExhausted) {
    failedAllocation = bytes;
    std::longjmp(*heapExhausted, 1);
  }
  return nullptr;
}
} // namespace

extern "C" void *gacc_cpu_malloc(size_t bytes) {
  auto *block = bytes > SIZE_MAX - kHeader
                    ? nullptr
                    : static_cast<char *>(std::malloc(bytes + kHeader));
  if (!block)
    return exhausted(bytes);
  *reinterpret_cast<size_t *>(block) = bytes;
  int64_t now = live.fetch_add(bytes) + static_cast<int64_t>(bytes);
  int64_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
  return block + kHeader;
}

extern "C" void *gacc_cpu_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size)
    return exhausted(SIZE_MAX);
  void *pointer = gacc_cpu_malloc(count * size);
  if (pointer)
    std::memset(pointer, 0, count * size);
  return pointer;
}

extern "C" void gacc_cpu_free(void *pointer) {
  if (!pointer)
    return;
  char *block = static_cast<char *>(pointer) - kHeader;
  live.fetch_sub(static_cast<int64_t>(*reinterpret_cast<size_t *>(block)));
  std::free(block);
}

namespace gacc::rt {

CpuMemoryStats cpuMemoryStats() { return {live.load(), peak.load()}; }

void resetCpuMemoryPeak() { peak.store(live.load()); }

bool runCatchingHeapExhaustion(void (*function)(void *), void *context,
                               size_t &failedBytes) {
  std::jmp_buf escape;
  std::jmp_buf *outer = heapExhausted;
  heapExhausted = &escape;
  if (setjmp(escape)) {
    heapExhausted = outer;
    failedBytes = failedAllocation;
    return false;
  }
  function(context);
  heapExhausted = outer;
  return true;
}

} // namespace gacc::rt
