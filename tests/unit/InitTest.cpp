//===- InitTest.cpp - Philox parameter initialization -----------------------===//
//
// Philox4x32-10 against Random123's known answers; fills whose elements do
// not depend on the threads, the shard or the element type; the
// distributions' moments.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Init.h"
#include "gacc/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace gacc::rt;

namespace {
using Block = std::array<uint32_t, 4>;

TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

Parameter parameter(InitKind init, std::vector<int64_t> shape,
                    double scale = 1.0, DType dtype = DType::F32) {
  Parameter param;
  param.slot.dtype = dtype;
  param.slot.shape = std::move(shape);
  param.init = init;
  param.scale = scale;
  param.seed = 7;
  return param;
}

template <typename T = float>
std::vector<T> fill(const Parameter &param, unsigned threads,
                    uint64_t runSeed = 1) {
  std::vector<T> values(*elementCount(param.slot.shape));
  initializeParameter(param, runSeed,
                      reinterpret_cast<std::byte *>(values.data()), threads);
  return values;
}

/// The 32 random bits behind element i (docs/artifact.md): word (i mod 64)
/// div 16 of counter 16·(i div 64) + i mod 16.
uint32_t wordOf(const Parameter &param, uint64_t runSeed, int64_t i) {
  uint64_t seed = mixSeeds(param.seed, runSeed);
  uint64_t counter = 16 * (i / 64) + i % 16;
  Block words = philox4x32({uint32_t(counter), uint32_t(counter >> 32), 0, 0},
                           {uint32_t(seed), uint32_t(seed >> 32)});
  return words[(i % 64) / 16];
}

TEST(Initializers, UniformElementsAreTheirPhiloxWords) {
  Parameter param = parameter(InitKind::Uniform, {3, 333});
  std::vector<float> values = fill(param, 2, /*runSeed=*/5);
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    ASSERT_EQ(values[i], float(wordOf(param, 5, i) >> 8) * 0x1.0p-23f - 1.0f)
        << "element " << i;
}

TEST(Initializers, NormalIsBoxMullerOfThePhiloxWords) {
  // Pairs of words (0, 1) and (2, 3) of a counter: the radius from the
  // first, the angle from the second; f32 within a few ulp of f64.
  Parameter param = parameter(InitKind::Normal, {1000});
  std::vector<float> values = fill(param, 1, /*runSeed=*/3);
  for (int64_t i = 0; i < int64_t(values.size()); ++i) {
    int64_t word = (i % 64) / 16, first = i - (word % 2) * 16;
    double u = double((wordOf(param, 3, first) >> 8) + 1) * 0x1.0p-24;
    double turns = double(wordOf(param, 3, first + 16) >> 8) * 0x1.0p-24;
    double radius = std::sqrt(-2.0 * std::log(u));
    double expected = radius * (word % 2 ? std::sin(2 * M_PI * turns)
                                         : std::cos(2 * M_PI * turns));
    ASSERT_NEAR(values[i], expected, 2e-6 * std::max(1.0, radius))
        << "element " << i;
  }
}

TEST(Initializers, ElementsDoNotDependOnTheThreads) {
  // More than one 2^16-element piece, and not a whole number of blocks.
  for (InitKind init : {InitKind::Normal, InitKind::XavierUniform}) {
    Parameter param = parameter(init, {1001, 777});
    std::vector<float> one = fill(param, 1);
    EXPECT_EQ(one, fill(param, 2));
    EXPECT_EQ(one, fill(param, 7));
    EXPECT_NE(one, fill(param, 1, /*runSeed=*/2));
  }
}

TEST(Initializers, AShardIsASliceOfTheWhole) {
  Parameter param = parameter(InitKind::Normal, {100, 1000}, 0.02);
  std::vector<float> whole = fill(param, 2);
  // An odd range, as a shard of 3 ranks, with its bf16 weight beside it.
  int64_t begin = 33333, end = 66666;
  std::vector<float> shard(end - begin);
  std::vector<uint16_t> weight(end - begin);
  InitRange range;
  range.param = param;
  range.data = reinterpret_cast<std::byte *>(shard.data());
  range.begin = begin;
  range.end = end;
  range.copy = reinterpret_cast<std::byte *>(weight.data());
  range.copyType = DType::BF16;
  initializeParameters({range}, 1, 3);
  for (int64_t i = begin; i < end; ++i) {
    ASSERT_EQ(shard[i - begin], whole[i]) << "element " << i;
    ASSERT_EQ(weight[i - begin], toBF16(whole[i])) << "element " << i;
  }
}

TEST(Initializers, OtherTypesGetTheF32ValuesRounded) {
  Parameter single = parameter(InitKind::KaimingNormal, {40, 50});
  std::vector<float> values = fill(single, 2);
  Parameter wide = single, half = single;
  wide.slot.dtype = DType::F64;
  half.slot.dtype = DType::F16;
  std::vector<double> doubles = fill<double>(wide, 2);
  std::vector<uint16_t> halves = fill<uint16_t>(half, 2);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(doubles[i], double(values[i]));
    ASSERT_EQ(halves[i], toF16(values[i]));
  }
  EXPECT_EQ(fill(parameter(InitKind::Ones, {5}), 1),
            std::vector<float>(5, 1.0f));
}

std::pair<double, double> meanAndStd(const std::vector<float> &values) {
  double sum = 0, squares = 0;
  for (float v : values) {
    sum += v;
    squares += double(v) * v;
  }
  double mean = sum / values.size();
  return {mean, std::sqrt(squares / values.size() - mean * mean)};
}

TEST(Initializers, NormalHasItsMoments) {
  // 10^6 samples: the mean within 5 standard errors, the std within 0.5%,
  // and 68.27% of them within one std.
  std::vector<float> values =
      fill(parameter(InitKind::Normal, {1000, 1000}, 0.02), 2);
  auto [mean, std] = meanAndStd(values);
  EXPECT_NEAR(mean, 0.0, 5 * 0.02 / 1000);
  EXPECT_NEAR(std, 0.02, 0.02 * 0.005);
  int64_t within = 0;
  for (float v : values)
    within += std::fabs(v) < 0.02f;
  EXPECT_NEAR(within / 1e6, 0.682689, 5 * 0.000466);
}

TEST(Initializers, UniformHasItsMoments) {
  // Kaiming uniform on [out, in]: U(-b, b), b = sqrt(3 / in), std b / √3.
  std::vector<float> values =
      fill(parameter(InitKind::KaimingUniform, {1000, 1000}), 2);
  auto [mean, std] = meanAndStd(values);
  double bound = std::sqrt(3.0 / 1000);
  EXPECT_NEAR(mean, 0.0, 5 * bound / std::sqrt(3.0) / 1000);
  EXPECT_NEAR(std, bound / std::sqrt(3.0), bound * 0.005);
  for (float v : values)
    ASSERT_LE(std::fabs(v), float(bound));
}
} // namespace
