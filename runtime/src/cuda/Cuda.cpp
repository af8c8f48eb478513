//===- Cuda.cpp - the CUDA driver, loaded at run time -----------------------===//

#include "gacc/runtime/Cuda.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gacc::rt {
namespace {
// The driver API's ABI (cuda.h): results and handles.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uintptr_t;
using Handle = void *; // CUcontext, CUmodule, CUfunction, CUstream
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*primaryCtxRetain)(Handle *, CUdevice);
  CUresult (*ctxSetCurrent)(Handle);
  CUresult (*ctxSynchronize)();
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  // Stream-ordered allocation (CUDA 11.2): optional.
  CUresult (*memAllocAsync)(CUdeviceptr *, size_t, Handle);
  CUresult (*memFreeAsync)(CUdeviceptr, Handle);
  CUresult (*deviceGetDefaultMemPool)(Handle *, CUdevice);
  CUresult (*memPoolSetAttribute)(Handle, int, void *);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*memcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*moduleLoadData)(Handle *, const void *);
  CUresult (*moduleUnload)(Handle);
  CUresult (*moduleGetFunction)(Handle *, Handle, const char *);
  CUresult (*funcSetAttribute)(Handle, int, int);
  CUresult (*launchKernel)(Handle, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, Handle, void **,
                           void **);
  CUresult (*streamCreate)(Handle *, unsigned);
  CUresult (*streamDestroy)(Handle);
  CUresult (*streamSynchronize)(Handle);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
};

/// The driver, loaded and initialized once; the status says why not.
const Driver *loadDriver(Status &status) {
  static Driver driver;
  static Status loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    void *library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!library) {
      const char *error = ::dlerror();
      loaded = Status::error(std::string("no CUDA driver (libcuda.so.1: ") +
                             (error ? error : "not found") + ")");
      return;
    }
    bool complete = true;
    auto bindOptional = [&](const char *name, auto &slot) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          ::dlsym(library, name));
    };
    auto bind = [&](const char *name, auto &slot) {
      bindOptional(name, slot);
      complete &= slot != nullptr;
    };
    bind("cuInit", driver.init);
    bind("cuDeviceGet", driver.deviceGet);
    bind("cuDeviceGetName", driver.deviceGetName);
    bind("cuDeviceGetAttribute", driver.deviceGetAttribute);
    bind("cuDevicePrimaryCtxRetain", driver.primaryCtxRetain);
    bind("cuCtxSetCurrent", driver.ctxSetCurrent);
    bind("cuCtxSynchronize", driver.ctxSynchronize);
    bind("cuMemAlloc_v2", driver.memAlloc);
    bind("cuMemFree_v2", driver.memFree);
    bindOptional("cuMemAllocAsync", driver.memAllocAsync);
    bindOptional("cuMemFreeAsync", driver.memFreeAsync);
    bindOptional("cuDeviceGetDefaultMemPool", driver.deviceGetDefaultMemPool);
    bindOptional("cuMemPoolSetAttribute", driver.memPoolSetAttribute);
    bind("cuMemcpyHtoD_v2", driver.memcpyHtoD);
    bind("cuMemcpyDtoH_v2", driver.memcpyDtoH);
    bind("cuMemcpy", driver.memcpy);
    bind("cuModuleLoadData", driver.moduleLoadData);
    bind("cuModuleUnload", driver.moduleUnload);
    bind("cuModuleGetFunction", driver.moduleGetFunction);
    bind("cuFuncSetAttribute", driver.funcSetAttribute);
    bind("cuLaunchKernel", driver.launchKernel);
    bind("cuStreamCreate", driver.streamCreate);
    bind("cuStreamDestroy_v2", driver.streamDestroy);
    bind("cuStreamSynchronize", driver.streamSynchronize);
    bind("cuGetErrorName", driver.getErrorName);
    bind("cuGetErrorString", driver.getErrorString);
    if (!complete) {
      loaded = Status::error("the CUDA driver lacks an entry point gacc needs");
      return;
    }
    if (CUresult result = driver.init(0)) {
      const char *name = nullptr;
      driver.getErrorName(result, &name);
      loaded = Status::error(
          std::string("the CUDA driver does not initialize (cuInit: ") +
          (name ? name : std::to_string(result)) +
          (result == 34 ? ": the toolkit's stub library, no driver" : "") +
          ")");
    }
  });
  status = loaded;
  return loaded ? &driver : nullptr;
}

/// `result` as a status: "what: CUDA_ERROR_NAME (description)".
Status check(const Driver &driver, CUresult result, const char *what) {
  if (result == 0)
    return Status();
  const char *name = nullptr, *description = nullptr;
  driver.getErrorName(result, &name);
  driver.getErrorString(result, &description);
  return Status::error(std::string(what) + ": " +
                       (name ? name : std::to_string(result)) + " (" +
                       (description ? description : "unknown") + ")");
}

/// Lets `kernel` launch with `bytes` of dynamic shared memory: beyond 48 KB
/// the driver wants the kernel's maximum raised first. Raised at every such
/// launch (a cheap call next to the kernel; no cache of handles that a
/// reloaded module could reuse).
Status allowSharedBytes(const Driver &driver, Handle kernel, unsigned bytes) {
  constexpr unsigned kDefaultMaximum = 48 * 1024;
  constexpr int kMaxDynamicSharedSizeBytes = 8; // CUfunction_attribute
  if (bytes <= kDefaultMaximum)
    return Status();
  return check(
      driver,
      driver.funcSetAttribute(kernel, kMaxDynamicSharedSizeBytes, bytes),
      ("cuFuncSetAttribute (" + std::to_string(bytes) +
       " bytes of shared memory)")
          .c_str());
}

const Driver &driverOrDie() {
  Status status;
  const Driver *driver = loadDriver(status);
  if (!driver) {
    std::fprintf(stderr, "gacc: %s\n", status.message().c_str());
    std::abort();
  }
  return *driver;
}

/// For the mgpu* entry points: an error ends the process.
void orDie(const Status &status) {
  if (!status) {
    std::fprintf(stderr, "gacc: CUDA: %s\n", status.message().c_str());
    std::abort();
  }
}

/// GACC_CUDA_PROFILE=1: every launch waits for its kernel, and the time
/// each kernel took (from its launch to its end, so a few microseconds of
/// launch latency included) is summed per kernel and printed to stderr at
/// exit, longest first. For finding where a step's time goes where no
/// profiler is installed; it serializes the launches, so the step is slower.
class KernelProfile {
public:
  static KernelProfile *get() {
    static KernelProfile *profile = [] {
      const char *flag = std::getenv("GACC_CUDA_PROFILE");
      return flag && *flag && std::string(flag) != "0" ? new KernelProfile
                                                       : nullptr;
    }();
    return profile;
  }

  void name(void *function, const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    names[function] = name;
  }

  void add(void *function, const std::string &shape, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    auto name = names.find(function);
    Entry &entry = entries[{name == names.end() ? "?" : name->second, shape}];
    ++entry.launches;
    entry.seconds += seconds;
  }

private:
  struct Entry {
    int64_t launches = 0;
    double seconds = 0;
  };

  KernelProfile() {
    std::atexit([] { get()->print(); });
  }

  void print() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::pair<std::pair<std::string, std::string>, Entry>> rows(
        entries.begin(), entries.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second.seconds > b.second.seconds;
    });
    double total = 0;
    for (const auto &row : rows)
      total += row.second.seconds;
    std::fprintf(stderr, "gacc: CUDA kernel profile: %.3f s in %zu kernels\n",
                 total, rows.size());
    std::fprintf(stderr, "%10s %6s %6s  %-32s %s\n", "ms", "%", "calls",
                 "kernel", "grid x block");
    for (const auto &[key, entry] : rows)
      std::fprintf(stderr, "%10.3f %6.2f %6lld  %-32s %s\n",
                   entry.seconds * 1e3, 100 * entry.seconds / total,
                   static_cast<long long>(entry.launches), key.first.c_str(),
                   key.second.c_str());
  }

  std::mutex mutex;
  std::map<void *, std::string> names;
  /// By kernel name and grid x block.
  std::map<std::pair<std::string, std::string>, Entry> entries;
};

/// Whether device 0 allocates on streams from the driver's pool
/// (cuMemAllocAsync; CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED). The pool
/// keeps what is freed (its release threshold unbounded), so that a step's
/// scratch is not unmapped at the end of each step and mapped again.
bool allocatesOnStreams(const Driver &d) {
  static const bool supported = [&] {
    constexpr int kMemoryPoolsSupported = 115;
    constexpr int kReleaseThreshold = 4; // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    CUdevice device = 0;
    int pools = 0;
    if (!d.memAllocAsync || !d.memFreeAsync || d.deviceGet(&device, 0) ||
        d.deviceGetAttribute(&pools, kMemoryPoolsSupported, device) || !pools)
      return false;
    Handle pool = nullptr;
    uint64_t keepAll = UINT64_MAX;
    if (d.deviceGetDefaultMemPool && d.memPoolSetAttribute &&
        d.deviceGetDefaultMemPool(&pool, device) == 0)
      d.memPoolSetAttribute(pool, kReleaseThreshold, &keepAll);
    return true;
  }();
  return supported;
}

/// Device 0's primary context, current on this thread (mgpu* callers).
void makeCurrent() {
  static CudaDevice device;
  static std::once_flag once;
  std::call_once(once, [] { orDie(CudaDevice::open(0, device)); });
  orDie(device.makeCurrent());
}
} // namespace

Status CudaDevice::open(int ordinal, CudaDevice &out) {
  Status status;
  const Driver *driver = loadDriver(status);
  if (!driver)
    return status;
  CUdevice device = 0;
  if (Status s = check(*driver, driver->deviceGet(&device, ordinal),
                       "cuDeviceGet");
      !s)
    return s;
  char name[256] = {};
  driver->deviceGetName(name, sizeof(name), device);
  int major = 0, minor = 0;
  driver->deviceGetAttribute(&major, kComputeCapabilityMajor, device);
  driver->deviceGetAttribute(&minor, kComputeCapabilityMinor, device);
  Handle context = nullptr;
  if (Status s = check(*driver, driver->primaryCtxRetain(&context, device),
                       "cuDevicePrimaryCtxRetain");
      !s)
    return s;
  if (Status s = check(*driver, driver->ctxSetCurrent(context),
                       "cuCtxSetCurrent");
      !s)
    return s;
  out.name_ = name;
  out.capability_ = major * 10 + minor;
  out.context_ = context;
  return Status();
}

Status CudaDevice::makeCurrent() const {
  const Driver &d = driverOrDie();
  return check(d, d.ctxSetCurrent(context_), "cuCtxSetCurrent");
}

Status CudaDevice::allocate(size_t bytes, void *&device) const {
  const Driver &d = driverOrDie();
  CUdeviceptr pointer = 0;
  Status s = check(d, d.memAlloc(&pointer, bytes),
                   ("cuMemAlloc of " + std::to_string(bytes) + " bytes").c_str());
  device = reinterpret_cast<void *>(pointer);
  return s;
}

Status CudaDevice::release(void *device) const {
  const Driver &d = driverOrDie();
  return check(d, d.memFree(reinterpret_cast<CUdeviceptr>(device)),
               "cuMemFree");
}

Status CudaDevice::copyToDevice(void *device, const void *host,
                                size_t bytes) const {
  const Driver &d = driverOrDie();
  if (Status status = check(d,
                            d.memcpyHtoD(reinterpret_cast<CUdeviceptr>(device),
                                         host, bytes),
                            "cuMemcpyHtoD");
      !status)
    return status;
  // From pageable memory the copy may still be in flight when it returns,
  // and compiled steps launch on non-blocking streams: wait for it.
  return check(d, d.ctxSynchronize(), "cuCtxSynchronize");
}

Status CudaDevice::copyToHost(void *host, const void *device,
                              size_t bytes) const {
  const Driver &d = driverOrDie();
  return check(d, d.memcpyDtoH(host, reinterpret_cast<CUdeviceptr>(device),
                               bytes),
               "cuMemcpyDtoH");
}

Status CudaDevice::loadModule(const std::string &image, void *&module) const {
  const Driver &d = driverOrDie();
  return check(d, d.moduleLoadData(&module, image.c_str()),
               "cuModuleLoadData");
}

Status CudaDevice::function(void *module, const std::string &name,
                            void *&out) const {
  const Driver &d = driverOrDie();
  return check(d, d.moduleGetFunction(&out, module, name.c_str()),
               ("cuModuleGetFunction '" + name + "'").c_str());
}

Status CudaDevice::launch(void *kernel, const unsigned grid[3],
                          const unsigned block[3], unsigned sharedBytes,
                          void **params) const {
  const Driver &d = driverOrDie();
  if (Status s = allowSharedBytes(d, kernel, sharedBytes); !s)
    return s;
  if (Status s = check(d,
                       d.launchKernel(kernel, grid[0], grid[1], grid[2],
                                      block[0], block[1], block[2],
                                      sharedBytes, nullptr, params, nullptr),
                       "cuLaunchKernel");
      !s)
    return s;
  return check(d, d.ctxSynchronize(), "cuCtxSynchronize");
}

} // namespace gacc::rt

using namespace gacc::rt;

// The mgpu* entry points: each makes device 0's context current (compiled
// host code may run on any thread) and ends the process on an error.

extern "C" void *mgpuModuleLoad(void *data, size_t) {
  makeCurrent();
  const Driver &d = driverOrDie();
  Handle module = nullptr;
  orDie(check(d, d.moduleLoadData(&module, data), "cuModuleLoadData"));
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int) {
  return mgpuModuleLoad(data, 0);
}

extern "C" void mgpuModuleUnload(void *module) {
  const Driver &d = driverOrDie();
  orDie(check(d, d.moduleUnload(module), "cuModuleUnload"));
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  const Driver &d = driverOrDie();
  Handle function = nullptr;
  orDie(check(d, d.moduleGetFunction(&function, module, name),
              "cuModuleGetFunction"));
  if (KernelProfile *profile = KernelProfile::get())
    profile->name(function, name);
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t smem, void *stream,
                                 void **params, void **extra, size_t) {
  makeCurrent();
  const Driver &d = driverOrDie();
  KernelProfile *profile = KernelProfile::get();
  if (profile)
    orDie(check(d, d.streamSynchronize(stream), "cuStreamSynchronize"));
  orDie(allowSharedBytes(d, function, smem));
  auto start = std::chrono::steady_clock::now();
  orDie(check(d,
              d.launchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                             blockZ, smem, stream, params, extra),
              "cuLaunchKernel"));
  if (!profile)
    return;
  orDie(check(d, d.streamSynchronize(stream), "cuStreamSynchronize"));
  std::string shape = std::to_string(gridX) + "x" + std::to_string(gridY) +
                      "x" + std::to_string(gridZ) + " " +
                      std::to_string(blockX) + "x" + std::to_string(blockY) +
                      "x" + std::to_string(blockZ);
  profile->add(
      function, shape,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
}

extern "C" void *mgpuStreamCreate() {
  makeCurrent();
  const Driver &d = driverOrDie();
  Handle stream = nullptr;
  orDie(check(d, d.streamCreate(&stream, /*CU_STREAM_NON_BLOCKING=*/1),
              "cuStreamCreate"));
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  const Driver &d = driverOrDie();
  orDie(check(d, d.streamDestroy(stream), "cuStreamDestroy"));
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  const Driver &d = driverOrDie();
  orDie(check(d, d.streamSynchronize(stream), "cuStreamSynchronize"));
}

// A step's scratch (partial sums, values passed between kernels) is
// allocated and freed on the step's stream, from the driver's pool: a
// cuMemFree would wait for the whole device at every call of the step.
extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool) {
  makeCurrent();
  const Driver &d = driverOrDie();
  CUdeviceptr pointer = 0;
  if (sizeBytes && stream && allocatesOnStreams(d))
    orDie(check(d, d.memAllocAsync(&pointer, sizeBytes, stream),
                "cuMemAllocAsync"));
  else if (sizeBytes)
    orDie(check(d, d.memAlloc(&pointer, sizeBytes), "cuMemAlloc"));
  return reinterpret_cast<void *>(pointer);
}

extern "C" void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  makeCurrent();
  const Driver &d = driverOrDie();
  auto pointer = reinterpret_cast<CUdeviceptr>(ptr);
  if (stream && allocatesOnStreams(d))
    orDie(check(d, d.memFreeAsync(pointer, stream), "cuMemFreeAsync"));
  else
    orDie(check(d, d.memFree(pointer), "cuMemFree"));
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  const Driver &d = driverOrDie();
  // After what the stream has queued (its allocations among them): the
  // copy itself runs on the legacy stream.
  if (stream)
    orDie(check(d, d.streamSynchronize(stream), "cuStreamSynchronize"));
  // Unified addressing: the driver tells host from device pointers.
  orDie(check(d,
              d.memcpy(reinterpret_cast<CUdeviceptr>(dst),
                       reinterpret_cast<CUdeviceptr>(src), sizeBytes),
              "cuMemcpy"));
}
