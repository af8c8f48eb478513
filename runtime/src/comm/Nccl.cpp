//===- Nccl.cpp - collectives over NCCL, loaded at run time -----------------===//
//
// The GPU's communicator: NCCL (libnccl.so.2) and the CUDA runtime
// (libcudart.so) are opened with dlopen, so the runtime builds and runs
// without them; the few entry points and ABI constants used are declared
// here (they are stable across NCCL 2.x). The ranks agree on NCCL's unique
// id through a bootstrap communicator (MPI across processes). Buffers are
// device pointers; every call waits for its stream, so a collective has
// finished when it returns, as with the other communicators.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace gacc::rt {
namespace {
// NCCL's ABI (nccl.h): results, the unique id, data types, reductions.
using NcclResult = int;
using NcclComm = void *;
using CudaStream = void *;
struct NcclUniqueId {
  char internal[128];
};
enum NcclDataType { kNcclUint8 = 1, kNcclFloat16 = 6, kNcclFloat32 = 7,
                    kNcclFloat64 = 8, kNcclBfloat16 = 9, kNcclInt64 = 4,
                    kNcclInt32 = 2, kNcclInt8 = 0 };
enum NcclRedOp { kNcclSum = 0, kNcclAvg = 4 };

struct NcclApi {
  NcclResult (*getUniqueId)(NcclUniqueId *);
  NcclResult (*commInitRank)(NcclComm *, int, NcclUniqueId, int);
  NcclResult (*commDestroy)(NcclComm);
  NcclResult (*commAbort)(NcclComm);
  const char *(*getErrorString)(NcclResult);
  NcclResult (*allReduce)(const void *, void *, size_t, int, int, NcclComm,
                          CudaStream);
  NcclResult (*reduceScatter)(const void *, void *, size_t, int, int,
                              NcclComm, CudaStream);
  NcclResult (*allGather)(const void *, void *, size_t, int, NcclComm,
                          CudaStream);
  NcclResult (*broadcast)(const void *, void *, size_t, int, int, NcclComm,
                          CudaStream);
  int (*cudaSetDevice)(int);
  int (*cudaStreamSynchronize)(CudaStream);
  const char *(*cudaGetErrorString)(int);
};

/// Opens the first of `names` that loads.
void *openLibrary(std::initializer_list<const char *> names,
                  std::string &error) {
  for (const char *name : names)
    if (void *handle = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL))
      return handle;
  error = ::dlerror() ? ::dlerror() : "not found";
  return nullptr;
}

Status loadApi(NcclApi &api) {
  std::string error;
  void *nccl = openLibrary({"libnccl.so.2", "libnccl.so"}, error);
  if (!nccl)
    return Status::error("NCCL is not available (libnccl.so.2: " + error +
                         ")");
  void *cudart = openLibrary({"libcudart.so.13", "libcudart.so.12",
                              "libcudart.so.11.0",
                              "libcudart.so"},
                             error);
  if (!cudart)
    return Status::error("the CUDA runtime is not available (libcudart.so: " +
                         error + ")");
  bool complete = true;
  auto bind = [&](void *library, const char *name, auto &slot) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        ::dlsym(library, name));
    complete &= slot != nullptr;
  };
  bind(nccl, "ncclGetUniqueId", api.getUniqueId);
  bind(nccl, "ncclCommInitRank", api.commInitRank);
  bind(nccl, "ncclCommDestroy", api.commDestroy);
  bind(nccl, "ncclCommAbort", api.commAbort);
  bind(nccl, "ncclGetErrorString", api.getErrorString);
  bind(nccl, "ncclAllReduce", api.allReduce);
  bind(nccl, "ncclReduceScatter", api.reduceScatter);
  bind(nccl, "ncclAllGather", api.allGather);
  bind(nccl, "ncclBroadcast", api.broadcast);
  bind(cudart, "cudaSetDevice", api.cudaSetDevice);
  bind(cudart, "cudaStreamSynchronize", api.cudaStreamSynchronize);
  bind(cudart, "cudaGetErrorString", api.cudaGetErrorString);
  if (!complete)
    return Status::error("NCCL or the CUDA runtime lacks an entry point "
                         "gacc needs (NCCL 2.10 or later)");
  return Status();
}

int ncclType(DType dtype) {
  switch (dtype) {
  case DType::F64: return kNcclFloat64;
  case DType::F32: return kNcclFloat32;
  case DType::F16: return kNcclFloat16;
  case DType::BF16: return kNcclBfloat16;
  case DType::I64: return kNcclInt64;
  case DType::I32: return kNcclInt32;
  case DType::I8: return kNcclInt8;
  case DType::U8:
  case DType::Bool: return kNcclUint8;
  }
  return kNcclUint8;
}

class Nccl : public Communicator {
public:
  Nccl(NcclApi api, NcclComm comm, Communicator &bootstrap)
      : api_(api), comm_(comm), bootstrap_(bootstrap) {}
  ~Nccl() override { api_.commDestroy(comm_); }

  int rank() const override { return bootstrap_.rank(); }
  int size() const override { return bootstrap_.size(); }

  Status allReduce(void *data, int64_t count, DType dtype,
                   Reduction reduction) override {
    volume_ += 2 * count;
    return finish(api_.allReduce(data, data, count, ncclType(dtype),
                                 reduction == Reduction::Mean ? kNcclAvg
                                                              : kNcclSum,
                                 comm_, nullptr),
                  "all-reduce");
  }
  Status reduceScatter(const void *send, void *recv, int64_t count,
                       DType dtype, Reduction reduction) override {
    volume_ += count * size();
    return finish(api_.reduceScatter(send, recv, count, ncclType(dtype),
                                     reduction == Reduction::Mean ? kNcclAvg
                                                                  : kNcclSum,
                                     comm_, nullptr),
                  "reduce-scatter");
  }
  Status allGather(const void *send, void *recv, int64_t count,
                   DType dtype) override {
    volume_ += count * size();
    return finish(
        api_.allGather(send, recv, count, ncclType(dtype), comm_, nullptr),
        "all-gather");
  }
  Status broadcast(void *data, int64_t count, DType dtype,
                   int root) override {
    if (root < 0 || root >= size())
      return Status::error("broadcast from rank " + std::to_string(root) +
                           " in a job of " + std::to_string(size()));
    volume_ += count;
    return finish(api_.broadcast(data, data, count, ncclType(dtype), root,
                                 comm_, nullptr),
                  "broadcast");
  }
  [[noreturn]] void abort(const std::string &message) override {
    api_.commAbort(comm_);
    bootstrap_.abort(message);
    std::exit(1); // not reached: the bootstrap ends the job
  }

private:
  /// Checks the enqueue, then waits for the stream.
  Status finish(NcclResult result, const char *what) {
    if (result != 0)
      return Status::error(std::string("NCCL ") + what + " failed: " +
                           api_.getErrorString(result));
    if (int error = api_.cudaStreamSynchronize(nullptr))
      return Status::error(std::string("NCCL ") + what + ": " +
                           api_.cudaGetErrorString(error));
    return Status();
  }

  NcclApi api_;
  NcclComm comm_;
  Communicator &bootstrap_;
};
} // namespace

Status createNcclCommunicator(Communicator &bootstrap, int device,
                              std::unique_ptr<Communicator> &out) {
  NcclApi api{};
  if (Status s = loadApi(api); !s)
    return s;
  if (int error = api.cudaSetDevice(device))
    return Status::error("cannot use GPU " + std::to_string(device) + ": " +
                         api.cudaGetErrorString(error));
  NcclUniqueId id;
  if (bootstrap.rank() == 0)
    if (NcclResult r = api.getUniqueId(&id))
      return Status::error(std::string("ncclGetUniqueId failed: ") +
                           api.getErrorString(r));
  // Rank 0's id reaches every rank over the bootstrap (MPI).
  if (Status s = bootstrap.broadcast(&id, sizeof(id), DType::U8, 0); !s)
    return s;
  NcclComm comm = nullptr;
  if (NcclResult r =
          api.commInitRank(&comm, bootstrap.size(), id, bootstrap.rank()))
    return Status::error(std::string("ncclCommInitRank failed: ") +
                         api.getErrorString(r));
  out = std::make_unique<Nccl>(api, comm, bootstrap);
  return Status();
}

} // namespace gacc::rt
