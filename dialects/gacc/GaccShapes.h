//===- GaccShapes.h - shape rules shared by gacc ops ----------*- C++ -*-===//
//
// The broadcasting, reduction and matmul shape rules. Op verifiers and type
// inference use them, and so do the passes that build new ops.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_DIALECTS_GACC_GACCSHAPES_H
#define GACC_DIALECTS_GACC_GACCSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::gacc {

/// NumPy broadcasting of two shapes: aligned at the trailing dimension, each
/// pair equal or one of them 1. Returns nothing if they are incompatible.
/// Bytes of a statically shaped tensor, or memref with an identity layout,
/// of integers or floats (sub-byte elements round up); nullopt otherwise.
std::optional<int64_t> getStaticByteSize(Type type);

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// Whether `from` broadcasts to exactly `to`.
bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// Result type of elementwise ops over `operands` with broadcasting; all
/// operands must share an element type.
LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   ArrayRef<Type> operands,
                                   SmallVectorImpl<Type> &results);

/// Reports through `emitError` and fails unless `axes` are strictly
/// increasing, non-negative and below `rank`.
LogicalResult verifyAxes(ArrayRef<int64_t> axes, int64_t rank,
                         function_ref<InFlightDiagnostic()> emitError);

/// The shape of a reduction over `axes` (assumed valid).
SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> axes, bool keepdims);

} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCSHAPES_H
