//===- Collectives.cpp - the collectives compiled steps call ----------------===//

#include "gacc/runtime/Collectives.h"

#include <cstring>
#include <vector>

extern "C" void memrefCopy(int64_t elementSize, void *source, void *target);

namespace gacc::rt {
namespace {
thread_local Communicator *stepCommunicator = nullptr;

Communicator &communicator() {
  if (!stepCommunicator) {
    static std::unique_ptr<Communicator> single = createSingleRankCommunicator();
    return *single;
  }
  return *stepCommunicator;
}

struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// A memref's elements, contiguous: its own buffer when it is row-major
/// dense, else a packed copy.
class Contiguous {
public:
  Contiguous(int64_t rank, void *descriptor, size_t elementSize) {
    auto *fields = static_cast<int64_t *>(descriptor);
    auto *aligned = reinterpret_cast<char *>(fields[1]);
    const int64_t *sizes = fields + 3, *strides = fields + 3 + rank;
    count = 1;
    bool dense = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != count)
        dense = false;
      count *= sizes[d];
    }
    if (dense) {
      data = aligned + fields[2] * elementSize;
      return;
    }
    packed.resize(count * elementSize);
    // A row-major descriptor of the packed copy for memrefCopy.
    std::vector<int64_t> target(3 + 2 * rank);
    target[0] = target[1] = reinterpret_cast<int64_t>(packed.data());
    target[2] = 0;
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      target[3 + d] = sizes[d];
      target[3 + rank + d] = stride;
      stride *= sizes[d];
    }
    UnrankedMemRef from{rank, descriptor}, to{rank, target.data()};
    memrefCopy(static_cast<int64_t>(elementSize), &from, &to);
    data = packed.data();
  }
  char *data;
  int64_t count;

private:
  std::vector<char> packed;
};

void check(Communicator &comm, const Status &status, const char *what) {
  if (!status)
    comm.abort(std::string(what) + ": " + status.message());
}

Reduction reductionOf(int32_t code) {
  return code == 1 ? Reduction::Mean : Reduction::Sum;
}
} // namespace

void setStepCommunicator(Communicator *communicator) {
  stepCommunicator = communicator;
}

} // namespace gacc::rt

using namespace gacc::rt;

extern "C" void gacc_comm_all_reduce(int64_t inRank, void *in, int64_t outRank,
                                     void *out, int32_t dtype,
                                     int32_t reduction) {
  auto type = static_cast<DType>(dtype);
  size_t width = byteWidth(type);
  Contiguous input(inRank, in, width), output(outRank, out, width);
  std::memcpy(output.data, input.data, input.count * width);
  Communicator &comm = communicator();
  check(comm, comm.allReduce(output.data, output.count, type,
                             reductionOf(reduction)),
        "all-reduce");
}

extern "C" void gacc_comm_reduce_scatter(int64_t inRank, void *in,
                                         int64_t outRank, void *out,
                                         int32_t dtype, int32_t reduction) {
  auto type = static_cast<DType>(dtype);
  size_t width = byteWidth(type);
  Contiguous input(inRank, in, width), output(outRank, out, width);
  Communicator &comm = communicator();
  check(comm, comm.reduceScatter(input.data, output.data, output.count, type,
                                 reductionOf(reduction)),
        "reduce-scatter");
}

extern "C" void gacc_comm_all_gather(int64_t inRank, void *in, int64_t outRank,
                                     void *out, int32_t dtype, int32_t) {
  auto type = static_cast<DType>(dtype);
  size_t width = byteWidth(type);
  Contiguous input(inRank, in, width), output(outRank, out, width);
  Communicator &comm = communicator();
  check(comm, comm.allGather(input.data, output.data, input.count, type),
        "all-gather");
}

extern "C" void gacc_comm_broadcast(int64_t inRank, void *in, int64_t outRank,
                                    void *out, int32_t dtype, int32_t root) {
  auto type = static_cast<DType>(dtype);
  size_t width = byteWidth(type);
  Contiguous input(inRank, in, width), output(outRank, out, width);
  std::memcpy(output.data, input.data, input.count * width);
  Communicator &comm = communicator();
  check(comm, comm.broadcast(output.data, output.count, type, root),
        "broadcast");
}
