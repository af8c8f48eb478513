//===- Decompose.cpp - composite gacc ops into primitive ones ---------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "dialects/gacc/GaccWindowOps.h"
#include "passes/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::gacc {
#define GEN_PASS_DEF_DECOMPOSE
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct DecomposeSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    int64_t axis = op.getAxisAttr().getInt();
    Value max = o.max(op.getInput(), {axis});
    Value e = o.exp(o.sub(op.getInput(), max));
    Value sum = o.sum(e, {axis});
    rewriter.replaceOp(op, o.div(e, sum));
    return success();
  }
};

struct DecomposeLogSoftmax : OpRewritePattern<LogSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    int64_t axis = op.getAxisAttr().getInt();
    Value max = o.max(op.getInput(), {axis});
    Value shifted = o.sub(op.getInput(), max);
    Value sum = o.sum(o.exp(shifted), {axis});
    rewriter.replaceOp(op, o.sub(shifted, o.log(sum)));
    return success();
  }
};

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    Value x = op.getInput();
    int64_t rank = op.getInput().getType().getRank();
    SmallVector<int64_t> axes =
        trailingAxes(rank - op.getScale().getType().getRank(), rank);
    Value centered = o.sub(x, o.mean(x, axes));
    Value variance = o.mean(o.mul(centered, centered), axes);
    Value rstd = o.rsqrt(o.add(variance, o.c(op.getEpsilon().convertToDouble())));
    rewriter.replaceOp(op, o.add(o.mul(o.mul(centered, rstd), op.getScale()),
                                 op.getBias()));
    return success();
  }
};

/// Training: normalize with the batch's mean and biased variance, update
/// the running statistics (the unbiased variance, n/(n-1)); inference:
/// normalize with the running statistics, which stay as they are.
struct DecomposeBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    Value x = op.getInput();
    RankedTensorType input = op.getInput().getType();
    SmallVector<int64_t> channelShape(input.getRank(), 1);
    channelShape[1] = input.getDimSize(1);
    auto perChannel = [&](Value v) {
      return buildReshape(rewriter, o.loc, v, channelShape);
    };
    auto channels = [&](Value v) {
      return buildReshape(rewriter, o.loc, v, {input.getDimSize(1)});
    };
    double eps = op.getEpsilon().convertToDouble();
    Value rm = op.getRunningMean(), rv = op.getRunningVar();
    Value centered, variance, newMean = rm, newVar = rv;
    if (op.getInference()) {
      centered = o.sub(x, perChannel(rm));
      variance = perChannel(rv);
    } else {
      SmallVector<int64_t> axes = op.getReductionAxes();
      Value mean = o.mean(x, axes);
      centered = o.sub(x, mean);
      variance = o.mean(o.mul(centered, centered), axes);
      double momentum = op.getMomentum().convertToDouble();
      double n = static_cast<double>(op.getValuesPerChannel());
      newMean = o.add(o.mul(o.c(1.0 - momentum), rm),
                      o.mul(o.c(momentum), channels(mean)));
      newVar = o.add(o.mul(o.c(1.0 - momentum), rv),
                     o.mul(o.c(momentum * n / (n - 1.0)), channels(variance)));
    }
    Value rstd = o.rsqrt(o.add(variance, o.c(eps)));
    Value y = o.add(o.mul(o.mul(centered, rstd), perChannel(op.getScale())),
                    perChannel(op.getBias()));
    rewriter.replaceOp(op, {y, newMean, newVar});
    return success();
  }
};

struct DecomposeGelu : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    Value x = op.getInput();
    Value inner;
    if (op.getApproximation() == GeluApproximation::erf) {
      inner = o.erf(o.mul(x, o.c(M_SQRT1_2)));
    } else {
      Value cube = o.mul(o.mul(x, x), x);
      inner = o.tanh(o.mul(o.c(M_SQRT2 * M_2_SQRTPI * 0.5),
                           o.add(x, o.mul(o.c(0.044715), cube))));
    }
    rewriter.replaceOp(op, o.mul(o.mul(o.c(0.5), x), o.add(o.c(1.0), inner)));
    return success();
  }
};

struct DecomposeSigmoid : OpRewritePattern<SigmoidOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SigmoidOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    Value e = o.exp(o.neg(op.getInput()));
    rewriter.replaceOp(op, o.div(o.c(1.0), o.add(o.c(1.0), e)));
    return success();
  }
};

struct DecomposeReduceMean : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    int64_t count = 1;
    for (int64_t axis : op.getAxes())
      count *= op.getInput().getType().getDimSize(axis);
    Value sum = buildReduceSum(rewriter, o.loc, op.getInput(), op.getAxes(),
                               op.getKeepdims());
    rewriter.replaceOp(op, o.div(sum, o.c(static_cast<double>(count))));
    return success();
  }
};

struct DecomposeCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    // -Σ one_hot(t)·log_softmax(logits) / count; ignored targets (outside
    // the classes, like -100) have an all-zero one-hot row.
    TensorMath o = tensorMath(rewriter, op, op.getLogits());
    RankedTensorType logits = op.getLogits().getType();
    Value logProbs = LogSoftmaxOp::create(rewriter, o.loc, op.getLogits(),
                                          logits.getRank() - 1);
    Value counted = buildCountedTargets(
        rewriter, o.loc, op.getTargets(), logits.getShape().back(),
        logits.getElementType(), op.getIgnoredTarget());
    Value oneHot = buildTargetOneHot(rewriter, o.loc, logits, op.getTargets(),
                                     op.getIgnoredTarget(), counted);
    Value picked = o.sumAll(o.mul(oneHot, logProbs));
    Value count;
    switch (op.getReduction()) {
    case LossReduction::sum:
      count = o.c(1.0);
      break;
    case LossReduction::mean: {
      RankedTensorType targets = op.getTargets().getType();
      count = o.c(targets.getRank() == 0 ? 1.0 : targets.getDimSize(0));
      break;
    }
    case LossReduction::token_mean:
      count = o.sumAll(counted);
      break;
    }
    rewriter.replaceOp(op, o.neg(o.div(picked, count)));
    return success();
  }
};

struct DecomposeMseLoss : OpRewritePattern<MseLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MseLossOp op,
                                PatternRewriter &rewriter) const override {
    TensorMath o = tensorMath(rewriter, op, op.getInput());
    Value diff = o.sub(op.getInput(), op.getTarget());
    Value sum = o.sumAll(o.mul(diff, diff));
    double count = op.getReduction() == LossReduction::mean
                       ? op.getInput().getType().getNumElements()
                       : 1.0;
    rewriter.replaceOp(op, o.div(sum, o.c(count)));
    return success();
  }
};

/// Convolution and pooling on the columns of gacc.im2col.
template <typename OpT, Value (*build)(OpBuilder &, OpT)>
struct DecomposeByColumns : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, build(rewriter, op));
    return success();
  }
};

struct DecomposePass : public gacc::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeSoftmax, DecomposeLogSoftmax, DecomposeLayerNorm,
                 DecomposeBatchNorm,
                 DecomposeGelu, DecomposeSigmoid, DecomposeReduceMean,
                 DecomposeCrossEntropy, DecomposeMseLoss,
                 DecomposeByColumns<Conv2dOp, buildConv2dByColumns>,
                 DecomposeByColumns<MaxPool2dOp, buildMaxPool2dByColumns>,
                 DecomposeByColumns<AvgPool2dOp, buildAvgPool2dByColumns>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
