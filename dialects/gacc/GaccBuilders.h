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
/// All axes `[first, rank)`.
SmallVector<int64_t> trailingAxes(int64_t first, int64_t rank);

} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCBUILDERS_H
