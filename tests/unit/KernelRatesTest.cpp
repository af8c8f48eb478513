//===- KernelRatesTest.cpp - timings of the kernels for gacc tune --------===//
//
// Each timing is positive and finite, and grows with the work: 16 times the
// flops of a matmul take longer, in every operand type the steps use.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/KernelRates.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rt = ::gacc::rt;

TEST(KernelRates, MatmulTimesGrowWithTheWork) {
  for (rt::DType type :
       {rt::DType::F32, rt::DType::F64, rt::DType::F16, rt::DType::BF16}) {
    double small = rt::measureMatmulSeconds(type, 1, 64, 64, 64);
    double large = rt::measureMatmulSeconds(type, 2, 128, 128, 128);
    EXPECT_TRUE(std::isfinite(small) && small > 0) << rt::dtypeName(type);
    EXPECT_GT(large, small) << rt::dtypeName(type);
  }
}

TEST(KernelRates, BandwidthAndDispatchArePlausible) {
  double bandwidth = rt::measureStreamBandwidth();
  EXPECT_GT(bandwidth, 1e8); // 100 MB/s: any machine that runs the tests
  EXPECT_LT(bandwidth, 1e13);
  double dispatch = rt::measureDispatchSeconds();
  EXPECT_GT(dispatch, 0);
  EXPECT_LT(dispatch, 1e-3);
}
