//===- DeviceMemory.h - where a step's arenas live on a device ---*- C++ -*-===//
//
// A step compiled for a GPU runs on arenas in device memory, laid out by the
// same memory plan as on the CPU. The trainer keeps a host copy of the
// state, batch and io arenas for everything the host does (initialization,
// checkpoints, parameter access, inputs, the loss) and moves bytes only
// when needed: the batch and io arenas (small) before and after every call,
// the state arena when the other side changed it (uploaded before a step
// after the host wrote it, downloaded when the host reads it after steps).
// The workspace exists on the device alone.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_DEVICEMEMORY_H
#define GACC_RUNTIME_DEVICEMEMORY_H

#include "gacc/runtime/Status.h"

#include <cstddef>
#include <memory>

namespace gacc::rt {

class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;
  virtual Status allocate(size_t bytes, void *&device) = 0;
  virtual void release(void *device) = 0;
  virtual Status upload(void *device, const void *host, size_t bytes) = 0;
  virtual Status download(void *host, const void *device, size_t bytes) = 0;
};

/// Separate host buffers standing in for a device: the emulated CUDA target
/// (`--target cuda-emulated`) runs on them, so that the trainer's transfers
/// are exercised, and checked, without a GPU.
std::unique_ptr<DeviceMemory> makeEmulatedDeviceMemory();

/// The memory of CUDA device `ordinal` (through the driver, see Cuda.h);
/// an error naming the cause without a driver or device.
Status openCudaDeviceMemory(int ordinal, std::unique_ptr<DeviceMemory> &out);

/// The device a step compiled for `target` runs on, opened before its host
/// code loads (a CUDA step loads its kernels then): none for "cpu" (`out`
/// stays null), the emulated device for "cuda-emulated", the first GPU for
/// "cuda". Errors say "target T: " and why. The one mapping from a target
/// to its device, for artifacts and the JIT alike.
Status openTargetDevice(const std::string &target,
                        std::unique_ptr<DeviceMemory> &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_DEVICEMEMORY_H
