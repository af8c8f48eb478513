//===- GaccVJP.cpp - reverse-mode derivative rules of gacc ops --------------===//
//
// One VJPOpInterface::buildVJP per op. Each rule builds gacc ops at the
// builder's insertion point, from the op's operands, its result and the
// gradient of that result. Gradients of broadcast operands are summed back
// to the operand's shape. Formulas follow PyTorch's derivatives.yaml, so
// results match autograd (relu'(0) = 0, tanh-GELU as in PyTorch, ...).
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "dialects/gacc/GaccOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// TensorMath for an op's result type, plus the unbroadcast of gradients.
struct Math : TensorMath {
  Math(OpBuilder &b, Operation *op)
      : TensorMath(tensorMath(b, op, op->getResult(0))) {}
  Value gt(Value x, Value y) { return compare(ComparePredicate::gt, x, y); }
  Value eq(Value x, Value y) { return compare(ComparePredicate::eq, x, y); }
  /// The gradient `g` summed back to the shape of `operand`.
  Value to(Value g, Value operand) {
    return buildUnbroadcast(
        b, loc, g, cast<RankedTensorType>(operand.getType()).getShape());
  }
};

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}
} // namespace

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(Math(b, *this).neg(dy));
  return success();
}

LogicalResult ExpOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(Math(b, *this).mul(dy, getResult()));
  return success();
}

LogicalResult LogOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(Math(b, *this).div(dy, getInput()));
  return success();
}

LogicalResult SqrtOp::buildVJP(OpBuilder &b, Value dy,
                               SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  grads.push_back(m.div(m.mul(dy, m.c(0.5)), getResult()));
  return success();
}

LogicalResult RsqrtOp::buildVJP(OpBuilder &b, Value dy,
                                SmallVectorImpl<Value> &grads) {
  // d/dx x^(-1/2) = -1/2 y^3
  Math m(b, *this);
  Value y = getResult();
  grads.push_back(m.mul(m.mul(dy, m.c(-0.5)), m.mul(m.mul(y, y), y)));
  return success();
}

LogicalResult TanhOp::buildVJP(OpBuilder &b, Value dy,
                               SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value y = getResult();
  grads.push_back(m.mul(dy, m.sub(m.c(1.0), m.mul(y, y))));
  return success();
}

LogicalResult SigmoidOp::buildVJP(OpBuilder &b, Value dy,
                                  SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value y = getResult();
  grads.push_back(m.mul(dy, m.mul(y, m.sub(m.c(1.0), y))));
  return success();
}

LogicalResult ReluOp::buildVJP(OpBuilder &b, Value dy,
                               SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  grads.push_back(m.select(m.gt(getInput(), m.c(0.0)), dy, m.c(0.0)));
  return success();
}

LogicalResult ErfOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value x = getInput();
  Value slope = m.mul(m.c(2.0 / std::sqrt(M_PI)), m.exp(m.neg(m.mul(x, x))));
  grads.push_back(m.mul(dy, slope));
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, Value dy,
                               SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value x = getInput();
  if (getApproximation() == GeluApproximation::erf) {
    // Φ(x) + x·φ(x)
    Value cdf =
        m.mul(m.c(0.5), m.add(m.c(1.0), m.erf(m.mul(x, m.c(M_SQRT1_2)))));
    Value pdf = m.mul(m.c(0.5 * M_2_SQRTPI * M_SQRT1_2),
                      m.exp(m.mul(m.mul(x, x), m.c(-0.5))));
    grads.push_back(m.mul(dy, m.add(cdf, m.mul(x, pdf))));
    return success();
  }
  // PyTorch's GeluBackward with approximate='tanh'.
  const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
  Value x2 = m.mul(x, x);
  Value inner = m.mul(m.c(beta), m.add(x, m.mul(m.c(kappa), m.mul(x2, x))));
  Value t = m.tanh(inner);
  Value left = m.mul(m.c(0.5), x);
  Value leftDerivative = m.mul(m.c(0.5), m.add(m.c(1.0), t));
  Value rightDerivative =
      m.mul(m.mul(left, m.sub(m.c(1.0), m.mul(t, t))),
            m.mul(m.c(beta), m.add(m.c(1.0), m.mul(m.c(3.0 * kappa), x2))));
  grads.push_back(m.mul(dy, m.add(leftDerivative, rightDerivative)));
  return success();
}

LogicalResult DropoutOp::buildVJP(OpBuilder &b, Value dy,
                                  SmallVectorImpl<Value> &grads) {
  // The same mask and scale: the mask depends only on seed, step and index.
  grads.push_back(DropoutOp::create(b, getLoc(), dy.getType(), dy,
                                    getCounter(), getRateAttr(),
                                    getSeedAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Binary and select
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  grads.append({m.to(dy, getLhs()), m.to(dy, getRhs())});
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  grads.append({m.to(dy, getLhs()), m.to(m.neg(dy), getRhs())});
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  grads.append({m.to(m.mul(dy, getRhs()), getLhs()),
                m.to(m.mul(dy, getLhs()), getRhs())});
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value lhs = getLhs(), rhs = getRhs();
  grads.push_back(m.to(m.div(dy, rhs), lhs));
  grads.push_back(
      m.to(m.neg(m.div(m.mul(dy, lhs), m.mul(rhs, rhs))), rhs));
  return success();
}

LogicalResult SelectOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value zero = m.c(0.0);
  grads.push_back(nullptr);
  grads.push_back(m.to(m.select(getCondition(), dy, zero), getTrueValue()));
  grads.push_back(m.to(m.select(getCondition(), zero, dy), getFalseValue()));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  // With A' = op(A) and B' = op(B): dA' = dy·B'ᵀ and dB' = A'ᵀ·dy, each
  // transposed back when the operand was read transposed.
  Math m(b, *this);
  Location loc = getLoc();
  Value a = getLhs(), c = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Value da = ta ? buildMatmul(b, loc, c, dy, tb, true)
                : buildMatmul(b, loc, dy, c, false, !tb);
  Value dc;
  RankedTensorType aType = getLhs().getType();
  if (!ta && getRhs().getType().getRank() == 2 && aType.getRank() > 2) {
    // A weight every batch reads (a linear layer's): its gradient contracts
    // over the batch and the rows together, one product over all B·T rows,
    // rather than B products of the weight's size summed afterwards (on
    // GPT-2-small's logits, a [8, 50257, 768] f32 temporary of 1.2 GB).
    int64_t rows = 1;
    for (int64_t size : aType.getShape().drop_back())
      rows *= size;
    Value rowsOfA = buildReshape(b, loc, a, {rows, aType.getShape().back()});
    Value rowsOfDy = buildReshape(
        b, loc, dy,
        {rows, cast<RankedTensorType>(dy.getType()).getShape().back()});
    dc = tb ? buildMatmul(b, loc, rowsOfDy, rowsOfA, true, false)
            : buildMatmul(b, loc, rowsOfA, rowsOfDy, true, false);
  } else {
    dc = tb ? buildMatmul(b, loc, dy, a, true, ta)
            : buildMatmul(b, loc, a, dy, !ta, false);
  }
  grads.append({m.to(da, a), m.to(dc, c)});
  return success();
}

LogicalResult BroadcastOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(Math(b, *this).to(dy, getInput()));
  return success();
}

/// dy of a reduction, reshaped to keep the reduced dimensions and broadcast
/// back to the input shape.
static Value expandReduced(OpBuilder &b, Location loc, Value dy,
                           RankedTensorType input, ArrayRef<int64_t> axes) {
  Value kept = buildReshape(
      b, loc, dy, reducedShape(input.getShape(), axes, /*keepdims=*/true));
  return buildBroadcast(b, loc, kept, input.getShape());
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(
      expandReduced(b, getLoc(), dy, getInput().getType(), getAxes()));
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, Value dy,
                                     SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= getInput().getType().getDimSize(axis);
  Value spread =
      expandReduced(b, getLoc(), dy, getInput().getType(), getAxes());
  grads.push_back(m.div(spread, m.c(static_cast<double>(count))));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  // As torch.amax: the gradient is shared evenly between tied maxima.
  Math m(b, *this);
  RankedTensorType input = getInput().getType();
  Value max = expandReduced(b, getLoc(), getResult(), input, getAxes());
  Value isMax = buildMaskToFloat(b, getLoc(), m.eq(getInput(), max),
                                 input.getElementType());
  Value ties = m.sum(isMax, getAxes());
  Value spread = expandReduced(b, getLoc(), dy, input, getAxes());
  grads.push_back(m.div(m.mul(spread, isMax), ties));
  return success();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, Value dy,
                                  SmallVectorImpl<Value> &grads) {
  grads.push_back(
      buildReshape(b, getLoc(), dy, getInput().getType().getShape()));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  SmallVector<int64_t> inverse(getPermutation().size());
  for (auto [i, dim] : llvm::enumerate(getPermutation()))
    inverse[dim] = i;
  grads.push_back(buildTranspose(b, getLoc(), dy, inverse));
  return success();
}

LogicalResult SliceOp::buildVJP(OpBuilder &b, Value dy,
                                SmallVectorImpl<Value> &grads) {
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  SmallVector<int64_t> high;
  for (size_t d = 0; d < shape.size(); ++d)
    high.push_back(shape[d] - getOffsets()[d] - getSizes()[d]);
  grads.push_back(buildPad(b, getLoc(), dy, getOffsets(), high));
  return success();
}

LogicalResult PadOp::buildVJP(OpBuilder &b, Value dy,
                              SmallVectorImpl<Value> &grads) {
  grads.push_back(
      buildSlice(b, getLoc(), dy, getLow(), getInput().getType().getShape()));
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  int64_t axis = getAxisAttr().getInt(), offset = 0;
  for (Value input : getInputs()) {
    RankedTensorType type = typeOf(input);
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[axis] = offset;
    offset += type.getDimSize(axis);
    grads.push_back(isa<FloatType>(type.getElementType())
                        ? buildSlice(b, getLoc(), dy, offsets, type.getShape())
                        : Value());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Neural-network ops and losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, Value dy,
                                  SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value y = getResult();
  int64_t axis = getAxisAttr().getInt();
  grads.push_back(m.mul(y, m.sub(dy, m.sum(m.mul(dy, y), {axis}))));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, Value dy,
                                     SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  int64_t axis = getAxisAttr().getInt();
  grads.push_back(m.sub(dy, m.mul(m.exp(getResult()), m.sum(dy, {axis}))));
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  Value x = getInput(), gamma = getScale();
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> axes =
      trailingAxes(rank - typeOf(gamma).getRank(), rank);
  Value centered = m.sub(x, m.mean(x, axes));
  Value variance = m.mean(m.mul(centered, centered), axes);
  Value rstd = m.rsqrt(m.add(variance, m.c(getEpsilon().convertToDouble())));
  Value xhat = m.mul(centered, rstd);
  Value dxhat = m.mul(dy, gamma);
  Value dx = m.mul(rstd, m.sub(m.sub(dxhat, m.mean(dxhat, axes)),
                               m.mul(xhat, m.mean(m.mul(dxhat, xhat), axes))));
  grads.append({dx, m.to(m.mul(dy, xhat), gamma), m.to(dy, getBias())});
  return success();
}

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  // dtable = one_hot(ids)ᵀ · dy over the flattened positions, marked as
  // such (gacc.embedding_gradient).
  Location loc = getLoc();
  RankedTensorType table = getTable().getType();
  int64_t positions = getIndices().getType().getNumElements();
  int64_t vocab = table.getDimSize(0), width = table.getDimSize(1);
  Value ids = buildReshape(b, loc, getIndices(), {positions});
  Value oneHot = OneHotOp::create(
      b, loc, RankedTensorType::get({positions, vocab}, table.getElementType()),
      ids);
  Value rows = buildReshape(b, loc, dy, {positions, width});
  Value dtable = buildMatmul(b, loc, oneHot, rows, /*transposeLhs=*/true);
  // A target that can add rows by id skips the product (and the one-hot).
  dtable.getDefiningOp()->setAttr(
      GaccDialect::EmbeddingGradientAttrHelper::getNameStr(), b.getUnitAttr());
  grads.append({dtable, Value()});
  return success();
}

LogicalResult OneHotOp::buildVJP(OpBuilder &, Value,
                                 SmallVectorImpl<Value> &grads) {
  grads.push_back(Value()); // integer ids have no gradient
  return success();
}

/// The divisor of a loss reduction: for token_mean, the sum of `counted`
/// (buildCountedTargets).
static Value lossDenominator(TensorMath &m, LossReduction reduction,
                             RankedTensorType targets, Value counted) {
  switch (reduction) {
  case LossReduction::sum:
    return m.c(1.0);
  case LossReduction::mean:
    return m.c(targets.getRank() == 0 ? 1.0
                                      : static_cast<double>(targets.getDimSize(0)));
  case LossReduction::token_mean:
    return m.sumAll(counted);
  }
  llvm_unreachable("unknown reduction");
}

LogicalResult CrossEntropyOp::buildVJP(OpBuilder &b, Value dy,
                                       SmallVectorImpl<Value> &grads) {
  // dlogits = (softmax(logits)·valid - one_hot(targets)) · dy / denominator
  Math m(b, *this);
  RankedTensorType logits = getLogits().getType();
  int64_t classAxis = logits.getRank() - 1;
  RankedTensorType targets = getTargets().getType();
  Value counted = buildCountedTargets(
      b, getLoc(), getTargets(), logits.getDimSize(classAxis),
      logits.getElementType(), getIgnoredTarget());
  Value oneHot = buildTargetOneHot(b, getLoc(), logits, getTargets(),
                                   getIgnoredTarget(), counted);
  SmallVector<int64_t> rows(targets.getShape());
  rows.push_back(1);
  Value valid = buildReshape(b, getLoc(), counted, rows);
  Value probs = SoftmaxOp::create(b, getLoc(), getLogits(), classAxis);
  Value denominator = lossDenominator(m, getReduction(), targets, counted);
  Value scale = m.div(dy, denominator);
  grads.append({m.mul(m.sub(m.mul(probs, valid), oneHot), scale), Value()});
  return success();
}

LogicalResult MseLossOp::buildVJP(OpBuilder &b, Value dy,
                                  SmallVectorImpl<Value> &grads) {
  Math m(b, *this);
  double count = getReduction() == LossReduction::mean
                     ? static_cast<double>(getInput().getType().getNumElements())
                     : 1.0;
  Value dx = m.mul(m.sub(getInput(), getTarget()),
                   m.div(m.mul(dy, m.c(2.0)), m.c(count)));
  grads.append({dx, m.neg(dx)});
  return success();
}

LogicalResult CastOp::buildVJP(OpBuilder &b, Value dy,
                               SmallVectorImpl<Value> &grads) {
  grads.push_back(
      CastOp::create(b, getLoc(), getInput().getType(), dy).getResult());
  return success();
}

LogicalResult AllReduceOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(AllReduceOp::create(b, getLoc(), dy, getReductionAttr(),
                                      getRanksAttr()));
  return success();
}

LogicalResult ReduceScatterOp::buildVJP(OpBuilder &b, Value dy,
                                        SmallVectorImpl<Value> &grads) {
  Value grad = AllGatherOp::create(b, getLoc(), getInput().getType(), dy,
                                   getDimAttr(), getRanksAttr());
  if (getReduction() == CollectiveReduction::mean)
    grad = tensorMath(b, *this, grad).div(
        grad, buildScalar(b, getLoc(), getType().getElementType(),
                          static_cast<double>(getRanks())));
  grads.push_back(grad);
  return success();
}

LogicalResult AllGatherOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(ReduceScatterOp::create(
      b, getLoc(), getInput().getType(), dy,
      CollectiveReductionAttr::get(getContext(), CollectiveReduction::sum),
      getDimAttr(), getRanksAttr()));
  return success();
}

LogicalResult CheckpointOp::buildVJP(OpBuilder &b, Value dy,
                                     SmallVectorImpl<Value> &grads) {
  grads.push_back(dy);
  return success();
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  // PyTorch's batch_norm_backward: with x̂ = (x - μ)·rstd and dx̂ = dy·w,
  // training: dx = rstd·(dx̂ - mean(dx̂) - x̂·mean(dx̂·x̂)) (μ and the biased
  // variance depend on x); inference: dx = rstd·dx̂ with the running ones.
  // The running statistics have no gradient.
  Math m(b, *this);
  Value x = getInput();
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> axes = getReductionAxes();
  SmallVector<int64_t> channelShape(rank, 1);
  channelShape[1] = typeOf(x).getDimSize(1);
  auto perChannel = [&](Value v) {
    return buildReshape(b, m.loc, v, channelShape);
  };
  Value w = perChannel(getScale());
  double eps = getEpsilon().convertToDouble();
  Value centered, rstd;
  if (getInference()) {
    centered = m.sub(x, perChannel(getRunningMean()));
    rstd = m.rsqrt(m.add(perChannel(getRunningVar()), m.c(eps)));
  } else {
    centered = m.sub(x, m.mean(x, axes));
    rstd = m.rsqrt(m.add(m.mean(m.mul(centered, centered), axes), m.c(eps)));
  }
  Value xhat = m.mul(centered, rstd);
  Value dxhat = m.mul(dy, w);
  Value dx =
      getInference()
          ? m.mul(rstd, dxhat)
          : m.mul(rstd, m.sub(m.sub(dxhat, m.mean(dxhat, axes)),
                              m.mul(xhat, m.mean(m.mul(dxhat, xhat), axes))));
  grads.append({dx, m.sum(m.mul(dy, xhat), axes, false), m.sum(dy, axes, false),
                Value(), Value()});
  return success();
}
