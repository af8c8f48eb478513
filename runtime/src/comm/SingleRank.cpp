//===- SingleRank.cpp - collectives of a one-rank job -----------------------===//

#include "gacc/runtime/Communicator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gacc::rt {
namespace {
class SingleRank : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status allReduce(void *, int64_t count, DType, Reduction) override {
    volume_ += 2 * count;
    return Status();
  }
  Status reduceScatter(const void *send, void *recv, int64_t count,
                       DType dtype, Reduction) override {
    volume_ += count;
    std::memmove(recv, send, count * byteWidth(dtype));
    return Status();
  }
  Status allGather(const void *send, void *recv, int64_t count,
                   DType dtype) override {
    volume_ += count;
    std::memmove(recv, send, count * byteWidth(dtype));
    return Status();
  }
  Status broadcast(void *, int64_t count, DType, int root) override {
    if (root != 0)
      return Status::error("broadcast from rank " + std::to_string(root) +
                           " in a job of one rank");
    volume_ += count;
    return Status();
  }
  [[noreturn]] void abort(const std::string &message) override {
    std::fprintf(stderr, "gacc: %s\n", message.c_str());
    std::exit(1);
  }
};
} // namespace

std::unique_ptr<Communicator> createSingleRankCommunicator() {
  return std::make_unique<SingleRank>();
}

} // namespace gacc::rt
