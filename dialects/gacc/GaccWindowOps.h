//===- GaccWindowOps.h - convolution and pooling as columns -----*- C++ -*-===//
//
// Convolution and pooling are computed on the columns of gacc.im2col; their
// VJP rules (GaccWindowOps.cpp) and gacc-decompose build the same
// expansions from these builders.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_DIALECTS_GACC_GACCWINDOWOPS_H
#define GACC_DIALECTS_GACC_GACCWINDOWOPS_H

#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {

/// A window's output size along one dimension, as PyTorch's (floor):
/// (size + 2·padding - dilation·(kernel - 1) - 1) / stride + 1; 0 or less
/// when the window does not fit.
int64_t windowOutputSize(int64_t size, int64_t kernel, int64_t stride,
                         int64_t padding, int64_t dilation);

/// gacc.im2col of `input` (N x C x H x W) for the window of `op` (a
/// conv2d, max_pool2d or avg_pool2d), padded with `paddingValue`.
Value buildIm2col(OpBuilder &b, Operation *op, Value input,
                  double paddingValue);
/// gacc.col2im of `columns` into an image of `imageType`.
Value buildCol2im(OpBuilder &b, Operation *op, Value columns,
                  RankedTensorType imageType);

/// The convolution as im2col + a (group-batched) matmul.
Value buildConv2dByColumns(OpBuilder &b, Conv2dOp op);
/// Max and average pooling as a reduction over the window of the columns.
Value buildMaxPool2dByColumns(OpBuilder &b, MaxPool2dOp op);
Value buildAvgPool2dByColumns(OpBuilder &b, AvgPool2dOp op);

} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCWINDOWOPS_H
