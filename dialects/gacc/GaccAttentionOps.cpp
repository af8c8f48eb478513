//===- GaccAttentionOps.cpp - fused attention -----------------------------===//
//
// Verifiers, memory effects and the derivative rule of gacc.attention and
// gacc.attention_grad.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Checks the shapes and types the two ops share: Q [B, H, T, D], K and V
/// [B, H, S, D], all of one float type; `perQuery` ([B, H, T]: the
/// log-sum-exp, delta) and `key_bias` ([B, S]) in the compute type; results
/// only on tensors.
LogicalResult verifyAttention(Operation *op, Value query, Value key,
                              Value value, ValueRange perQuery, Value keyBias,
                              ValueRange sameAsQuery, ValueRange sameAsKey) {
  auto shapeOf = [](Value v) { return cast<ShapedType>(v.getType()); };
  bool tensors = isa<RankedTensorType>(query.getType());
  for (Value operand : op->getOperands()) {
    ShapedType type = shapeOf(operand);
    if (isa<RankedTensorType>(type) != tensors ||
        !(isa<RankedTensorType>(type) || isa<MemRefType>(type)) ||
        !type.hasStaticShape())
      return op->emitOpError("takes static tensors or static memrefs, not "
                             "both");
  }
  if (tensors != (op->getNumResults() != 0))
    return op->emitOpError("returns its outputs' values exactly when they "
                           "are tensors");
  ShapedType q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return op->emitOpError("takes queries, keys and values of rank 4 "
                           "([batch, heads, length, head size])");
  Type element = q.getElementType();
  if (!isa<FloatType>(element) || k.getElementType() != element ||
      v.getElementType() != element)
    return op->emitOpError("takes queries, keys and values of one float "
                           "type");
  if (k.getShape() != v.getShape() ||
      k.getShape().take_front(2) != q.getShape().take_front(2) ||
      k.getDimSize(3) != q.getDimSize(3))
    return op->emitOpError("takes keys and values [")
           << q.getDimSize(0) << ", " << q.getDimSize(1) << ", S, "
           << q.getDimSize(3) << "] for queries " << q;
  SmallVector<int64_t> rowShape(q.getShape().take_front(3));
  Type compute = AttentionOp::getComputeType(element);
  for (Value operand : perQuery)
    if (shapeOf(operand).getShape() != ArrayRef(rowShape) ||
        shapeOf(operand).getElementType() != compute)
      return op->emitOpError("takes its per-query values as ")
             << compute << " [" << rowShape[0] << ", " << rowShape[1] << ", "
             << rowShape[2] << "]";
  if (keyBias && (shapeOf(keyBias).getShape() !=
                      ArrayRef{q.getDimSize(0), k.getDimSize(2)} ||
                  shapeOf(keyBias).getElementType() != compute))
    return op->emitOpError("takes a key bias of ") << compute << " ["
           << q.getDimSize(0) << ", " << k.getDimSize(2) << "]";
  for (Value operand : sameAsQuery)
    if (shapeOf(operand).getShape() != q.getShape() ||
        shapeOf(operand).getElementType() != element)
      return op->emitOpError("writes ") << q << " where it writes queries";
  for (Value operand : sameAsKey)
    if (shapeOf(operand).getShape() != k.getShape() ||
        shapeOf(operand).getElementType() != element)
      return op->emitOpError("writes ") << k << " where it writes keys";
  return success();
}

/// Reads of its inputs, writes of its outputs, where they are buffers.
void getDpsEffects(
    DestinationStyleOpInterface op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (op.isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}
} // namespace

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getValue(),
                         getLogsumexp(), getKeyBias(), getOut(), {});
}

LogicalResult AttentionGradOp::verify() {
  return verifyAttention(*this, getQuery(), getKey(), getValue(),
                         ValueRange{getLogsumexp(), getDelta()}, getKeyBias(),
                         ValueRange{getOutGrad(), getQueryGrad()},
                         ValueRange{getKeyGrad(), getValueGrad()});
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, effects);
}

void AttentionGradOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  getDpsEffects(*this, effects);
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, Value outGrad,
                                    SmallVectorImpl<Value> &grads) {
  if (getNumResults() != 2)
    return emitOpError("is differentiated on tensors only");
  // delta = rowsum(dO · O) in the compute type, FlashAttention-2's D: the
  // backward's kernels then need no row of O.
  Location loc = getLoc();
  Type compute = getComputeType();
  auto widen = [&](Value x) -> Value {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == compute)
      return x;
    return CastOp::create(b, loc, type.clone(compute), x);
  };
  TensorMath m{b, loc, compute};
  Value delta = m.sum(m.mul(widen(outGrad), widen(getResult(0))), {3},
                      /*keepdims=*/false);
  auto empty = [&](Value like) -> Value {
    auto type = cast<RankedTensorType>(like.getType());
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType());
  };
  auto grad = AttentionGradOp::create(
      b, loc,
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      getQuery(), getKey(), getValue(), outGrad, getResult(1), delta,
      getKeyBias(), empty(getQuery()), empty(getKey()), empty(getValue()),
      getScaleAttr(), getCausalAttr());
  grads.append({grad.getResult(0), grad.getResult(1), grad.getResult(2)});
  // The key bias (a mask) and the outputs' initial values: no gradient.
  if (getKeyBias())
    grads.push_back(Value());
  grads.append({Value(), Value()});
  return success();
}
