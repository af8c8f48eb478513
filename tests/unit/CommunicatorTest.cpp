//===- CommunicatorTest.cpp - collectives over the ranks of an MPI job ------===//
//
// Run under mpirun with any number of ranks (ctest runs 1, 2 and 4): every
// rank checks the collectives' results against what each rank contributed,
// the volume they count, and that bad calls are errors on every rank.
// `--fail-on-rank=R` instead makes rank R abort with a message while the
// others wait in a collective: the job must end on every rank, not hang.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Communicator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gacc::rt;

namespace {
Communicator *comm;
}

TEST(Communicator, AllReduceSumAndMean) {
  int n = comm->size();
  std::vector<float> data = {1.0f + comm->rank(), 10.0f * comm->rank()};
  int64_t before = comm->volume();
  ASSERT_TRUE(comm->allReduce(data.data(), 2, DType::F32, Reduction::Sum).ok());
  EXPECT_EQ(data[0], n + n * (n - 1) / 2.0f);
  EXPECT_EQ(data[1], 10.0f * n * (n - 1) / 2);
  std::vector<double> mean = {static_cast<double>(comm->rank())};
  ASSERT_TRUE(comm->allReduce(mean.data(), 1, DType::F64, Reduction::Mean).ok());
  EXPECT_DOUBLE_EQ(mean[0], (n - 1) / 2.0);
  EXPECT_EQ(comm->volume() - before, 2 * 2 + 2 * 1);
}

TEST(Communicator, ReduceScatterGivesEachRankItsShard) {
  int n = comm->size(), count = 3;
  std::vector<float> send(n * count), shard(count);
  for (int i = 0; i < n * count; ++i)
    send[i] = 100.0f * comm->rank() + i;
  int64_t before = comm->volume();
  ASSERT_TRUE(comm->reduceScatter(send.data(), shard.data(), count, DType::F32,
                                  Reduction::Sum)
                  .ok());
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(shard[i], 100.0f * n * (n - 1) / 2 +
                            static_cast<float>(n * (comm->rank() * count + i)));
  EXPECT_EQ(comm->volume() - before, n * count);
}

TEST(Communicator, AllGatherConcatenatesInRankOrder) {
  int n = comm->size(), count = 2;
  std::vector<int32_t> send = {10 * comm->rank(), 10 * comm->rank() + 1};
  std::vector<int32_t> all(n * count);
  ASSERT_TRUE(comm->allGather(send.data(), all.data(), count, DType::I32).ok());
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(all[r * count], 10 * r);
    EXPECT_EQ(all[r * count + 1], 10 * r + 1);
  }
}

TEST(Communicator, BroadcastFromTheLastRank) {
  int root = comm->size() - 1;
  std::vector<float> data = {static_cast<float>(comm->rank()), -1.0f};
  ASSERT_TRUE(comm->broadcast(data.data(), 2, DType::F32, root).ok());
  EXPECT_EQ(data[0], static_cast<float>(root));
}

TEST(Communicator, BadCallsAreErrorsOnEveryRank) {
  float x = 0;
  Status status = comm->broadcast(&x, 1, DType::F32, comm->size());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("broadcast from rank"), std::string::npos);
  if (comm->size() > 1) {
    uint16_t half = 0;
    EXPECT_FALSE(
        comm->allReduce(&half, 1, DType::F16, Reduction::Sum).ok());
  }
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<Communicator> owner;
  if (Status status = createMpiCommunicator(owner); !status) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  comm = owner.get();
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--fail-on-rank=", 15) == 0) {
      if (comm->rank() == std::atoi(argv[i] + 15))
        comm->abort("injected failure (bad input on this rank)");
      float x = 1;
      (void)comm->allReduce(&x, 1, DType::F32, Reduction::Sum);
      std::fprintf(stderr, "rank %d: the job went on without the failed rank\n",
                   comm->rank());
      return 0;
    }
  return RUN_ALL_TESTS();
}
