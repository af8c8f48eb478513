//===- GaccBuilders.cpp - build gacc ops with their result types ------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::gacc;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value gacc::buildSplat(OpBuilder &b, Location loc, RankedTensorType type,
                       double value) {
  if (auto integer = dyn_cast<IntegerType>(type.getElementType()))
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, APInt(integer.getWidth(),
                                           static_cast<int64_t>(value),
                                           /*isSigned=*/true)));
  auto element = cast<FloatType>(type.getElementType());
  APFloat number(value);
  bool losesInfo = false;
  number.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, number));
}

Value gacc::buildScalar(OpBuilder &b, Location loc, Type elementType,
                        double value) {
  return buildSplat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value gacc::buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        bool transposeLhs, bool transposeRhs) {
  ArrayRef<int64_t> a = tensorType(lhs).getShape();
  ArrayRef<int64_t> c = tensorType(rhs).getShape();
  int64_t m = transposeLhs ? a.back() : a[a.size() - 2];
  int64_t n = transposeRhs ? c[c.size() - 2] : c.back();
  SmallVector<int64_t> shape =
      broadcastShapes(a.drop_back(2), c.drop_back(2)).value_or(
          SmallVector<int64_t>());
  shape.append({m, n});
  auto type = RankedTensorType::get(shape, tensorType(lhs).getElementType());
  return MatmulOp::create(b, loc, type, lhs, rhs, transposeLhs, transposeRhs);
}

template <typename ReduceOp>
static Value buildReduce(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> axes, bool keepdims) {
  RankedTensorType type = tensorType(input);
  auto result = RankedTensorType::get(
      reducedShape(type.getShape(), axes, keepdims), type.getElementType());
  return ReduceOp::create(b, loc, result, input, axes, keepdims);
}

Value gacc::buildReduceSum(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> axes, bool keepdims) {
  return buildReduce<ReduceSumOp>(b, loc, input, axes, keepdims);
}
Value gacc::buildReduceMean(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> axes, bool keepdims) {
  return buildReduce<ReduceMeanOp>(b, loc, input, axes, keepdims);
}
Value gacc::buildReduceMax(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> axes, bool keepdims) {
  return buildReduce<ReduceMaxOp>(b, loc, input, axes, keepdims);
}

Value gacc::buildReshape(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> shape) {
  if (tensorType(input).getShape() == shape)
    return input;
  auto type = RankedTensorType::get(shape, tensorType(input).getElementType());
  return ReshapeOp::create(b, loc, type, input);
}

Value gacc::buildTranspose(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> permutation) {
  RankedTensorType type = tensorType(input);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  return TransposeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input,
      permutation);
}

Value gacc::buildSlice(OpBuilder &b, Location loc, Value input,
                       ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  auto type = RankedTensorType::get(sizes, tensorType(input).getElementType());
  return SliceOp::create(b, loc, type, input, offsets, sizes);
}

Value gacc::buildPad(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  RankedTensorType type = tensorType(input);
  SmallVector<int64_t> shape(type.getShape());
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] += low[d] + high[d];
  return PadOp::create(b, loc,
                       RankedTensorType::get(shape, type.getElementType()),
                       input, low, high);
}

Value gacc::buildBroadcast(OpBuilder &b, Location loc, Value input,
                           ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(input);
  if (type.getShape() == shape)
    return input;
  return BroadcastOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input);
}

Value gacc::buildUnbroadcast(OpBuilder &b, Location loc, Value grad,
                             ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = tensorType(grad).getShape();
  if (from == shape)
    return grad;
  // Sum the leading dimensions broadcasting added and the ones it stretched
  // from 1, keeping the stretched ones as 1, then drop the added ones.
  int64_t added = from.size() - shape.size();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d)
    if (d < added || (shape[d - added] == 1 && from[d] != 1))
      axes.push_back(d);
  Value summed = axes.empty() ? grad : buildReduceSum(b, loc, grad, axes, true);
  return buildReshape(b, loc, summed, shape);
}

Value gacc::buildMaskToFloat(OpBuilder &b, Location loc, Value condition,
                             Type elementType) {
  return SelectOp::create(b, loc, condition,
                          buildScalar(b, loc, elementType, 1.0),
                          buildScalar(b, loc, elementType, 0.0));
}

/// Whether `ignoreIndex` names one of `classes` (a padding id).
static bool ignoresAClass(std::optional<int64_t> ignoreIndex, int64_t classes) {
  return ignoreIndex && *ignoreIndex >= 0 && *ignoreIndex < classes;
}

Value gacc::buildCountedTargets(OpBuilder &b, Location loc, Value targets,
                                int64_t classes, Type elementType,
                                std::optional<int64_t> ignoreIndex) {
  auto counts = [&](ComparePredicate predicate, int64_t bound) {
    Value id = buildScalar(b, loc, tensorType(targets).getElementType(),
                           static_cast<double>(bound));
    return buildMaskToFloat(
        b, loc, CompareOp::create(b, loc, predicate, targets, id), elementType);
  };
  Value atLeastZero = counts(ComparePredicate::ge, 0);
  Value belowClasses = counts(ComparePredicate::lt, classes);
  Value counted = MulOp::create(b, loc, atLeastZero, belowClasses);
  if (ignoresAClass(ignoreIndex, classes))
    counted = MulOp::create(b, loc, counted,
                            counts(ComparePredicate::ne, *ignoreIndex));
  return counted;
}

Value gacc::buildTargetOneHot(OpBuilder &b, Location loc,
                              RankedTensorType logits, Value targets,
                              std::optional<int64_t> ignoreIndex,
                              Value counted) {
  Value oneHot = OneHotOp::create(b, loc, logits, targets);
  if (!ignoresAClass(ignoreIndex, logits.getShape().back()))
    return oneHot;
  SmallVector<int64_t> rows(tensorType(targets).getShape());
  rows.push_back(1);
  return MulOp::create(b, loc, oneHot, buildReshape(b, loc, counted, rows));
}

SmallVector<int64_t> gacc::trailingAxes(int64_t first, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  return axes;
}
