//===- ElementwiseToLinalg.cpp - elementwise gacc ops to linalg -------------===//
//
// Unary, binary, compare and select ops (and broadcast, a copy) become one
// parallel linalg.generic each; broadcasting is in the indexing maps.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Lowers `SourceOp` to a generic whose body is `Body(b, loc, operands)`.
template <typename SourceOp, typename Body>
struct ElementwisePattern : OpRewritePattern<SourceOp> {
  using OpRewritePattern<SourceOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SourceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOp(op, buildElementwise(rewriter, op.getLoc(), type,
                                            op->getOperands(), Body()));
    return success();
  }
};

template <typename ArithOp> struct Apply {
  Value operator()(OpBuilder &b, Location loc, ValueRange args) const {
    return ArithOp::create(b, loc, args).getResult();
  }
};

struct Relu {
  Value operator()(OpBuilder &b, Location loc, ValueRange args) const {
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(args[0].getType()));
    return arith::MaximumFOp::create(b, loc, args[0], zero);
  }
};

struct Copy {
  Value operator()(OpBuilder &, Location, ValueRange args) const {
    return args[0];
  }
};

struct Select {
  Value operator()(OpBuilder &b, Location loc, ValueRange args) const {
    return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
  }
};

struct LowerCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, convertElements(rewriter, op.getLoc(), op.getInput(),
                                           op.getType().getElementType()));
    return success();
  }
};

struct LowerCompare : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    arith::CmpFPredicate predicate;
    switch (op.getPredicate()) {
    case ComparePredicate::eq:
      predicate = arith::CmpFPredicate::OEQ;
      break;
    case ComparePredicate::ne: // true on NaN, like IEEE !=
      predicate = arith::CmpFPredicate::UNE;
      break;
    case ComparePredicate::lt:
      predicate = arith::CmpFPredicate::OLT;
      break;
    case ComparePredicate::le:
      predicate = arith::CmpFPredicate::OLE;
      break;
    case ComparePredicate::gt:
      predicate = arith::CmpFPredicate::OGT;
      break;
    case ComparePredicate::ge:
      predicate = arith::CmpFPredicate::OGE;
      break;
    }
    rewriter.replaceOp(
        op, buildElementwise(rewriter, op.getLoc(), op.getType(),
                             op->getOperands(),
                             [&](OpBuilder &b, Location loc, ValueRange args) {
                               return arith::CmpFOp::create(b, loc, predicate,
                                                            args[0], args[1])
                                   .getResult();
                             }));
    return success();
  }
};
/// The dynamic map of `isSigned`, as a constant tensor the bodies index.
Value buildDynamicMap(OpBuilder &b, Location loc, bool isSigned) {
  ArrayRef<float> map = QuantizeDynamicOp::getDynamicMap(isSigned);
  auto type =
      RankedTensorType::get({static_cast<int64_t>(map.size())}, b.getF32Type());
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, map));
}

/// The index of the nearest map value: a binary search for the last value
/// at most x (8 halvings of the 256), then that or the next, whichever is
/// nearer, as bitsandbytes' dQuantize rounds.
struct LowerQuantizeDynamic : OpRewritePattern<QuantizeDynamicOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeDynamicOp op,
                                PatternRewriter &rewriter) const override {
    Value map = buildDynamicMap(rewriter, op.getLoc(), op.getIsSigned());
    auto body = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value x = convertFloat(b, loc, args[0], b.getF32Type());
      auto index = [&](int64_t i) {
        return arith::ConstantIndexOp::create(b, loc, i).getResult();
      };
      auto at = [&](Value i) {
        return tensor::ExtractOp::create(b, loc, map, i).getResult();
      };
      Value low = index(0);
      for (int64_t half = 128; half >= 1; half /= 2) {
        Value candidate = arith::AddIOp::create(b, loc, low, index(half));
        Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                            at(candidate), x);
        low = arith::SelectOp::create(b, loc, below, candidate, low);
      }
      Value high = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, low, index(1)), index(255));
      Value toLow = math::AbsFOp::create(
          b, loc, arith::SubFOp::create(b, loc, x, at(low)));
      Value toHigh = math::AbsFOp::create(
          b, loc, arith::SubFOp::create(b, loc, at(high), x));
      Value nearer = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           toHigh, toLow);
      Value code = arith::SelectOp::create(b, loc, nearer, high, low);
      return arith::TruncIOp::create(
          b, loc, b.getI8Type(),
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(), code));
    };
    rewriter.replaceOp(op, buildElementwise(rewriter, op.getLoc(), op.getType(),
                                            op.getInput(), body));
    return success();
  }
};

struct LowerDequantizeDynamic : OpRewritePattern<DequantizeDynamicOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DequantizeDynamicOp op,
                                PatternRewriter &rewriter) const override {
    Value map = buildDynamicMap(rewriter, op.getLoc(), op.getIsSigned());
    Type element = op.getType().getElementType();
    auto body = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value code = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          arith::ExtUIOp::create(b, loc, b.getI32Type(), args[0]));
      return convertFloat(b, loc, tensor::ExtractOp::create(b, loc, map, code),
                          element);
    };
    rewriter.replaceOp(op, buildElementwise(rewriter, op.getLoc(), op.getType(),
                                            op.getInput(), body));
    return success();
  }
};
} // namespace

void gacc::populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ElementwisePattern<AddOp, Apply<arith::AddFOp>>,
               ElementwisePattern<SubOp, Apply<arith::SubFOp>>,
               ElementwisePattern<MulOp, Apply<arith::MulFOp>>,
               ElementwisePattern<DivOp, Apply<arith::DivFOp>>,
               ElementwisePattern<NegOp, Apply<arith::NegFOp>>,
               ElementwisePattern<ExpOp, Apply<math::ExpOp>>,
               ElementwisePattern<LogOp, Apply<math::LogOp>>,
               ElementwisePattern<SqrtOp, Apply<math::SqrtOp>>,
               ElementwisePattern<RsqrtOp, Apply<math::RsqrtOp>>,
               ElementwisePattern<TanhOp, Apply<math::TanhOp>>,
               ElementwisePattern<ErfOp, Apply<math::ErfOp>>,
               ElementwisePattern<ReluOp, Relu>,
               ElementwisePattern<BroadcastOp, Copy>,
               ElementwisePattern<SelectOp, Select>, LowerCast, LowerCompare,
               LowerQuantizeDynamic, LowerDequantizeDynamic>(context);
}
