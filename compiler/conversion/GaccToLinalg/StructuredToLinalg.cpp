//===- StructuredToLinalg.cpp - reductions and matmuls to linalg ------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// reduce_sum / reduce_max: a generic with reduction iterators into a filled
/// accumulator (0 or -inf).
template <typename ReduceOp, typename CombineOp>
struct LowerReduce : OpRewritePattern<ReduceOp> {
  LowerReduce(MLIRContext *context, double identity)
      : OpRewritePattern<ReduceOp>(context), identity(identity) {}

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType input = op.getInput().getType();
    RankedTensorType result = op.getType();
    MLIRContext *context = rewriter.getContext();
    ArrayRef<int64_t> axes = op.getAxes();

    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < input.getRank(); ++d) {
      bool reduced = llvm::is_contained(axes, d);
      iterators.push_back(reduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
      if (!reduced)
        outExprs.push_back(getAffineDimExpr(d, context));
      else if (op.getKeepdims())
        outExprs.push_back(getAffineConstantExpr(0, context));
    }
    SmallVector<AffineMap> maps = {
        rewriter.getMultiDimIdentityMap(input.getRank()),
        AffineMap::get(input.getRank(), 0, outExprs, context)};
    Value init = filledTensor(
        rewriter, loc, result,
        rewriter.getFloatAttr(result.getElementType(), identity));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, op.getInput(), init, maps, iterators,
        [](OpBuilder &b, Location nestedLoc, ValueRange args) {
          linalg::YieldOp::create(
              b, nestedLoc,
              CombineOp::create(b, nestedLoc, args[0], args[1]).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  double identity;
};

/// matmul: one contraction generic over (batch..., m, n, k); the maps do the
/// transposes and the batch broadcasting. f16 and bf16 matmuls multiply and
/// accumulate in f32 and round the result once, as tensor cores and
/// PyTorch do: the contraction reads the narrow operands, widens each
/// element in its body and accumulates into f32.
struct LowerMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    RankedTensorType narrow = op.getType();
    Type f32 = rewriter.getF32Type();
    bool widen = narrow.getElementType().getIntOrFloatBitWidth() < 32;
    RankedTensorType result = widen ? narrow.clone(f32) : narrow;
    Value lhs = op.getLhs(), rhs = op.getRhs();
    int64_t rank = result.getRank(), batch = rank - 2;
    AffineExpr m = getAffineDimExpr(rank - 2, context);
    AffineExpr n = getAffineDimExpr(rank - 1, context);
    AffineExpr k = getAffineDimExpr(rank, context);

    auto operandMap = [&](Value operand, AffineExpr row, AffineExpr col,
                          bool transposed) {
      ArrayRef<int64_t> shape =
          cast<RankedTensorType>(operand.getType()).getShape();
      AffineMap batchMap = broadcastMap(shape.drop_back(2),
                                        result.getShape().take_front(batch),
                                        context);
      SmallVector<AffineExpr> exprs(batchMap.getResults());
      exprs.push_back(transposed ? col : row);
      exprs.push_back(transposed ? row : col);
      return AffineMap::get(rank + 1, 0, exprs, context);
    };
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, context));
    SmallVector<AffineMap> maps = {
        operandMap(lhs, m, k, op.getTransposeLhs()),
        operandMap(rhs, k, n, op.getTransposeRhs()),
        AffineMap::get(rank + 1, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, result,
                              rewriter.getZeroAttr(result.getElementType()));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, ValueRange{lhs, rhs}, init,
        maps, iterators, [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Type acc = result.getElementType();
          Value product = arith::MulFOp::create(
              b, nestedLoc, convertFloat(b, nestedLoc, args[0], acc),
              convertFloat(b, nestedLoc, args[1], acc));
          linalg::YieldOp::create(
              b, nestedLoc,
              arith::AddFOp::create(b, nestedLoc, args[2], product).getResult());
        });
    rewriter.replaceOp(op, convertElements(rewriter, loc, generic.getResult(0),
                                           narrow.getElementType()));
    return success();
  }
};
} // namespace

void gacc::populateStructuredToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LowerReduce<ReduceSumOp, arith::AddFOp>>(context, 0.0);
  patterns.add<LowerReduce<ReduceMaxOp, arith::MaximumFOp>>(
      context, -std::numeric_limits<double>::infinity());
  patterns.add<LowerMatmul>(context);
}
