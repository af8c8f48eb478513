//===- GaccShapes.cpp - shape rules shared by gacc ops --------------------===//

#include "dialects/gacc/GaccShapes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

std::optional<SmallVector<int64_t>> gacc::broadcastShapes(ArrayRef<int64_t> a,
                                                          ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align at the trailing dimension; missing leading dimensions are 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

bool gacc::isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  std::optional<SmallVector<int64_t>> joined = broadcastShapes(from, to);
  return joined && ArrayRef<int64_t>(*joined) == to;
}

LogicalResult gacc::inferBroadcastResult(std::optional<Location> loc,
                                         ArrayRef<Type> operands,
                                         SmallVectorImpl<Type> &results) {
  auto first = cast<RankedTensorType>(operands.front());
  SmallVector<int64_t> shape(first.getShape());
  // A select's i1 condition takes part in the shape but not the element type.
  Type elementType;
  for (Type type : operands) {
    auto tensor = cast<RankedTensorType>(type);
    if (!tensor.getElementType().isInteger(1)) {
      if (elementType && elementType != tensor.getElementType())
        return emitOptionalError(loc,
                                 "operand element types differ: ", elementType,
                                 " vs ", tensor.getElementType());
      elementType = tensor.getElementType();
    }
    std::optional<SmallVector<int64_t>> joined =
        broadcastShapes(shape, tensor.getShape());
    if (!joined)
      return emitOptionalError(loc,
                               "operand shapes are not broadcastable: ", first,
                               " and ", tensor);
    shape = *joined;
  }
  results.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult gacc::verifyAxes(ArrayRef<int64_t> axes, int64_t rank,
                               function_ref<InFlightDiagnostic()> emitError) {
  if (axes.empty())
    return emitError() << "expects at least one axis";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitError() << "axis " << axes[i] << " is out of range for rank "
                         << rank;
    if (i > 0 && axes[i] <= axes[i - 1])
      return emitError() << "axes must be strictly increasing";
  }
  return success();
}

SmallVector<int64_t> gacc::reducedShape(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      result.push_back(size);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

std::optional<int64_t> mlir::gacc::getStaticByteSize(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape() ||
      !shaped.getElementType().isIntOrFloat())
    return std::nullopt;
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && !memref.getLayout().isIdentity())
    return std::nullopt;
  return shaped.getNumElements() *
         ((shaped.getElementTypeBitWidth() + 7) / 8);
}
