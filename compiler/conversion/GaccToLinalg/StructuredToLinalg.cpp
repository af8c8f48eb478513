//===- StructuredToLinalg.cpp - reductions and matmuls to linalg ------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// reduce_sum / reduce_max: a generic with reduction iterators into a filled
/// accumulator (0 or -inf). An f16 or bf16 sum adds in f32 and rounds once,
/// as PyTorch's do: adding thousands of rows (a bias gradient) in 8 bits of
/// mantissa would drop each once the sum is 256 times larger.
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
    Type narrow = result.getElementType();
    bool widen = std::is_same_v<CombineOp, arith::AddFOp> &&
                 narrow.getIntOrFloatBitWidth() < 32;
    RankedTensorType accumulated =
        widen ? result.clone(rewriter.getF32Type()) : result;
    Value init = filledTensor(
        rewriter, loc, accumulated,
        rewriter.getFloatAttr(accumulated.getElementType(), identity));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accumulated, op.getInput(), init, maps, iterators,
        [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Value element = args[0];
          if (widen)
            element =
                arith::ExtFOp::create(b, nestedLoc, args[1].getType(), element);
          linalg::YieldOp::create(
              b, nestedLoc,
              CombineOp::create(b, nestedLoc, element, args[1]).getResult());
        });
    rewriter.replaceOp(
        op, convertElements(rewriter, loc, generic.getResult(0), narrow));
    return success();
  }

  double identity;
};

/// matmul: one named contraction, linalg.contract, over loops
/// (batch..., m, n, k), kept named until a target lowers it (BLAS calls,
/// tiled kernels). Its indexing maps do the transposes and the batch
/// broadcasting (an operand reads the batch loops its batch dimensions
/// align with); a stretched batch dimension of size 1 reads no loop and is
/// collapsed away, as the maps of linalg.contract are projected
/// permutations. f16 and bf16 matmuls multiply and accumulate in f32 and
/// round the result once, as tensor cores and PyTorch do: the contraction
/// reads the narrow operands and widens each element (its `cast`).
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
    int64_t rank = result.getRank(), batch = rank - 2;
    AffineExpr m = getAffineDimExpr(rank - 2, context);
    AffineExpr n = getAffineDimExpr(rank - 1, context);
    AffineExpr k = getAffineDimExpr(rank, context);

    SmallVector<Value> operands;
    SmallVector<AffineMap> maps;
    auto addOperand = [&](Value operand, AffineExpr row, AffineExpr col,
                          bool transposed) {
      auto type = cast<RankedTensorType>(operand.getType());
      AffineMap batchMap =
          broadcastMap(type.getShape().drop_back(2),
                       result.getShape().take_front(batch), context);
      // A stretched dimension (a constant 0 in the map) joins the group of
      // the next one that reads a loop.
      SmallVector<ReassociationIndices> groups(1);
      SmallVector<AffineExpr> exprs;
      for (auto [i, expr] : llvm::enumerate(batchMap.getResults())) {
        groups.back().push_back(i);
        if (isa<AffineConstantExpr>(expr))
          continue;
        exprs.push_back(expr);
        groups.emplace_back();
      }
      groups.back().push_back(type.getRank() - 2);
      groups.push_back({type.getRank() - 1});
      if (static_cast<int64_t>(groups.size()) != type.getRank())
        operand =
            tensor::CollapseShapeOp::create(rewriter, loc, operand, groups);
      exprs.push_back(transposed ? col : row);
      exprs.push_back(transposed ? row : col);
      operands.push_back(operand);
      maps.push_back(AffineMap::get(rank + 1, 0, exprs, context));
    };
    addOperand(op.getLhs(), m, k, op.getTransposeLhs());
    addOperand(op.getRhs(), k, n, op.getTransposeRhs());
    maps.push_back(
        rewriter.getMultiDimIdentityMap(rank + 1).getMajorSubMap(rank));
    Value init = filledTensor(rewriter, loc, result,
                              rewriter.getZeroAttr(result.getElementType()));
    auto contract = linalg::ContractOp::create(
        rewriter, loc, TypeRange{result}, operands, ValueRange{init},
        rewriter.getAffineMapArrayAttr(maps));
    // The target's hint that this is an embedding's gradient.
    StringRef hint = GaccDialect::EmbeddingGradientAttrHelper::getNameStr();
    if (Attribute unit = op->getDiscardableAttr(hint))
      contract->setDiscardableAttr(hint, unit);
    rewriter.replaceOp(op, convertElements(rewriter, loc, contract.getResult(0),
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
