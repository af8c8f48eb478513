//===- HostCode.cpp - the runtime functions compiled CPU code calls ---------===//

#include "gacc/runtime/HostCode.h"
#include "gacc/runtime/Cuda.h"
#include "gacc/runtime/DeviceMemory.h"
#include "gacc/runtime/Artifact.h"
#include "gacc/runtime/Collectives.h"
#include "gacc/runtime/CpuMemory.h"
#include "gacc/runtime/ThreadPool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" void memrefCopy(int64_t, void *, void *);
// The runtime's CPU kernels (Matmul.cpp, EmbeddingGradient.cpp,
// Attention.cpp), all with the same kind of arguments: unranked memrefs
// (rank, descriptor), flags and the attention's scale.
#define GACC_MATMUL(NAME)                                                      \
  extern "C" void NAME(int64_t, void *, int64_t, void *, int64_t, void *,      \
                       int32_t, int32_t, int32_t);
#define GACC_EMBEDDING_GRADIENT(NAME)                                          \
  extern "C" void NAME(int64_t, void *, int64_t, void *, int64_t, void *,      \
                       int32_t);
GACC_MATMUL(gacc_cpu_matmul_f32)
GACC_MATMUL(gacc_cpu_matmul_f64)
GACC_MATMUL(gacc_cpu_matmul_f16_f32)
GACC_MATMUL(gacc_cpu_matmul_bf16_f32)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f32_i32)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f32_i64)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f64_i32)
GACC_EMBEDDING_GRADIENT(gacc_cpu_embedding_gradient_f64_i64)
#define GACC_ATTENTION(TYPE)                                                   \
  extern "C" void gacc_cpu_attention_##TYPE(                                   \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, double, int32_t, int32_t);             \
  extern "C" void gacc_cpu_attention_grad_##TYPE(                              \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, double, int32_t, int32_t);
GACC_ATTENTION(f32)
GACC_ATTENTION(f64)
GACC_ATTENTION(f16)
GACC_ATTENTION(bf16)
#undef GACC_MATMUL
#undef GACC_EMBEDDING_GRADIENT
#undef GACC_ATTENTION

namespace gacc::rt {

const std::vector<HostImport> &hostImports() {
  static const std::vector<HostImport> imports = {
      {"memrefCopy", reinterpret_cast<void *>(&memrefCopy)},
      // Temporaries go through the runtime's counting heap.
      {"malloc", reinterpret_cast<void *>(&gacc_cpu_malloc)},
      {"calloc", reinterpret_cast<void *>(&gacc_cpu_calloc)},
      {"free", reinterpret_cast<void *>(&gacc_cpu_free)},
      // CUDA steps: MLIR's host runtime calls (gacc/runtime/Cuda.h).
      {"mgpuModuleLoad", reinterpret_cast<void *>(&mgpuModuleLoad)},
      {"mgpuModuleLoadJIT", reinterpret_cast<void *>(&mgpuModuleLoadJIT)},
      {"mgpuModuleUnload", reinterpret_cast<void *>(&mgpuModuleUnload)},
      {"mgpuModuleGetFunction",
       reinterpret_cast<void *>(&mgpuModuleGetFunction)},
      {"mgpuLaunchKernel", reinterpret_cast<void *>(&mgpuLaunchKernel)},
      {"mgpuStreamCreate", reinterpret_cast<void *>(&mgpuStreamCreate)},
      {"mgpuStreamDestroy", reinterpret_cast<void *>(&mgpuStreamDestroy)},
      {"mgpuStreamSynchronize",
       reinterpret_cast<void *>(&mgpuStreamSynchronize)},
      {"mgpuMemAlloc", reinterpret_cast<void *>(&mgpuMemAlloc)},
      {"mgpuMemFree", reinterpret_cast<void *>(&mgpuMemFree)},
      {"mgpuMemcpy", reinterpret_cast<void *>(&mgpuMemcpy)},
      {"gacc_cpu_parallel_for",
       reinterpret_cast<void *>(&gacc_cpu_parallel_for)},
#define GACC_KERNEL(NAME) {#NAME, reinterpret_cast<void *>(&NAME)},
      GACC_KERNEL(gacc_cpu_matmul_f32)
      GACC_KERNEL(gacc_cpu_matmul_f64)
      GACC_KERNEL(gacc_cpu_matmul_f16_f32)
      GACC_KERNEL(gacc_cpu_matmul_bf16_f32)
      GACC_KERNEL(gacc_cpu_embedding_gradient_f32_i32)
      GACC_KERNEL(gacc_cpu_embedding_gradient_f32_i64)
      GACC_KERNEL(gacc_cpu_embedding_gradient_f64_i32)
      GACC_KERNEL(gacc_cpu_embedding_gradient_f64_i64)
      GACC_KERNEL(gacc_cpu_attention_f32)
      GACC_KERNEL(gacc_cpu_attention_f64)
      GACC_KERNEL(gacc_cpu_attention_f16)
      GACC_KERNEL(gacc_cpu_attention_bf16)
      GACC_KERNEL(gacc_cpu_attention_grad_f32)
      GACC_KERNEL(gacc_cpu_attention_grad_f64)
      GACC_KERNEL(gacc_cpu_attention_grad_f16)
      GACC_KERNEL(gacc_cpu_attention_grad_bf16)
#undef GACC_KERNEL
  };
  static const std::vector<HostImport> all = [] {
    std::vector<HostImport> list = imports;
    // One declaration per element type in compiled code, one function here.
    for (const char *type : {"f64", "f32", "f16", "bf16"}) {
      std::string suffix = std::string("_") + type;
      list.push_back({"gacc_comm_all_reduce" + suffix,
                      reinterpret_cast<void *>(&gacc_comm_all_reduce)});
      list.push_back({"gacc_comm_reduce_scatter" + suffix,
                      reinterpret_cast<void *>(&gacc_comm_reduce_scatter)});
      list.push_back({"gacc_comm_all_gather" + suffix,
                      reinterpret_cast<void *>(&gacc_comm_all_gather)});
      list.push_back({"gacc_comm_broadcast" + suffix,
                      reinterpret_cast<void *>(&gacc_comm_broadcast)});
    }
    return list;
  }();
  return all;
}

namespace {
/// __builtin_cpu_supports takes its name as a literal.
#define GACC_CPU_FEATURE(name) {name, [] { return __builtin_cpu_supports(name) != 0; }}
struct CpuFeature {
  const char *name;
  bool (*present)();
};
const CpuFeature kCpuFeatures[] = {
#if defined(__x86_64__)
    GACC_CPU_FEATURE("sse4.2"),     GACC_CPU_FEATURE("avx"),
    GACC_CPU_FEATURE("avx2"),       GACC_CPU_FEATURE("fma"),
    GACC_CPU_FEATURE("f16c"),       GACC_CPU_FEATURE("bmi2"),
    GACC_CPU_FEATURE("avx512f"),    GACC_CPU_FEATURE("avx512bw"),
    GACC_CPU_FEATURE("avx512dq"),   GACC_CPU_FEATURE("avx512vl"),
    GACC_CPU_FEATURE("avx512cd"),   GACC_CPU_FEATURE("avx512vnni"),
    GACC_CPU_FEATURE("avx512bf16"),
#endif
};
#undef GACC_CPU_FEATURE
} // namespace

const std::vector<std::string> &checkedCpuFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const CpuFeature &feature : kCpuFeatures)
      list.push_back(feature.name);
    return list;
  }();
  return names;
}

Status checkCpuFeatures(const std::vector<std::string> &features,
                        const std::string &origin) {
  // A name this runtime does not know (from a newer compiler) counts as
  // missing: the code may use it.
  std::string missing;
  for (const std::string &name : features) {
    auto known = std::find_if(
        std::begin(kCpuFeatures), std::end(kCpuFeatures),
        [&](const CpuFeature &feature) { return name == feature.name; });
    if (known == std::end(kCpuFeatures) || !known->present())
      missing += (missing.empty() ? "" : ", ") + name;
  }
  if (missing.empty())
    return Status();
  return Status::error(origin + ": compiled for a CPU with " + missing +
                       ", which this CPU lacks (or this runtime cannot "
                       "check): compile the model again on this machine "
                       "(gacc compile)");
}

Status loadHostCode(const std::string &sharedObject, const std::string &origin,
                    CompiledStep &out) {
  // dlopen needs a file: an anonymous one in memory, never on disk, unless
  // $GACC_HOST_CODE_DIR asks for a named file there, kept after the run, so
  // that perf and gdb find the step's functions by name.
  int fd = -1;
  const char *keepIn = std::getenv("GACC_HOST_CODE_DIR");
  if (keepIn && *keepIn) {
    std::string name = std::string(keepIn) + "/gacc-host-code-XXXXXX.so";
    fd = ::mkostemps(name.data(), 3, O_CLOEXEC);
    if (fd >= 0)
      std::fprintf(stderr, "gacc: host code of %s in %s\n", origin.c_str(),
                   name.c_str());
  } else {
    fd = ::memfd_create("gacc-host-code", MFD_CLOEXEC);
  }
  if (fd < 0)
    return Status::error(origin + ": cannot create the host code's file: " +
                         std::strerror(errno));
  size_t written = 0;
  while (written < sharedObject.size()) {
    ssize_t n = ::write(fd, sharedObject.data() + written,
                        sharedObject.size() - written);
    if (n <= 0) {
      ::close(fd);
      return Status::error(origin + ": cannot write the host code: " +
                           std::strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  // The file stays open while the code is loaded: dlopen returns an already
  // loaded library of the same name, and a closed descriptor's number, so
  // its /proc/self/fd path, would name the next step's code too.
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ::close(fd);
    return Status::error(origin + ": cannot load the host code: " +
                         ::dlerror());
  }
  // A CUDA step's kernels load after the imports are bound, and unload
  // before the code goes.
  using Hook = void (*)();
  auto unload = reinterpret_cast<Hook>(::dlsym(handle, "gacc_cuda_unload_kernels"));
  std::shared_ptr<void> owner(handle, [unload, fd](void *h) {
    if (unload)
      unload();
    ::dlclose(h);
    ::close(fd);
  });
  for (const HostImport &import : hostImports())
    if (void *slot = ::dlsym(handle, (std::string(kHostImportPrefix) +
                                      import.symbol)
                                         .c_str()))
      *static_cast<void **>(slot) = import.function;
  if (auto load = reinterpret_cast<Hook>(::dlsym(handle, "gacc_cuda_load_kernels")))
    load();
  for (auto [name, entry] : {std::pair{"_mlir_ciface_gacc_step", &out.step},
                             std::pair{"_mlir_ciface_gacc_eval", &out.eval}}) {
    void *function = ::dlsym(handle, name);
    if (!function)
      return Status::error(origin + ": the host code has no entry point '" +
                           name + "'");
    *entry = reinterpret_cast<StepEntry>(function);
  }
  out.owner = owner;
  return Status();
}

Status openTrainer(const std::string &path, uint64_t seed,
                   std::unique_ptr<Trainer> &out) {
  Artifact artifact;
  if (Status status = readArtifact(path, "", artifact); !status)
    return status;
  // A CUDA step's device opens first: its host code loads the kernels.
  std::unique_ptr<DeviceMemory> device;
  if (Status status = openTargetDevice(artifact.target, device); !status)
    return Status::error(path + ": " + status.message());
  auto host = artifact.sections.find("host");
  if (host == artifact.sections.end())
    return Status::error(path + ": no host code section");
  if (Status status = checkCpuFeatures(artifact.cpuFeatures, path); !status)
    return status;
  CompiledStep compiled;
  if (Status status = loadHostCode(host->second, path, compiled); !status)
    return status;
  out = std::make_unique<Trainer>(std::move(artifact.model),
                                  std::move(compiled));
  if (Status status = out->initialize(seed); !status)
    return Status::error(path + ": " + status.message());
  if (device)
    return out->placeArenasOn(std::move(device));
  return Status();
}

} // namespace gacc::rt
