//===- KernelIndexing.cpp - loop indices inside generated kernels ---------===//

#include "compiler/target/cuda/KernelIndexing.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using gacc::KernelIndexBuilder;

Value KernelIndexBuilder::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}
Value KernelIndexBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, x, y);
}
Value KernelIndexBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, x, y);
}
Value KernelIndexBuilder::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, x, index(y));
}
Value KernelIndexBuilder::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, x, index(y));
}
Value KernelIndexBuilder::less(Value x, int64_t y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, index(y));
}
Value KernelIndexBuilder::linearize(ValueRange indices, ValueRange innerSizes) {
  Value linear = indices.front();
  for (auto [i, size] : llvm::zip_equal(indices.drop_front(), innerSizes))
    linear = add(mul(linear, size), i);
  return linear;
}

void KernelIndexBuilder::loop(Value lower, Value upper, int64_t step,
                              function_ref<void(Value)> body) {
  auto forOp = scf::ForOp::create(b, lower, upper, index(step));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  body(forOp.getInductionVar());
}

void KernelIndexBuilder::ifThen(Value condition, function_ref<void()> body) {
  auto branch = scf::IfOp::create(b, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  body();
}

static Value addBuffer(ImplicitLocOpBuilder &b, gpu::LaunchOp launch,
                       ArrayRef<int64_t> shape, Type type, bool perThread) {
  auto space = gpu::AddressSpaceAttr::get(
      b.getContext(), perThread ? gpu::GPUDialect::getPrivateAddressSpace()
                                : gpu::GPUDialect::getWorkgroupAddressSpace());
  auto memref = MemRefType::get(shape, type, nullptr, space);
  return perThread ? launch.addPrivateAttribution(memref, b.getLoc())
                   : launch.addWorkgroupAttribution(memref, b.getLoc());
}

Value KernelIndexBuilder::addPrivateBuffer(gpu::LaunchOp launch,
                                           ArrayRef<int64_t> shape, Type type) {
  return addBuffer(b, launch, shape, type, /*perThread=*/true);
}

Value KernelIndexBuilder::addWorkgroupBuffer(gpu::LaunchOp launch,
                                             ArrayRef<int64_t> shape,
                                             Type type) {
  return addBuffer(b, launch, shape, type, /*perThread=*/false);
}

void gacc::delinearize(ImplicitLocOpBuilder &b, Value index,
                       ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges,
                       SmallVectorImpl<Value> &loopIndex) {
  if (dims.empty())
    return;
  for (unsigned dim : llvm::reverse(dims.drop_front())) {
    Value range = arith::ConstantIndexOp::create(b, ranges[dim]);
    loopIndex[dim] = arith::RemUIOp::create(b, index, range);
    index = arith::DivUIOp::create(b, index, range);
  }
  loopIndex[dims.front()] = index;
}

SmallVector<Value> gacc::applyMap(ImplicitLocOpBuilder &b, AffineMap map,
                                  ArrayRef<Value> loopIndex) {
  SmallVector<Value> result;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      result.push_back(loopIndex[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      result.push_back(arith::ConstantIndexOp::create(b, constant.getValue()));
    else
      result.push_back(affine::AffineApplyOp::create(
          b, AffineMap::get(map.getNumDims(), 0, expr), loopIndex));
  }
  return result;
}
