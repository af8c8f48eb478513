//===- DeviceMemory.cpp - device arenas: emulated and CUDA ------------------===//

#include "gacc/runtime/DeviceMemory.h"
#include "gacc/runtime/Cuda.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gacc::rt {

namespace {
class EmulatedDeviceMemory : public DeviceMemory {
public:
  Status allocate(size_t bytes, void *&device) override {
    // Poisoned, as device memory is not zeroed: a step that reads what
    // no one wrote shows it. Aligned as cuMemAlloc's.
    device = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
    if (!device)
      return Status::error("emulated device: out of memory allocating " +
                           std::to_string(bytes) + " bytes");
    std::memset(device, 0xA5, bytes);
    return Status();
  }
  void release(void *device) override { std::free(device); }
  Status upload(void *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
    return Status();
  }
  Status download(void *host, const void *device, size_t bytes) override {
    std::memcpy(host, device, bytes);
    return Status();
  }
};

class CudaDeviceMemory : public DeviceMemory {
public:
  explicit CudaDeviceMemory(CudaDevice device) : device_(std::move(device)) {}
  Status allocate(size_t bytes, void *&device) override {
    return device_.allocate(std::max<size_t>(bytes, 1), device);
  }
  void release(void *device) override { (void)device_.release(device); }
  Status upload(void *device, const void *host, size_t bytes) override {
    return device_.copyToDevice(device, host, bytes);
  }
  Status download(void *host, const void *device, size_t bytes) override {
    return device_.copyToHost(host, device, bytes);
  }

private:
  CudaDevice device_;
};
} // namespace

std::unique_ptr<DeviceMemory> makeEmulatedDeviceMemory() {
  return std::make_unique<EmulatedDeviceMemory>();
}

Status openCudaDeviceMemory(int ordinal, std::unique_ptr<DeviceMemory> &out) {
  CudaDevice device;
  if (Status status = CudaDevice::open(ordinal, device); !status)
    return status;
  out = std::make_unique<CudaDeviceMemory>(std::move(device));
  return Status();
}

Status openTargetDevice(const std::string &target,
                        std::unique_ptr<DeviceMemory> &out) {
  if (target == "cpu")
    return Status();
  if (target == "cuda-emulated") {
    out = makeEmulatedDeviceMemory();
    return Status();
  }
  if (target == "cuda") {
    if (Status status = openCudaDeviceMemory(0, out); !status)
      return Status::error("target cuda: " + status.message());
    return Status();
  }
  return Status::error("target '" + target + "' is unknown to this runtime");
}

} // namespace gacc::rt
