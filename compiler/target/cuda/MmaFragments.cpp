//===- MmaFragments.cpp - mma.sync operands through private memory --------===//

#include "compiler/target/cuda/MmaFragments.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using gacc::MmaFragments;

MmaFragments::MmaFragments(KernelIndexBuilder &k, gpu::LaunchOp launch,
                           int64_t slots, Type element)
    : k(k), element(element),
      buffer(k.addPrivateBuffer(launch, {slots, 8}, element)) {}

void MmaFragments::load(Value tile, ValueRange at, bool transpose,
                        int64_t slot) {
  ImplicitLocOpBuilder &b = k.b;
  Value matrices = nvgpu::LdMatrixOp::create(
      b, VectorType::get({4, 2}, element), tile, at, transpose,
      /*numTiles=*/4);
  for (int64_t i = 0; i < 4; ++i)
    vector::StoreOp::create(b, vector::ExtractOp::create(b, matrices, i),
                            buffer, ValueRange{k.index(slot), k.index(2 * i)});
}

void MmaFragments::store(Value low, Value high, int64_t slot, int64_t reg) {
  ImplicitLocOpBuilder &b = k.b;
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, low.getType()), ValueRange{low, high});
  pair = arith::TruncFOp::create(b, VectorType::get({2}, element), pair);
  vector::StoreOp::create(b, pair, buffer,
                          ValueRange{k.index(slot), k.index(2 * reg)});
}

SmallVector<Value> MmaFragments::registers(int64_t slot) {
  ImplicitLocOpBuilder &b = k.b;
  SmallVector<Value> values;
  auto pairType = VectorType::get({2}, element);
  for (int64_t i = 0; i < 4; ++i) {
    Value pair = vector::LoadOp::create(
        b, pairType, buffer, ValueRange{k.index(slot), k.index(2 * i)});
    values.push_back(
        element.isBF16()
            ? LLVM::BitcastOp::create(b, b.getI32Type(), pair).getResult()
            : pair);
  }
  return values;
}

SmallVector<Value> MmaFragments::pair(int64_t slot, int64_t half) {
  SmallVector<Value> values = registers(slot);
  return {values[2 * half], values[2 * half + 1]};
}

void MmaFragments::mma(ArrayRef<Value> a, ArrayRef<Value> bFragment, Value acc,
                       ArrayRef<int64_t> at) {
  ImplicitLocOpBuilder &b = k.b;
  auto position = [&](int64_t i) {
    SmallVector<Value> indices;
    for (int64_t v : at)
      indices.push_back(k.index(v));
    indices.push_back(k.index(i));
    return indices;
  };
  SmallVector<Value> c;
  for (int64_t i = 0; i < 4; ++i)
    c.push_back(memref::LoadOp::create(b, acc, position(i)));
  Type f32 = b.getF32Type();
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes type =
      element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto op = NVVM::MmaOp::create(
      b, result, a, bFragment, c, {kMmaM, kMmaN, kMmaK}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  for (int64_t i = 0; i < 4; ++i)
    memref::StoreOp::create(b, LLVM::ExtractValueOp::create(b, op, i), acc,
                            position(i));
}
