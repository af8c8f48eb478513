//===- Mpi.cpp - collectives over MPI ---------------------------------------===//
//
// Built when CMake finds MPI (Debian: libopenmpi-dev); errors return (the
// communicator's error handler is MPI_ERRORS_RETURN) with MPI's message,
// and abort() ends the job on every rank through MPI_Abort.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Communicator.h"

#if GACC_HAVE_MPI
// The C API only, not Open MPI's deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <cstdio>
#include <cstdlib>

namespace gacc::rt {

#if GACC_HAVE_MPI
namespace {
/// The MPI datatype of `dtype`; 16-bit floats travel as their bits, which
/// only gathers and broadcasts may do.
MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F64: return MPI_DOUBLE;
  case DType::F32: return MPI_FLOAT;
  case DType::I64: return MPI_INT64_T;
  case DType::I32: return MPI_INT32_T;
  case DType::I8: return MPI_INT8_T;
  case DType::U8:
  case DType::Bool: return MPI_UINT8_T;
  case DType::F16:
  case DType::BF16: return MPI_UINT16_T;
  }
  return MPI_BYTE;
}

bool reducible(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64;
}

Status check(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return Status();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::error(std::string("MPI ") + what + " failed: " +
                       std::string(text, length));
}

/// Divides `count` elements of `data` by `ranks` (a mean from a sum).
void divide(void *data, int64_t count, DType dtype, int ranks) {
  for (int64_t i = 0; i < count; ++i)
    storeElement(dtype, static_cast<std::byte *>(data), i,
                 loadElement(dtype, static_cast<std::byte *>(data), i) /
                     ranks);
}

class Mpi : public Communicator {
public:
  Mpi() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~Mpi() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(void *data, int64_t count, DType dtype,
                   Reduction reduction) override {
    if (!reducible(dtype))
      return Status::error("all-reduce of " + std::string(dtypeName(dtype)) +
                           " is not supported");
    volume_ += 2 * count;
    if (Status s = check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                                       mpiType(dtype), MPI_SUM, MPI_COMM_WORLD),
                         "all-reduce");
        !s)
      return s;
    if (reduction == Reduction::Mean)
      divide(data, count, dtype, size_);
    return Status();
  }

  Status reduceScatter(const void *send, void *recv, int64_t count,
                       DType dtype, Reduction reduction) override {
    if (!reducible(dtype))
      return Status::error("reduce-scatter of " +
                           std::string(dtypeName(dtype)) + " is not supported");
    volume_ += count * size_;
    if (Status s = check(MPI_Reduce_scatter_block(send, recv,
                                                  static_cast<int>(count),
                                                  mpiType(dtype), MPI_SUM,
                                                  MPI_COMM_WORLD),
                         "reduce-scatter");
        !s)
      return s;
    if (reduction == Reduction::Mean)
      divide(recv, count, dtype, size_);
    return Status();
  }

  Status allGather(const void *send, void *recv, int64_t count,
                   DType dtype) override {
    volume_ += count * size_;
    return check(MPI_Allgather(send, static_cast<int>(count), mpiType(dtype),
                               recv, static_cast<int>(count), mpiType(dtype),
                               MPI_COMM_WORLD),
                 "all-gather");
  }

  Status broadcast(void *data, int64_t count, DType dtype, int root) override {
    if (root < 0 || root >= size_)
      return Status::error("broadcast from rank " + std::to_string(root) +
                           " in a job of " + std::to_string(size_));
    volume_ += count;
    return check(MPI_Bcast(data, static_cast<int>(count), mpiType(dtype), root,
                           MPI_COMM_WORLD),
                 "broadcast");
  }

  [[noreturn]] void abort(const std::string &message) override {
    std::fprintf(stderr, "gacc: rank %d: %s\n", rank_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::exit(1);
  }

private:
  int rank_ = 0, size_ = 1;
};
} // namespace

Status createMpiCommunicator(std::unique_ptr<Communicator> &out) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS)
    return Status::error("MPI_Init failed");
  out = std::make_unique<Mpi>();
  return Status();
}
#else
Status createMpiCommunicator(std::unique_ptr<Communicator> &) {
  return Status::error("this runtime was built without MPI (Debian: install "
                       "libopenmpi-dev and rebuild)");
}
#endif

} // namespace gacc::rt
