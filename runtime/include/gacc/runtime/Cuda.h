//===- Cuda.h - the CUDA driver, loaded at run time --------------*- C++ -*-===//
//
// The runtime's CUDA backend talks to the driver API, which it opens with
// dlopen("libcuda.so.1") on first use, as IREE and Triton do: the runtime
// builds and runs without CUDA, and on a machine without a driver (or with
// the toolkit's stub library, where cuInit fails) every use is an error
// that says so. Every driver call is checked; errors carry the driver's
// name for the code (CUDA_ERROR_...) and its description.
//
// Compiled GPU host code calls MLIR's `mgpu*` entry points
// (gacc/runtime/Collectives.h has the CPU's imports; these are the GPU's):
// they run on device 0's primary context and end the process with the
// driver's message on an error, since compiled code cannot return one.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CUDA_H
#define GACC_RUNTIME_CUDA_H

#include "gacc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gacc::rt {

class CudaDevice {
public:
  /// Device `ordinal` with its primary context current on this thread.
  static Status open(int ordinal, CudaDevice &out);

  const std::string &name() const { return name_; }
  /// Compute capability, e.g. 90 for sm_90.
  int computeCapability() const { return capability_; }
  /// Makes the device's context current on the calling thread.
  Status makeCurrent() const;

  Status allocate(size_t bytes, void *&device) const;
  Status release(void *device) const;
  Status copyToDevice(void *device, const void *host, size_t bytes) const;
  Status copyToHost(void *host, const void *device, size_t bytes) const;
  /// A module from PTX (NUL-terminated text, JIT-compiled by the driver) or
  /// a cubin.
  Status loadModule(const std::string &image, void *&module) const;
  Status function(void *module, const std::string &name, void *&out) const;
  /// Launches `kernel` with `params` (one pointer per kernel parameter) on
  /// the default stream and waits for it.
  Status launch(void *kernel, const unsigned grid[3], const unsigned block[3],
                unsigned sharedBytes, void **params) const;

private:
  std::string name_;
  int capability_ = 0;
  void *context_ = nullptr;
};

} // namespace gacc::rt

// MLIR's GPU runtime entry points (mlir/lib/ExecutionEngine/
// CudaRuntimeWrappers.cpp), which gpu-to-llvm's host code calls.
extern "C" {
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
}

#endif // GACC_RUNTIME_CUDA_H
