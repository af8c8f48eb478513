//===- ShapeToTensor.cpp - gacc shape ops to tensor and linalg ops ----------===//

#include "compiler/conversion/GaccToLinalg/Utils.h"
#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct LowerReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = op.getType().getShape();
    auto shapeType =
        RankedTensorType::get({static_cast<int64_t>(shape.size())},
                              rewriter.getIndexType());
    Value shapeValue = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(
            shapeType, llvm::to_vector(llvm::map_range(shape, [&](int64_t d) {
              return static_cast<Attribute>(rewriter.getIndexAttr(d));
            }))));
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, op.getType(),
                                                   op.getInput(), shapeValue);
    return success();
  }
};

struct LowerTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), init, op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult());
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
    Value zeros = filledTensor(rewriter, op.getLoc(), op.getType(),
                               rewriter.getZeroAttr(op.getType().getElementType()));
    ArrayRef<int64_t> sizes = op.getInput().getType().getShape();
    SmallVector<int64_t> strides(sizes.size(), 1);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getInput(), zeros, ValueRange{}, ValueRange{}, ValueRange{},
        op.getLow(), sizes, strides);
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
