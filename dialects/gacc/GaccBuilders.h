//===- GaccBuilders.h - build gacc ops with their result types --*- C++ -*-===//
//
// Derivative rules, decompositions and the step builder create many ops
// whose result types follow from their operands; these helpers compute the
// types so that the rules read like the math.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_DIALECTS_GACC_GACCBUILDERS_H
#define GACC_DIALECTS_GACC_GACCBUILDERS_H

#include "dialects/gacc/GaccOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::gacc {

/// A rank-0 constant of `elementType`.
Value buildScalar(OpBuilder &b, Location loc, Type elementType, double value);
/// A splat constant of `type`.
Value buildSplat(OpBuilder &b, Location loc, RankedTensorType type,
                 double value);

Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  bool transposeLhs = false, bool transposeRhs = false);
Value buildReduceSum(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool keepdims);
Value buildReduceMean(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> axes, bool keepdims);
Value buildReduceMax(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool keepdims);
Value buildReshape(OpBuilder &b, Location loc, Value input,
                   ArrayRef<int64_t> shape);
Value buildTranspose(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> permutation);
Value buildSlice(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes);
Value buildPad(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
               ArrayRef<int64_t> high);
/// Broadcasts `input` to `shape`; returns it unchanged if it already has it.
Value buildBroadcast(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> shape);
/// The gradient of a broadcast: sums `grad` over the dimensions that NumPy
/// broadcasting added or stretched so that it gets `shape` again.
Value buildUnbroadcast(OpBuilder &b, Location loc, Value grad,
                       ArrayRef<int64_t> shape);
/// `select(condition, 1, 0)` in `elementType`.
Value buildMaskToFloat(OpBuilder &b, Location loc, Value condition,
                       Type elementType);
/// 1 where cross-entropy counts a target and 0 elsewhere, in `elementType`,
/// with the targets' shape: targets in `[0, classes)` other than
/// `ignoreIndex` (one outside the classes, such as -100, needs no test of
/// its own). Built from the targets, not as the row sums of their one-hot:
/// a sum over the classes of the one-hot alone could not fuse with it, so
/// the one-hot would be stored.
Value buildCountedTargets(OpBuilder &b, Location loc, Value targets,
                          int64_t classes, Type elementType,
                          std::optional<int64_t> ignoreIndex);
/// The one-hot of `targets` over the classes of `logits` (`S` and `S x C`),
/// its rows multiplied by `counted` (buildCountedTargets) when the ignore
/// index is a class, so that those positions pick nothing.
Value buildTargetOneHot(OpBuilder &b, Location loc, RankedTensorType logits,
                        Value targets, std::optional<int64_t> ignoreIndex,
                        Value counted);
/// All axes `[first, rank)`.
SmallVector<int64_t> trailingAxes(int64_t first, int64_t rank);

/// Elementwise arithmetic on tensors of one element type at one location,
/// so that derivative rules, decompositions and optimizer updates read like
/// their formulas. Scalars `c(v)` broadcast against any shape.
struct TensorMath {
  OpBuilder &b;
  Location loc;
  Type element;

  Value c(double value) { return buildScalar(b, loc, element, value); }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }
  Value log(Value x) { return LogOp::create(b, loc, x); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value rsqrt(Value x) { return RsqrtOp::create(b, loc, x); }
  Value tanh(Value x) { return TanhOp::create(b, loc, x); }
  Value erf(Value x) { return ErfOp::create(b, loc, x); }
  Value select(Value condition, Value x, Value y) {
    return SelectOp::create(b, loc, condition, x, y);
  }
  Value compare(ComparePredicate predicate, Value x, Value y) {
    return CompareOp::create(b, loc, predicate, x, y);
  }
  Value sum(Value x, ArrayRef<int64_t> axes, bool keepdims = true) {
    return buildReduceSum(b, loc, x, axes, keepdims);
  }
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepdims = true) {
    return buildReduceMean(b, loc, x, axes, keepdims);
  }
  Value max(Value x, ArrayRef<int64_t> axes, bool keepdims = true) {
    return buildReduceMax(b, loc, x, axes, keepdims);
  }
  /// Sum over every axis, to a scalar (a scalar is its own sum).
  Value sumAll(Value x) {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    return rank == 0 ? x : sum(x, trailingAxes(0, rank), false);
  }
};

/// TensorMath for the element type of `typed` at `op`'s location.
inline TensorMath tensorMath(OpBuilder &b, Operation *op, Value typed) {
  return {b, op->getLoc(),
          cast<RankedTensorType>(typed.getType()).getElementType()};
}

} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCBUILDERS_H
