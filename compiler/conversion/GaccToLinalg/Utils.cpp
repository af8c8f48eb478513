//===- Utils.cpp - helpers shared by the gacc-to-linalg patterns ------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

AffineMap gacc::broadcastMap(ArrayRef<int64_t> operand,
                             ArrayRef<int64_t> result, MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  int64_t lead = result.size() - operand.size();
  for (auto [i, size] : llvm::enumerate(operand)) {
    int64_t dim = lead + i;
    exprs.push_back(size == 1 && result[dim] != 1
                        ? getAffineConstantExpr(0, context)
                        : getAffineDimExpr(dim, context));
  }
  return AffineMap::get(result.size(), 0, exprs, context);
}

Value gacc::emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value gacc::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                         TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, emptyTensor(b, loc, type))
      .getResult(0);
}

Value gacc::paddedTensor(OpBuilder &b, Location loc, Value input,
                         RankedTensorType type, ArrayRef<int64_t> offsets,
                         TypedAttr value) {
  ArrayRef<int64_t> sizes = cast<RankedTensorType>(input.getType()).getShape();
  SmallVector<int64_t> strides(sizes.size(), 1);
  return tensor::InsertSliceOp::create(b, loc, input,
                                       filledTensor(b, loc, type, value),
                                       ValueRange{}, ValueRange{}, ValueRange{},
                                       offsets, sizes, strides);
}

Value gacc::buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(
        cast<RankedTensorType>(input.getType()).getShape(), type.getShape(),
        context));
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, emptyTensor(b, loc, type), maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args.drop_back()));
      });
  return generic.getResult(0);
}

Value gacc::convertFloat(OpBuilder &b, Location loc, Value value,
                         Type element) {
  auto from = cast<FloatType>(value.getType());
  auto to = cast<FloatType>(element);
  if (from == to)
    return value;
  if (from.getWidth() == to.getWidth()) // f16 <-> bf16
    return convertFloat(b, loc, convertFloat(b, loc, value, b.getF32Type()),
                        element);
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

Value gacc::convertElements(OpBuilder &b, Location loc, Value input,
                            Type element) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == element)
    return input;
  return buildElementwise(
      b, loc, type.clone(element), input,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return convertFloat(nested, nestedLoc, args[0], element);
      });
}
