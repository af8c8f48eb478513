//===- InitTest.cpp - parameter initialization -------------------------------===//
//
// Philox4x32-10 against the Random123 known-answer tests, fills that do not
// depend on the number of threads, and the initializers' moments.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Init.h"
#include "gacc/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace gacc::rt;

namespace {
TEST(Init, PhiloxMatchesTheKnownAnswers) {
  using Block = std::array<uint32_t, 4>;
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

Parameter parameter(InitKind init, std::vector<int64_t> shape,
                    DType dtype = DType::F32, double scale = 1.0) {
  Parameter param;
  param.slot.dtype = dtype;
  param.slot.shape = std::move(shape);
  param.init = init;
  param.scale = scale;
  param.seed = 7;
  return param;
}

std::vector<float> fill(const Parameter &param, unsigned threads,
                        uint64_t seed = 1) {
  std::vector<float> values(*elementCount(param.slot.shape));
  initializeParameter(param, seed, reinterpret_cast<std::byte *>(values.data()),
                      threads);
  return values;
}

TEST(Init, ElementsDoNotDependOnTheThreads) {
  // Odd and large enough to be cut into chunks.
  for (InitKind init : {InitKind::Normal, InitKind::KaimingUniform}) {
    Parameter param = parameter(init, {1001, 777});
    std::vector<float> one = fill(param, 1);
    EXPECT_EQ(one, fill(param, 2));
    EXPECT_EQ(one, fill(param, 7));
    EXPECT_NE(one, fill(param, 1, /*seed=*/2));
  }
}

TEST(Init, OtherTypesGetTheSameValuesRounded) {
  Parameter f32 = parameter(InitKind::Normal, {333});
  Parameter f64 = parameter(InitKind::Normal, {333}, DType::F64);
  std::vector<float> single = fill(f32, 2);
  std::vector<double> wide(333);
  initializeParameter(f64, 1, reinterpret_cast<std::byte *>(wide.data()), 3);
  for (size_t i = 0; i < wide.size(); ++i)
    EXPECT_EQ(single[i], static_cast<float>(wide[i]));
}

TEST(Init, DistributionsHaveTheirMoments) {
  auto moments = [](const std::vector<float> &values) {
    double sum = 0, squares = 0;
    for (float v : values) {
      sum += v;
      squares += double(v) * v;
    }
    double mean = sum / values.size();
    return std::pair{mean, std::sqrt(squares / values.size() - mean * mean)};
  };
  // 1e6 samples: the mean within 5 standard errors, the std within 1%.
  auto [normalMean, normalStd] =
      moments(fill(parameter(InitKind::Normal, {1000, 1000}, DType::F32, 0.02),
                   2));
  EXPECT_NEAR(normalMean, 0.0, 5 * 0.02 / 1000);
  EXPECT_NEAR(normalStd, 0.02, 0.02 * 0.01);
  // Kaiming uniform on [out, in]: U(-b, b), b = sqrt(3 / in), std b / sqrt 3.
  std::vector<float> uniform =
      fill(parameter(InitKind::KaimingUniform, {1000, 1000}), 2);
  auto [uniformMean, uniformStd] = moments(uniform);
  double bound = std::sqrt(3.0 / 1000);
  EXPECT_NEAR(uniformMean, 0.0, 5 * bound / std::sqrt(3.0) / 1000);
  EXPECT_NEAR(uniformStd, bound / std::sqrt(3.0), bound * 0.01);
  for (float v : uniform)
    ASSERT_LE(std::abs(v), bound);
  std::vector<float> ones = fill(parameter(InitKind::Ones, {5}), 1);
  EXPECT_EQ(ones, std::vector<float>(5, 1.0f));
}
} // namespace
