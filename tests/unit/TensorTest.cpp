//===- TensorTest.cpp - host tensors and element types --------------------===//

#include "gacc/runtime/Tensor.h"

#include <gtest/gtest.h>

using namespace gacc::rt;

TEST(DType, NamesRoundTrip) {
  for (DType dtype :
       {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
        DType::I8, DType::U8, DType::Bool}) {
    std::optional<DType> parsed = parseDType(dtypeName(dtype));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_FALSE(parseDType("F8_E4M3").has_value());
  EXPECT_EQ(byteWidth(DType::BF16), 2u);
  EXPECT_EQ(byteWidth(DType::I64), 8u);
}

TEST(Tensor, ZeroFilledWithShape) {
  Tensor tensor(DType::F32, {3, 4});
  EXPECT_EQ(tensor.numElements(), 12);
  EXPECT_EQ(tensor.byteSize(), 48u);
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(tensor.dataAs<float>()[i], 0.0f);
}

TEST(Tensor, ScalarHasOneElement) {
  Tensor scalar(DType::F64, {});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.byteSize(), 8u);
}

TEST(ElementCount, RejectsNegativeAndOverflow) {
  EXPECT_EQ(elementCount({2, 3, 4}), 24);
  EXPECT_EQ(elementCount({0, 5}), 0);
  EXPECT_FALSE(elementCount({-1, 4}).has_value());
  EXPECT_FALSE(elementCount({1ll << 40, 1ll << 40}).has_value());
}
