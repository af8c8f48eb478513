//===- ThreadPoolTest.cpp - the threads compiled CPU steps run on -----------===//
//
// gacc::rt::parallelFor covers its range once, in chunks that do not depend
// on the thread count; calls from pool threads and concurrent callers run
// inline; the matmul kernel's results are bitwise the same on 1 and 4
// threads.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

extern "C" void gacc_cpu_matmul_f32(int64_t, void *, int64_t, void *, int64_t,
                                    void *, int32_t, int32_t, int32_t);

using namespace gacc::rt;

namespace {
/// Restores the pool's thread count after a test.
struct ThreadCount {
  int saved = threads();
  explicit ThreadCount(int count) { setThreads(count); }
  ~ThreadCount() { setThreads(saved); }
};

/// The chunks parallelFor(extent, grain) runs, and how often each index.
std::pair<std::set<std::pair<int64_t, int64_t>>, std::vector<int>>
chunksOf(int64_t extent, int64_t grain) {
  std::mutex mutex;
  std::set<std::pair<int64_t, int64_t>> chunks;
  std::vector<int> visits(extent, 0);
  parallelFor(extent, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.insert({begin, end});
    for (int64_t i = begin; i < end; ++i)
      ++visits[i];
  });
  return {chunks, visits};
}

TEST(ThreadPoolTest, CoversTheRangeOnceInChunksOfTheGrain) {
  auto [serialChunks, serialVisits] = [] {
    ThreadCount one(1);
    return chunksOf(1000, 64);
  }();
  EXPECT_EQ(serialChunks.size(), 16u);
  EXPECT_EQ(serialChunks.rbegin()->first, 960);
  EXPECT_EQ(serialChunks.rbegin()->second, 1000);
  for (int visits : serialVisits)
    EXPECT_EQ(visits, 1);
  for (int count : {2, 4, 7}) {
    ThreadCount threads(count);
    EXPECT_EQ(gacc::rt::threads(), count);
    for (int repeat = 0; repeat < 50; ++repeat) {
      auto [chunks, visits] = chunksOf(1000, 64);
      EXPECT_EQ(chunks, serialChunks) << count << " threads";
      EXPECT_EQ(visits, serialVisits) << count << " threads";
    }
  }
}

TEST(ThreadPoolTest, EmptyAndSingleChunkRanges) {
  ThreadCount threads(3);
  int calls = 0;
  parallelFor(0, 8, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  parallelFor(5, 8, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 5);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, NestedAndConcurrentCallsComplete) {
  ThreadCount threads(4);
  // A task that itself calls parallelFor (runs inline on its thread).
  std::atomic<int64_t> inner{0};
  parallelFor(32, 1, [&](int64_t, int64_t) {
    parallelFor(100, 10, [&](int64_t begin, int64_t end) {
      inner += end - begin;
    });
  });
  EXPECT_EQ(inner.load(), 3200);
  // Two threads using the pool at once: one of them runs inline.
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int i = 0; i < 200; ++i)
      parallelFor(1000, 7, [&](int64_t begin, int64_t end) {
        total += end - begin;
      });
  };
  std::thread other(work);
  work();
  other.join();
  EXPECT_EQ(total.load(), 2 * 200 * 1000);
}

/// A row-major memref descriptor over `data`.
std::vector<int64_t> descriptor(float *data, std::vector<int64_t> sizes) {
  std::vector<int64_t> fields = {reinterpret_cast<int64_t>(data),
                                 reinterpret_cast<int64_t>(data), 0};
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  fields.insert(fields.end(), sizes.begin(), sizes.end());
  fields.insert(fields.end(), strides.begin(), strides.end());
  return fields;
}

TEST(ThreadPoolTest, MatmulIsBitwiseTheSameOnAnyThreadCount) {
  // Large enough to be cut into blocks: C [3, 300, 200] += A [3, 300, 150] ·
  // B [150, 200] (B broadcast over the batch), and Aᵀ-shaped blocks by columns.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> values(n);
    for (float &v : values)
      v = uniform(rng);
    return values;
  };
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{300, 200, 150},
                         {64, 700, 300}}) {
    std::vector<float> a = random(3 * m * k), b = random(k * n),
                       c0 = random(3 * m * n);
    std::vector<std::vector<float>> results;
    for (int count : {1, 4}) {
      ThreadCount threads(count);
      std::vector<float> c = c0;
      auto da = descriptor(a.data(), {3, m, k});
      auto db = descriptor(b.data(), {k, n});
      auto dc = descriptor(c.data(), {3, m, n});
      gacc_cpu_matmul_f32(3, da.data(), 2, db.data(), 3, dc.data(), 0, 0, 1);
      results.push_back(c);
    }
    EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(),
                          results[0].size() * sizeof(float)),
              0)
        << m << "x" << n << "x" << k;
    // And it is the product: one element against a double reference.
    double expected = c0[5 * n + 7];
    for (int64_t p = 0; p < k; ++p)
      expected += double(a[5 * k + p]) * b[p * n + 7];
    EXPECT_NEAR(results[0][5 * n + 7], expected, 1e-3);
  }
}
} // namespace
