//===- IndexOpsToLinalg.cpp - constants and index-driven ops to linalg ------===//
//
// Ops whose elements depend on element indices or integer ids: constants,
// the embedding lookup, one-hot encoding and the causal mask.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct LowerConstant : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getValue());
    return success();
  }
};

/// A generic over `type` whose body sees the loop indices and, when given,
/// the element of `ids` at the leading indices.
Value buildIndexed(
    OpBuilder &b, Location loc, RankedTensorType type, Value ids,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>, Value)> body) {
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  if (ids) {
    int64_t idRank = cast<RankedTensorType>(ids.getType()).getRank();
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context)
                       .getMajorSubMap(idRank));
    inputs.push_back(ids);
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, emptyTensor(b, loc, type), maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(nested, nestedLoc, d));
        Value id = ids ? args[0] : Value();
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, indices, id));
      });
  return generic.getResult(0);
}

/// An id as an index clamped to [0, count): out-of-range ids read a valid
/// row instead of memory outside the table (the runtime rejects such data).
Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t count) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::ConstantIndexOp::create(b, loc, count - 1);
  return arith::MinSIOp::create(b, loc,
                                arith::MaxSIOp::create(b, loc, index, zero),
                                last);
}

struct LowerEmbedding : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Value table = op.getTable();
    int64_t rows = op.getTable().getType().getDimSize(0);
    rewriter.replaceOp(
        op, buildIndexed(rewriter, op.getLoc(), op.getType(), op.getIndices(),
                         [&](OpBuilder &b, Location loc,
                             ArrayRef<Value> indices, Value id) {
                           Value row = clampedIndex(b, loc, id, rows);
                           return tensor::ExtractOp::create(
                                      b, loc, table,
                                      ValueRange{row, indices.back()})
                               .getResult();
                         }));
    return success();
  }
};

struct LowerOneHot : OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rewriter) const override {
    Type element = op.getType().getElementType();
    rewriter.replaceOp(
        op, buildIndexed(
                rewriter, op.getLoc(), op.getType(), op.getIndices(),
                [&](OpBuilder &b, Location loc, ArrayRef<Value> indices,
                    Value id) {
                  Value cls = arith::IndexCastOp::create(b, loc, id.getType(),
                                                         indices.back());
                  Value hit = arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::eq, id, cls);
                  Value one = arith::ConstantOp::create(
                      b, loc, b.getFloatAttr(element, 1.0));
                  Value zero = arith::ConstantOp::create(
                      b, loc, b.getFloatAttr(element, 0.0));
                  return arith::SelectOp::create(b, loc, hit, one, zero)
                      .getResult();
                }));
    return success();
  }
};

struct LowerCausalMask : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = op.getType().getShape();
    int64_t offset = shape.back() - shape[shape.size() - 2];
    rewriter.replaceOp(
        op, buildIndexed(rewriter, op.getLoc(), op.getType(), Value(),
                         [&](OpBuilder &b, Location loc,
                             ArrayRef<Value> indices, Value) {
                           Value query = indices[indices.size() - 2];
                           Value shift =
                               arith::ConstantIndexOp::create(b, loc, offset);
                           Value limit =
                               arith::AddIOp::create(b, loc, query, shift);
                           return arith::CmpIOp::create(
                                      b, loc, arith::CmpIPredicate::sle,
                                      indices.back(), limit)
                               .getResult();
                         }));
    return success();
  }
};
} // namespace

void gacc::populateIndexOpsToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerConstant, LowerEmbedding, LowerOneHot, LowerCausalMask>(
      patterns.getContext());
}
