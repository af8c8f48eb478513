//===- KernelIndexing.cpp - loop indices inside generated kernels ---------===//

#include "compiler/target/cuda/KernelIndexing.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

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
