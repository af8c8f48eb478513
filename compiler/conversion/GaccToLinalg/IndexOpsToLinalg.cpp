//===- IndexOpsToLinalg.cpp - constants and index-driven ops to linalg ------===//
//
// Ops whose elements depend on element indices or integer ids: constants,
// the embedding lookup, one-hot encoding, the causal mask, dropout and the
// window gathers of convolution and pooling (im2col, col2im).
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "dialects/gacc/GaccWindowOps.h"

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

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `v` clamped to [0, size).
Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t size) {
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, v, constIndex(b, loc, 0)),
      constIndex(b, loc, size - 1));
}

/// Whether 0 <= v < size.
Value inRange(OpBuilder &b, Location loc, Value v, int64_t size) {
  Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v,
                                    constIndex(b, loc, 0));
  Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v,
                                     constIndex(b, loc, size));
  return arith::AndIOp::create(b, loc, low, high);
}

/// Element [n, c, kh·KW + kw, oh·OW + ow] reads the image at
/// (oh·s + kh·d - p, ow·s + kw·d - p), or is the padding value outside it.
/// The image is padded first (one pass over it; the columns repeat it
/// KH·KW times), so that every element is a read without bounds: the
/// innermost loop copies a row of the image, which vectorizes, where a read
/// at a clamped index and a select of the padding kept it scalar. The loops
/// run over [N, C, KH, KW, OH, OW] (collapsed to the op's shape after), so
/// that no element divides its index.
struct LowerIm2col : OpRewritePattern<Im2colOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Im2colOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType image = op.getInput().getType();
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(),
                      padding = op.getPadding(), dilation = op.getDilation();
    int64_t outHeight = windowOutputSize(image.getDimSize(2), kernel[0],
                                         stride[0], padding[0], dilation[0]);
    int64_t outWidth = windowOutputSize(image.getDimSize(3), kernel[1],
                                        stride[1], padding[1], dilation[1]);
    Type element = image.getElementType();
    Value padded = op.getInput();
    if (padding[0] || padding[1]) {
      auto paddedType = RankedTensorType::get(
          {image.getDimSize(0), image.getDimSize(1),
           image.getDimSize(2) + 2 * padding[0],
           image.getDimSize(3) + 2 * padding[1]},
          element);
      padded = paddedTensor(
          rewriter, loc, padded, paddedType, {0, 0, padding[0], padding[1]},
          rewriter.getFloatAttr(element,
                                op.getPaddingValue().convertToDouble()));
    }
    auto loops = RankedTensorType::get({image.getDimSize(0),
                                        image.getDimSize(1), kernel[0],
                                        kernel[1], outHeight, outWidth},
                                       element);
    // A read in the body, not an input's indexing map: the loops stay
    // projected permutations, so the transposes and reshapes that feed the
    // columns to their GEMM still fold into this loop.
    Value columns = buildIndexed(
        rewriter, loc, loops, Value(),
        [&](OpBuilder &b, Location at, ArrayRef<Value> idx, Value) {
          // out·stride + k·dilation in the padded image.
          auto position = [&](Value out, Value k, int d) -> Value {
            return arith::AddIOp::create(
                b, at,
                arith::MulIOp::create(b, at, out,
                                      constIndex(b, at, stride[d])),
                arith::MulIOp::create(b, at, k,
                                      constIndex(b, at, dilation[d])));
          };
          return tensor::ExtractOp::create(
                     b, at, padded,
                     ValueRange{idx[0], idx[1], position(idx[4], idx[2], 0),
                                position(idx[5], idx[3], 1)})
              .getResult();
        });
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), columns,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
    return success();
  }
};

/// Pixel [n, c, h, w] sums the column elements that read it: for each
/// (kh, kw) of the window (unrolled), the output position (oh, ow) with
/// oh·s + kh·d - p = h, where it is a whole position inside the output.
/// A gather, so that the pixels are independent (no scatter).
struct LowerCol2im : OpRewritePattern<Col2imOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Col2imOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType image = op.getType();
    ArrayRef<int64_t> k = op.getKernel(), s = op.getStride(),
                      p = op.getPadding(), d = op.getDilation();
    int64_t outHeight = windowOutputSize(image.getDimSize(2), k[0], s[0], p[0],
                                         d[0]);
    int64_t outWidth = windowOutputSize(image.getDimSize(3), k[1], s[1], p[1],
                                        d[1]);
    Type element = image.getElementType();
    Value columns = op.getInput();
    rewriter.replaceOp(
        op, buildIndexed(
                rewriter, op.getLoc(), image, Value(),
                [&](OpBuilder &b, Location loc, ArrayRef<Value> idx, Value) {
                  Value zero = arith::ConstantOp::create(
                      b, loc, b.getFloatAttr(element, 0.0));
                  Value sum = zero;
                  // The output position of pixel `pixel` for window offset
                  // `kOffset` along dimension `dim`, and whether it is one.
                  auto source = [&](Value pixel, int64_t kOffset, int dim,
                                    int64_t count) -> std::pair<Value, Value> {
                    Value num = arith::AddIOp::create(
                        b, loc, pixel,
                        constIndex(b, loc, p[dim] - kOffset * d[dim]));
                    Value stride = constIndex(b, loc, s[dim]);
                    Value exact = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::eq,
                        arith::RemSIOp::create(b, loc, num, stride),
                        constIndex(b, loc, 0));
                    Value out = arith::DivSIOp::create(b, loc, num, stride);
                    Value valid = arith::AndIOp::create(
                        b, loc, exact, inRange(b, loc, num, count * s[dim]));
                    valid = arith::AndIOp::create(
                        b, loc, valid, inRange(b, loc, out, count));
                    return {clampIndex(b, loc, out, count), valid};
                  };
                  for (int64_t kh = 0; kh < k[0]; ++kh) {
                    auto [oh, rowValid] = source(idx[2], kh, 0, outHeight);
                    for (int64_t kw = 0; kw < k[1]; ++kw) {
                      auto [ow, colValid] = source(idx[3], kw, 1, outWidth);
                      Value position = arith::AddIOp::create(
                          b, loc,
                          arith::MulIOp::create(b, loc, oh,
                                                constIndex(b, loc, outWidth)),
                          ow);
                      Value value = tensor::ExtractOp::create(
                          b, loc, columns,
                          ValueRange{idx[0], idx[1],
                                     constIndex(b, loc, kh * k[1] + kw),
                                     position});
                      Value valid =
                          arith::AndIOp::create(b, loc, rowValid, colValid);
                      sum = arith::AddFOp::create(
                          b, loc, sum,
                          arith::SelectOp::create(b, loc, valid, value, zero));
                    }
                  }
                  return sum;
                }));
    return success();
  }
};

} // namespace

void gacc::populateIndexOpsToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerConstant, LowerEmbedding, LowerOneHot, LowerCausalMask,
               LowerDropout, LowerIm2col, LowerCol2im>(patterns.getContext());
}
