//===- IndexOpsToLinalg.cpp - constants and index-driven ops to linalg ------===//
//
// Ops whose elements depend on element indices or integer ids: constants,
// the embedding lookup, one-hot encoding, the causal mask and dropout.
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
/// splitmix64's finalizer on i64 values.
Value mix(OpBuilder &b, Location loc, Value x) {
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                        static_cast<int64_t>(v));
  };
  auto xorShift = [&](Value z, int64_t shift) {
    return arith::XOrIOp::create(
        b, loc, z, arith::ShRUIOp::create(b, loc, z, constant(shift)));
  };
  Value z = arith::AddIOp::create(b, loc, x, constant(0x9e3779b97f4a7c15ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30),
                            constant(0xbf58476d1ce4e5b9ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27),
                            constant(0x94d049bb133111ebull));
  return xorShift(z, 31);
}

/// Dropout: element i survives when the top 24 bits of
/// mix(mix(mix(seed) ^ counter) ^ i) are at least rate·2^24, and is scaled
/// by 1/(1-rate).
struct LowerDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *context = rewriter.getContext();
    int64_t rank = type.getRank();
    double rate = op.getRate().convertToDouble();
    Value counter = op.getCounter();
    if (!counter)
      counter = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(RankedTensorType::get({}, rewriter.getI64Type()),
                                 rewriter.getI64IntegerAttr(0)));
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, {}, context),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    int64_t seed = op.getSeedAttr().getInt();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{op.getInput(), counter},
        emptyTensor(rewriter, loc, type), maps, iterators,
        [&](OpBuilder &b, Location nested, ValueRange args) {
          Type i64 = b.getI64Type();
          // The row-major index of the element.
          Value index = arith::ConstantIntOp::create(b, nested, i64, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value size = arith::ConstantIntOp::create(b, nested, i64,
                                                      type.getDimSize(d));
            Value position = arith::IndexCastOp::create(
                b, nested, i64, linalg::IndexOp::create(b, nested, d));
            index = arith::AddIOp::create(
                b, nested, arith::MulIOp::create(b, nested, index, size),
                position);
          }
          Value seeded =
              mix(b, nested, arith::ConstantIntOp::create(b, nested, i64, seed));
          Value stream = mix(b, nested,
                             arith::XOrIOp::create(b, nested, seeded, args[1]));
          Value bits = mix(b, nested,
                           arith::XOrIOp::create(b, nested, stream, index));
          Value top = arith::ShRUIOp::create(
              b, nested, bits, arith::ConstantIntOp::create(b, nested, i64, 40));
          Value threshold = arith::ConstantIntOp::create(
              b, nested, i64, static_cast<int64_t>(rate * (1 << 24)));
          Value keep = arith::CmpIOp::create(b, nested, arith::CmpIPredicate::uge,
                                             top, threshold);
          Type element = type.getElementType();
          Value scaled = arith::MulFOp::create(
              b, nested, args[0],
              arith::ConstantOp::create(
                  b, nested, b.getFloatAttr(element, 1.0 / (1.0 - rate))));
          Value zero =
              arith::ConstantOp::create(b, nested, b.getFloatAttr(element, 0.0));
          linalg::YieldOp::create(
              b, nested,
              arith::SelectOp::create(b, nested, keep, scaled, zero).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void gacc::populateIndexOpsToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerConstant, LowerEmbedding, LowerOneHot, LowerCausalMask,
               LowerDropout>(patterns.getContext());
}
