//===- ShapeToTensor.cpp - gacc shape ops to tensor and linalg ops ----------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Groups the dimensions of `source` and `target` (same element count) into
/// the shortest runs of equal size: the reshape is then a collapse of each
/// source run to one dimension and an expansion of it into its target run.
/// A dimension of size 1 joins the run before it, so that adding or dropping
/// one leaves the other side's run alone (one half of the reshape is then
/// trivial there, and fusion can move the expansion before the collapse).
/// Fails for rank 0 and for sizes of 0, which have no such grouping.
LogicalResult groupReshape(ArrayRef<int64_t> source, ArrayRef<int64_t> target,
                           SmallVectorImpl<ReassociationIndices> &sourceRuns,
                           SmallVectorImpl<ReassociationIndices> &targetRuns) {
  if (source.empty() || target.empty() || llvm::is_contained(source, 0) ||
      llvm::is_contained(target, 0))
    return failure();
  size_t i = 0, j = 0;
  while (true) {
    if (!sourceRuns.empty()) {
      for (; i < source.size() && source[i] == 1; ++i)
        sourceRuns.back().push_back(i);
      for (; j < target.size() && target[j] == 1; ++j)
        targetRuns.back().push_back(j);
    }
    if (i == source.size() && j == target.size())
      return success();
    if (i == source.size() || j == target.size())
      return failure();
    ReassociationIndices from{int64_t(i)}, to{int64_t(j)};
    int64_t left = source[i++], right = target[j++];
    while (left != right) {
      if (left < right ? i == source.size() : j == target.size())
        return failure();
      if (left < right) {
        from.push_back(i);
        left *= source[i++];
      } else {
        to.push_back(j);
        right *= target[j++];
      }
    }
    sourceRuns.push_back(from);
    targetRuns.push_back(to);
  }
}

/// A reshape as tensor.collapse_shape then tensor.expand_shape (either left
/// out when it changes nothing), which elementwise fusion folds through, and
/// tensor.reshape only where there is no grouping (rank 0).
struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto sourceType = cast<RankedTensorType>(op.getInput().getType());
    ArrayRef<int64_t> shape = op.getType().getShape();
    SmallVector<ReassociationIndices> sourceRuns, targetRuns;
    if (succeeded(groupReshape(sourceType.getShape(), shape, sourceRuns,
                               targetRuns))) {
      Value value = op.getInput();
      if (sourceRuns.size() != size_t(sourceType.getRank()))
        value =
            tensor::CollapseShapeOp::create(rewriter, loc, value, sourceRuns);
      if (targetRuns.size() != shape.size())
        value = tensor::ExpandShapeOp::create(rewriter, loc, op.getType(),
                                              value, targetRuns);
      rewriter.replaceOp(op, value);
      return success();
    }
    auto shapeType =
        RankedTensorType::get({static_cast<int64_t>(shape.size())},
                              rewriter.getIndexType());
    Value shapeValue = arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            shapeType, llvm::to_vector(llvm::map_range(shape, [&](int64_t d) {
              return static_cast<Attribute>(rewriter.getIndexAttr(d));
            }))));
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, op.getType(),
                                                   op.getInput(), shapeValue);
    return success();
  }
};

/// A transpose as a generic (not linalg.transpose), so that elementwise
/// fusion folds it into its producer or consumer instead of copying.
struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    unsigned rank = op.getType().getRank();
    // Result element [i...] is input element [j...] with j[perm[d]] = i[d].
    SmallVector<AffineExpr> inputIndex(rank);
    for (auto [d, from] : llvm::enumerate(op.getPermutation()))
      inputIndex[from] = getAffineDimExpr(d, context);
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, inputIndex, context),
        AffineMap::getMultiDimIdentityMap(rank, context)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getType(), op.getInput(),
        emptyTensor(rewriter, loc, op.getType()), maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct LowerSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> strides(op.getOffsets().size(), 1);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getInput(), ValueRange{}, ValueRange{},
        ValueRange{}, op.getOffsets(), op.getSizes(), strides);
    return success();
  }
};

/// Zero padding: fill the result with zeros, insert the input.
struct LowerPad : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, paddedTensor(rewriter, op.getLoc(), op.getInput(), op.getType(),
                         op.getLow(),
                         rewriter.getZeroAttr(op.getType().getElementType())));
    return success();
  }
};

/// Concatenation: insert each input at its offset along the axis.
struct LowerConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value result = emptyTensor(rewriter, op.getLoc(), type);
    int64_t axis = op.getAxisAttr().getInt(), offset = 0;
    for (Value input : op.getInputs()) {
      ArrayRef<int64_t> sizes =
          cast<RankedTensorType>(input.getType()).getShape();
      SmallVector<int64_t> offsets(sizes.size(), 0), strides(sizes.size(), 1);
      offsets[axis] = offset;
      offset += sizes[axis];
      result = tensor::InsertSliceOp::create(
          rewriter, op.getLoc(), input, result, ValueRange{}, ValueRange{},
          ValueRange{}, offsets, sizes, strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};
/// A block boundary only matters to gacc-remat: the identity.
struct LowerCheckpoint : OpRewritePattern<CheckpointOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CheckpointOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};
} // namespace

void gacc::populateShapeToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerReshape, LowerTranspose, LowerSlice, LowerPad,
               LowerConcat, LowerCheckpoint>(patterns.getContext());
}
