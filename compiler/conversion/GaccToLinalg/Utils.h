//===- Utils.h - helpers shared by the gacc-to-linalg patterns --*- C++ -*-===//
#ifndef GACC_COMPILER_CONVERSION_GACCTOLINALG_UTILS_H
#define GACC_COMPILER_CONVERSION_GACCTOLINALG_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::gacc {

/// The map from the loops of a `result`-shaped iteration space to an operand
/// of shape `operand` under NumPy broadcasting: trailing alignment, and a
/// constant 0 for stretched dimensions of size 1.
AffineMap broadcastMap(ArrayRef<int64_t> operand, ArrayRef<int64_t> result,
                       MLIRContext *context);

/// An empty tensor of `type` (the `outs` of a fully overwritten result).
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   TypedAttr value);

/// `input` inside a tensor of `type` filled with `value`, starting at
/// `offsets` (padding: a fill, then the input inserted).
Value paddedTensor(OpBuilder &b, Location loc, Value input,
                   RankedTensorType type, ArrayRef<int64_t> offsets,
                   TypedAttr value);

/// `value` converted to `element`: extf when widening, truncf (round to
/// nearest even) when narrowing, through f32 between f16 and bf16.
Value convertFloat(OpBuilder &b, Location loc, Value value, Type element);

/// The tensor `input` with its elements converted to `element`.
Value convertElements(OpBuilder &b, Location loc, Value input, Type element);

/// A parallel linalg.generic producing `type` from `inputs` broadcast to it,
/// with `body` computing the element from the input elements.
Value buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

} // namespace mlir::gacc

#endif // GACC_COMPILER_CONVERSION_GACCTOLINALG_UTILS_H
