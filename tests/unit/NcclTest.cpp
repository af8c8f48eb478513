//===- NcclTest.cpp - the NCCL communicator on a GPU ------------------------===//
//
// Runs where a GPU, its driver, NCCL and the CUDA runtime are
// (bench/gpu/runtime_tests.sh); skips cleanly elsewhere, after checking that
// the error names what is missing. One rank (NCCL refuses two ranks on one
// GPU): the collectives' results, device buffers, volume counts and errors.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Communicator.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <vector>

using namespace gacc::rt;

namespace {
/// The CUDA runtime calls the test needs for device buffers.
struct Cuda {
  int (*malloc)(void **, size_t) = nullptr;
  int (*free)(void *) = nullptr;
  int (*memcpy)(void *, const void *, size_t, int) = nullptr;
  static constexpr int kHostToDevice = 1, kDeviceToHost = 2;

  bool load() {
    void *cudart = ::dlopen("libcudart.so.12", RTLD_NOW | RTLD_GLOBAL);
    if (!cudart)
      cudart = ::dlopen("libcudart.so", RTLD_NOW | RTLD_GLOBAL);
    if (!cudart)
      return false;
    malloc = reinterpret_cast<decltype(malloc)>(::dlsym(cudart, "cudaMalloc"));
    free = reinterpret_cast<decltype(free)>(::dlsym(cudart, "cudaFree"));
    memcpy = reinterpret_cast<decltype(memcpy)>(::dlsym(cudart, "cudaMemcpy"));
    return malloc && free && memcpy;
  }
  void *upload(const std::vector<float> &host) {
    void *device = nullptr;
    EXPECT_EQ(malloc(&device, host.size() * sizeof(float)), 0);
    EXPECT_EQ(memcpy(device, host.data(), host.size() * sizeof(float),
                     kHostToDevice),
              0);
    return device;
  }
  std::vector<float> download(const void *device, size_t count) {
    std::vector<float> host(count);
    EXPECT_EQ(memcpy(host.data(), device, count * sizeof(float),
                     kDeviceToHost),
              0);
    return host;
  }
};

class NcclTest : public ::testing::Test {
protected:
  void SetUp() override {
    bootstrap = createSingleRankCommunicator();
    Status status = createNcclCommunicator(*bootstrap, 0, nccl);
    if (!status) {
      // Missing pieces are named, not crashed on.
      EXPECT_TRUE(status.message().find("not available") != std::string::npos ||
                  status.message().find("GPU") != std::string::npos ||
                  status.message().find("nccl") != std::string::npos)
          << status.message();
      GTEST_SKIP() << status.message();
    }
    ASSERT_TRUE(cuda.load());
  }
  std::unique_ptr<Communicator> bootstrap, nccl;
  Cuda cuda;
};
} // namespace

TEST_F(NcclTest, CollectivesOnDeviceBuffers) {
  std::vector<float> values = {1, 2, 3, 4};
  void *data = cuda.upload(values);
  ASSERT_TRUE(nccl->allReduce(data, 4, DType::F32, Reduction::Sum));
  EXPECT_EQ(cuda.download(data, 4), values);
  ASSERT_TRUE(nccl->allReduce(data, 4, DType::F32, Reduction::Mean));
  EXPECT_EQ(cuda.download(data, 4), values);
  void *out = cuda.upload({0, 0, 0, 0});
  ASSERT_TRUE(nccl->reduceScatter(data, out, 4, DType::F32, Reduction::Sum));
  EXPECT_EQ(cuda.download(out, 4), values);
  void *gathered = cuda.upload({0, 0, 0, 0});
  ASSERT_TRUE(nccl->allGather(data, gathered, 4, DType::F32));
  EXPECT_EQ(cuda.download(gathered, 4), values);
  ASSERT_TRUE(nccl->broadcast(data, 4, DType::F32, 0));
  EXPECT_EQ(cuda.download(data, 4), values);
  // Counted as the ZeRO paper counts: 2n + 2n + n + n + n.
  EXPECT_EQ(nccl->volume(), 4 * 7);
  EXPECT_FALSE(nccl->broadcast(data, 4, DType::F32, 3));
  for (void *buffer : {data, out, gathered})
    cuda.free(buffer);
}

TEST_F(NcclTest, HalfPrecisionGathers) {
  // bf16 weights travel as themselves (ZeRO-3 gathers them).
  std::vector<uint16_t> bits = {0x3f80, 0x4000, 0x4040, 0x4080};
  void *device = nullptr, *gathered = nullptr;
  ASSERT_EQ(cuda.malloc(&device, 8), 0);
  ASSERT_EQ(cuda.malloc(&gathered, 8), 0);
  ASSERT_EQ(cuda.memcpy(device, bits.data(), 8, Cuda::kHostToDevice), 0);
  ASSERT_TRUE(nccl->allGather(device, gathered, 4, DType::BF16));
  std::vector<uint16_t> back(4);
  ASSERT_EQ(cuda.memcpy(back.data(), gathered, 8, Cuda::kDeviceToHost), 0);
  EXPECT_EQ(back, bits);
  cuda.free(device);
  cuda.free(gathered);
}
