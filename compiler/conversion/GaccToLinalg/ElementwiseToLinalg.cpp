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

/// The arith comparisons of `predicate`: on ids, signed (-100 is an ignored
/// target); on floats, false on NaN except `ne` (true, like IEEE !=).
std::pair<arith::CmpIPredicate, arith::CmpFPredicate>
arithPredicates(ComparePredicate predicate) {
  using I = arith::CmpIPredicate;
  using F = arith::CmpFPredicate;
  switch (predicate) {
  case ComparePredicate::eq:
    return {I::eq, F::OEQ};
  case ComparePredicate::ne:
    return {I::ne, F::UNE};
  case ComparePredicate::lt:
    return {I::slt, F::OLT};
  case ComparePredicate::le:
    return {I::sle, F::OLE};
  case ComparePredicate::gt:
    return {I::sgt, F::OGT};
  case ComparePredicate::ge:
    return {I::sge, F::OGE};
  }
  llvm_unreachable("unknown comparison");
}

struct LowerCompare : OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    bool ids = isa<IntegerType>(getElementTypeOrSelf(op.getLhs().getType()));
    // (Not structured bindings: C++17 lambdas cannot capture them.)
    std::pair<arith::CmpIPredicate, arith::CmpFPredicate> predicates =
        arithPredicates(op.getPredicate());
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, op.getLoc(), op.getType(), op->getOperands(),
                [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                  if (ids)
                    return arith::CmpIOp::create(b, loc, predicates.first,
                                                 args[0], args[1]);
                  return arith::CmpFOp::create(b, loc, predicates.second,
                                               args[0], args[1]);
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

/// Elements are bucketed by the top bits of a key that orders floats as
/// unsigned integers; each bucket holds at most two map values, so that a
/// table of each bucket's first code and two comparisons find the last map
/// value at most x without branches (a binary search's are unpredictable,
/// and they keep the loop from vectorizing).
constexpr int kBucketShift = 17;
constexpr int kMaxCodesPerBucket = 2;

/// The order-preserving key of an f32 bit pattern: positive floats above
/// negative ones, each in order.
uint32_t orderKey(uint32_t bits) {
  return bits ^ ((bits >> 31) ? 0xffffffffu : 0x80000000u);
}

/// For each bucket of keys, the index of the last map value at most the
/// bucket's smallest float (0 if none is).
SmallVector<int8_t> buildBucketStarts(bool isSigned) {
  ArrayRef<float> map = QuantizeDynamicOp::getDynamicMap(isSigned);
  SmallVector<int8_t> starts(size_t(1) << (32 - kBucketShift));
  SmallVector<int> codesPerBucket(starts.size());
  for (float value : map)
    ++codesPerBucket[orderKey(llvm::bit_cast<uint32_t>(value)) >> kBucketShift];
  assert(*llvm::max_element(codesPerBucket) <= kMaxCodesPerBucket &&
         "a bucket holds more map values than the search compares");
  (void)codesPerBucket;
  size_t code = 0;
  for (size_t bucket = 0; bucket < starts.size(); ++bucket) {
    uint32_t key = static_cast<uint32_t>(bucket) << kBucketShift;
    uint32_t bits = (key >> 31) ? key & 0x7fffffffu : ~key;
    float smallest = llvm::bit_cast<float>(bits);
    while (code + 1 < map.size() && map[code + 1] <= smallest)
      ++code;
    starts[bucket] = static_cast<int8_t>(code);
  }
  return starts;
}

/// The index of the nearest map value, as bitsandbytes' dQuantize rounds:
/// the last value at most x (its bucket's start, then up to two more),
/// then that or the next, whichever is nearer. Branch-free arithmetic.
struct LowerQuantizeDynamic : OpRewritePattern<QuantizeDynamicOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeDynamicOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool isSigned = op.getIsSigned();
    Value map = buildDynamicMap(rewriter, loc, isSigned);
    SmallVector<int8_t> starts = buildBucketStarts(isSigned);
    auto startsType = RankedTensorType::get(
        {static_cast<int64_t>(starts.size())}, rewriter.getI8Type());
    Value bucketStarts = arith::ConstantOp::create(
        rewriter, loc, startsType,
        DenseElementsAttr::get(startsType, ArrayRef(starts)));
    auto body = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Type i32 = b.getI32Type();
      Value x = convertFloat(b, loc, args[0], b.getF32Type());
      auto constant = [&](int64_t v) {
        return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
      };
      auto at = [&](Value index) {
        Value position =
            arith::IndexCastUIOp::create(b, loc, b.getIndexType(), index);
        return tensor::ExtractOp::create(b, loc, map, position).getResult();
      };
      auto clamp = [&](Value index) {
        return arith::MinUIOp::create(b, loc, index, constant(255)).getResult();
      };
      auto count = [&](Value condition) {
        return arith::ExtUIOp::create(b, loc, i32, condition).getResult();
      };
      Value bits = arith::BitcastOp::create(b, loc, i32, x);
      Value mask = arith::OrIOp::create(
          b, loc, arith::ShRSIOp::create(b, loc, bits, constant(31)),
          constant(static_cast<int32_t>(0x80000000u)));
      Value bucket = arith::ShRUIOp::create(
          b, loc, arith::XOrIOp::create(b, loc, bits, mask),
          constant(kBucketShift));
      Value position =
          arith::IndexCastUIOp::create(b, loc, b.getIndexType(), bucket);
      Value low = arith::ExtUIOp::create(
          b, loc, i32,
          tensor::ExtractOp::create(b, loc, bucketStarts, position));
      Value last = low;
      for (int step = 1; step <= kMaxCodesPerBucket; ++step) {
        Value next = clamp(arith::AddIOp::create(b, loc, low, constant(step)));
        last = arith::AddIOp::create(
            b, loc, last,
            count(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                        at(next), x)));
      }
      last = clamp(last);
      Value high = clamp(arith::AddIOp::create(b, loc, last, constant(1)));
      Value toLow = math::AbsFOp::create(
          b, loc, arith::SubFOp::create(b, loc, x, at(last)));
      Value toHigh = math::AbsFOp::create(
          b, loc, arith::SubFOp::create(b, loc, at(high), x));
      Value code = clamp(arith::AddIOp::create(
          b, loc, last,
          count(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, toHigh,
                                      toLow))));
      return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
    };
    rewriter.replaceOp(
        op, buildElementwise(rewriter, loc, op.getType(), op.getInput(), body));
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
