//===- GaccStateOps.cpp - model state and batch normalization -------------===//
//
// Verifiers of gacc.assign (writes a frozen gacc.param) and
// gacc.batch_norm (whose running statistics are such state).
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccOps.h"

using namespace mlir;
using namespace mlir::gacc;

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = dyn_cast_or_null<ParamOp>(
      symbolTable.lookupNearestSymbolFrom(*this, getNameAttr()));
  if (!param)
    return emitOpError("'") << getName() << "' does not name a gacc.param";
  if (!param.getFrozen())
    return emitOpError("'")
           << getName()
           << "' is a trainable gacc.param: only a frozen one is assigned "
              "(the optimizer updates the others)";
  if (param.getType() != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the declared type "
           << param.getType() << " of '" << getName() << "'";
  // One assign per parameter and function: the value a step leaves is
  // unambiguous.
  for (Operation *op = (*this)->getPrevNode(); op; op = op->getPrevNode())
    if (auto other = dyn_cast<AssignOp>(op);
        other && other.getNameAttr() == getNameAttr())
      return emitOpError("assigns '")
             << getName() << "' a second time in this function";
  return success();
}

SmallVector<int64_t> BatchNormOp::getReductionAxes() {
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < getInput().getType().getRank(); ++d)
    if (d != 1)
      axes.push_back(d);
  return axes;
}

int64_t BatchNormOp::getValuesPerChannel() {
  RankedTensorType input = getInput().getType();
  return input.getNumElements() / input.getDimSize(1);
}

LogicalResult BatchNormOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType scale = getScale().getType();
  if (input.getRank() < 2)
    return emitOpError("input must have rank at least 2 (N x C x ...), got ")
           << input.getRank();
  if (scale.getRank() != 1 || scale.getDimSize(0) != input.getDimSize(1))
    return emitOpError("scale, bias and running statistics must be [C] = [")
           << input.getDimSize(1) << "] (dimension 1 of the input), got "
           << scale;
  if (scale.getElementType() != input.getElementType())
    return emitOpError("scale and input element types differ: ")
           << scale.getElementType() << " vs " << input.getElementType();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("momentum must be in [0, 1], got ") << momentum;
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive");
  if (!getInference() && getValuesPerChannel() < 2)
    return emitOpError("needs more than 1 value per channel in training (")
           << input << "): the unbiased variance divides by n - 1";
  return success();
}

SmallVector<ParamOp> gacc::getTrainableParams(ModuleOp module) {
  SmallVector<ParamOp> params;
  for (ParamOp param : module.getOps<ParamOp>())
    if (!param.getFrozen())
      params.push_back(param);
  return params;
}
