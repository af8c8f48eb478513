//===- GaccWindowOps.cpp - convolution and pooling ------------------------===//
//
// Verifiers, VJP rules and the im2col expansions of gacc.im2col,
// gacc.col2im, gacc.conv2d, gacc.max_pool2d and gacc.avg_pool2d.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccWindowOps.h"
#include "dialects/gacc/GaccBuilders.h"

#include <limits>

using namespace mlir;
using namespace mlir::gacc;

int64_t mlir::gacc::windowOutputSize(int64_t size, int64_t kernel,
                                     int64_t stride, int64_t padding,
                                     int64_t dilation) {
  int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

namespace {
/// The window attributes of an op of the family (dilation 1 and the kernel
/// of the weight where the op has none).
struct Window {
  SmallVector<int64_t> kernel, stride, padding, dilation;

  static Window of(Operation *op) {
    Window w;
    auto get = [&](StringRef name) {
      auto attr = op->getAttrOfType<DenseI64ArrayAttr>(name);
      return attr ? SmallVector<int64_t>(attr.asArrayRef())
                  : SmallVector<int64_t>{1, 1};
    };
    w.stride = get("stride");
    w.padding = get("padding");
    w.dilation = get("dilation");
    if (auto conv = dyn_cast<Conv2dOp>(op))
      w.kernel = SmallVector<int64_t>(
          conv.getWeight().getType().getShape().take_back(2));
    else
      w.kernel = get("kernel");
    return w;
  }

  LogicalResult verify(Operation *op) const {
    for (auto [name, values] :
         {std::pair<StringRef, ArrayRef<int64_t>>{"kernel", kernel},
          {"stride", stride},
          {"padding", padding},
          {"dilation", dilation}}) {
      if (values.size() != 2)
        return op->emitOpError(name) << " must have 2 values (H, W), got "
                                     << values.size();
      for (int64_t v : values)
        if (name == "padding" ? v < 0 : v < 1)
          return op->emitOpError(name)
                 << (name == "padding" ? " must be non-negative"
                                       : " must be positive")
                 << ", got " << v;
    }
    for (int d = 0; d < 2; ++d)
      if (padding[d] * 2 > kernel[d] * dilation[d] && !isa<Conv2dOp>(op) &&
          !isa<Im2colOp, Col2imOp>(op))
        return op->emitOpError("padding ")
               << padding[d] << " exceeds half the window";
    return success();
  }

  /// OH, OW for an N x C x H x W image.
  SmallVector<int64_t> outputSize(RankedTensorType image) const {
    return {windowOutputSize(image.getDimSize(2), kernel[0], stride[0],
                             padding[0], dilation[0]),
            windowOutputSize(image.getDimSize(3), kernel[1], stride[1],
                             padding[1], dilation[1])};
  }

  /// Verifies that `image` is N x C x H x W, the window fits, and `result`
  /// is N x `channels` x OH x OW.
  LogicalResult verifyImage(Operation *op, RankedTensorType image,
                            RankedTensorType result, int64_t channels) const {
    if (image.getRank() != 4)
      return op->emitOpError("needs an N x C x H x W image, got rank ")
             << image.getRank();
    SmallVector<int64_t> out = outputSize(image);
    if (out[0] < 1 || out[1] < 1)
      return op->emitOpError("the ")
             << kernel[0] << "x" << kernel[1] << " window does not fit the "
             << image.getDimSize(2) << "x" << image.getDimSize(3) << " image";
    SmallVector<int64_t> expected = {image.getDimSize(0), channels, out[0],
                                     out[1]};
    if (result.getShape() != ArrayRef<int64_t>(expected) ||
        result.getElementType() != image.getElementType())
      return op->emitOpError("result must be ")
             << RankedTensorType::get(expected, image.getElementType())
             << ", got " << result;
    return success();
  }

  /// This window without the taps at the ends of the kernel that read only
  /// padding, for every output position; `first` gets the first tap kept
  /// in each dimension. Their products are zeros: a 3x3 kernel over a 1x1
  /// image reaches the image with one tap, over a 2x2 image at stride 2
  /// with four, and in a ResNet's last stage at 32x32 inputs those zeros
  /// were most of the convolutions' GEMM work. The window is kept whole
  /// where dropping taps would change the output size.
  Window reachingTaps(RankedTensorType image,
                      SmallVector<int64_t> &first) const {
    SmallVector<int64_t> out = outputSize(image);
    Window trimmed = *this;
    first.assign(2, 0);
    for (int d = 0; d < 2; ++d) {
      // Tap t reads row o·stride - padding + t·dilation of output o; the
      // last output reads the highest rows, the first the lowest.
      int64_t begin = 0, end = kernel[d];
      while (begin < end && (out[d] - 1) * stride[d] - padding[d] +
                                    begin * dilation[d] <
                                0)
        ++begin;
      while (end > begin &&
             (end - 1) * dilation[d] - padding[d] >= image.getDimSize(2 + d))
        --end;
      trimmed.kernel[d] = end - begin;
      trimmed.padding[d] = padding[d] - begin * dilation[d];
      first[d] = begin;
    }
    if (trimmed.kernel[0] < 1 || trimmed.kernel[1] < 1 ||
        trimmed.padding[0] < 0 || trimmed.padding[1] < 0 ||
        trimmed.outputSize(image) != out) {
      first.assign(2, 0);
      return *this;
    }
    return trimmed;
  }

  /// The columns' type for `image`: N x C x (KH·KW) x (OH·OW).
  RankedTensorType columnsType(RankedTensorType image) const {
    SmallVector<int64_t> out = outputSize(image);
    return RankedTensorType::get({image.getDimSize(0), image.getDimSize(1),
                                  kernel[0] * kernel[1], out[0] * out[1]},
                                 image.getElementType());
  }
};

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

DenseI64ArrayAttr array(OpBuilder &b, ArrayRef<int64_t> values) {
  return b.getDenseI64ArrayAttr(values);
}
} // namespace

static Value windowColumns(OpBuilder &b, Location loc, const Window &w,
                           Value input, double paddingValue) {
  return Im2colOp::create(b, loc, w.columnsType(typeOf(input)), input,
                          array(b, w.kernel), array(b, w.stride),
                          array(b, w.padding), array(b, w.dilation),
                          b.getF64FloatAttr(paddingValue));
}

static Value windowImage(OpBuilder &b, Location loc, const Window &w,
                         Value columns, RankedTensorType imageType) {
  return Col2imOp::create(b, loc, imageType, columns, array(b, w.kernel),
                          array(b, w.stride), array(b, w.padding),
                          array(b, w.dilation));
}

Value mlir::gacc::buildIm2col(OpBuilder &b, Operation *op, Value input,
                              double paddingValue) {
  return windowColumns(b, op->getLoc(), Window::of(op), input, paddingValue);
}

Value mlir::gacc::buildCol2im(OpBuilder &b, Operation *op, Value columns,
                              RankedTensorType imageType) {
  return windowImage(b, op->getLoc(), Window::of(op), columns, imageType);
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult Im2colOp::verify() {
  Window w = Window::of(*this);
  if (failed(w.verify(*this)))
    return failure();
  RankedTensorType image = getInput().getType();
  if (image.getRank() != 4)
    return emitOpError("needs an N x C x H x W image, got rank ")
           << image.getRank();
  if (w.outputSize(image)[0] < 1 || w.outputSize(image)[1] < 1)
    return emitOpError("the window does not fit the image");
  if (getType() != w.columnsType(image))
    return emitOpError("result must be ")
           << w.columnsType(image) << ", got " << getType();
  return success();
}

LogicalResult Col2imOp::verify() {
  Window w = Window::of(*this);
  if (failed(w.verify(*this)))
    return failure();
  RankedTensorType image = getType();
  if (image.getRank() != 4)
    return emitOpError("needs an N x C x H x W result, got rank ")
           << image.getRank();
  if (w.outputSize(image)[0] < 1 || w.outputSize(image)[1] < 1)
    return emitOpError("the window does not fit the image");
  if (getInput().getType() != w.columnsType(image))
    return emitOpError("input must be ")
           << w.columnsType(image) << ", got " << getInput().getType();
  return success();
}

LogicalResult Conv2dOp::verify() {
  Window w = Window::of(*this);
  if (failed(w.verify(*this)))
    return failure();
  RankedTensorType image = getInput().getType(), weight = getWeight().getType();
  int64_t groups = getGroups();
  if (weight.getRank() != 4)
    return emitOpError("needs an F x C/groups x KH x KW weight, got rank ")
           << weight.getRank();
  if (weight.getElementType() != image.getElementType())
    return emitOpError("input and weight element types differ");
  if (groups < 1 || image.getRank() != 4 ||
      image.getDimSize(1) % groups != 0 || weight.getDimSize(0) % groups != 0)
    return emitOpError("groups (")
           << groups << ") must be positive and divide the input channels ("
           << (image.getRank() == 4 ? image.getDimSize(1) : 0)
           << ") and the output channels (" << weight.getDimSize(0) << ")";
  if (weight.getDimSize(1) * groups != image.getDimSize(1))
    return emitOpError("weight has ")
           << weight.getDimSize(1) << " input channels per group, the input "
           << image.getDimSize(1) / groups;
  return w.verifyImage(*this, image, getType(), weight.getDimSize(0));
}

LogicalResult MaxPool2dOp::verify() {
  Window w = Window::of(*this);
  if (failed(w.verify(*this)))
    return failure();
  RankedTensorType image = getInput().getType();
  return w.verifyImage(*this, image, getType(),
                       image.getRank() == 4 ? image.getDimSize(1) : 0);
}

LogicalResult AvgPool2dOp::verify() {
  Window w = Window::of(*this);
  if (failed(w.verify(*this)))
    return failure();
  RankedTensorType image = getInput().getType();
  return w.verifyImage(*this, image, getType(),
                       image.getRank() == 4 ? image.getDimSize(1) : 0);
}

//===----------------------------------------------------------------------===//
// Expansions on columns
//===----------------------------------------------------------------------===//

namespace {
/// The shapes of a grouped convolution as matmuls: columns [N, G, K', L],
/// weight [G, F/G, K'] with K' = C/G·KH·KW over the taps that reach the
/// image (Window::reachingTaps) and L = OH·OW.
struct ConvShapes {
  Window window;
  /// The first reaching tap in each dimension.
  SmallVector<int64_t> first;
  int64_t n, c, f, g, kk, k, l;
  ConvShapes(Conv2dOp op) {
    RankedTensorType image = op.getInput().getType();
    window = Window::of(op).reachingTaps(image, first);
    n = image.getDimSize(0);
    c = image.getDimSize(1);
    f = op.getWeight().getType().getDimSize(0);
    g = op.getGroups();
    kk = window.kernel[0] * window.kernel[1];
    k = c / g * kk;
    l = op.getType().getDimSize(2) * op.getType().getDimSize(3);
  }

  /// The weight's reaching taps, [F, C/G, KH', KW'].
  SmallVector<int64_t> reachingWeightShape() const {
    return {f, c / g, window.kernel[0], window.kernel[1]};
  }
  bool dropsTaps(Conv2dOp op) const {
    return ArrayRef<int64_t>(reachingWeightShape()) !=
           op.getWeight().getType().getShape();
  }
};
} // namespace

/// The columns of `op`'s input by group, with the examples and output
/// positions as one axis: [G, K', N·L]. A convolution is then one GEMM per
/// group over the whole batch; per example (N GEMMs with L columns each)
/// the BLAS repacked the weight N times, and L is 1 to 64 in a ResNet's
/// late stages.
static Value columnsByGroup(OpBuilder &b, Conv2dOp op, const ConvShapes &s) {
  Location loc = op.getLoc();
  Value columns = buildReshape(
      b, loc, windowColumns(b, loc, s.window, op.getInput(), 0.0),
      {s.n, s.g, s.k, s.l});
  return buildReshape(b, loc, buildTranspose(b, loc, columns, {1, 2, 0, 3}),
                      {s.g, s.k, s.n * s.l});
}

/// The weight's reaching taps as [G, F/G, K'].
static Value weightByGroup(OpBuilder &b, Conv2dOp op, const ConvShapes &s) {
  Location loc = op.getLoc();
  Value weight = op.getWeight();
  if (s.dropsTaps(op))
    weight = buildSlice(b, loc, weight, {0, 0, s.first[0], s.first[1]},
                        s.reachingWeightShape());
  return buildReshape(b, loc, weight, {s.g, s.f / s.g, s.k});
}

Value mlir::gacc::buildConv2dByColumns(OpBuilder &b, Conv2dOp op) {
  Location loc = op.getLoc();
  ConvShapes s(op);
  Value weight = weightByGroup(b, op, s);
  Value columns = columnsByGroup(b, op, s);
  // [G, F/G, N·L] back to N x F x OH x OW.
  Value y = buildReshape(b, loc, buildMatmul(b, loc, weight, columns),
                         {s.g, s.f / s.g, s.n, s.l});
  return buildReshape(b, loc, buildTranspose(b, loc, y, {2, 0, 1, 3}),
                      op.getType().getShape());
}

LogicalResult Conv2dOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  ConvShapes s(*this);
  Value dyByGroup = buildReshape(
      b, loc,
      buildTranspose(b, loc,
                     buildReshape(b, loc, dy, {s.n, s.g, s.f / s.g, s.l}),
                     {1, 2, 0, 3}),
      {s.g, s.f / s.g, s.n * s.l});
  // dx: the columns' gradient Wᵀ·dy [G, K', N·L], as N x C x KH·KW x L and
  // summed back into the image.
  Value dcolumns = buildMatmul(b, loc, weightByGroup(b, *this, s), dyByGroup,
                               /*transposeLhs=*/true);
  dcolumns = buildReshape(b, loc, dcolumns, {s.g, s.c / s.g, s.kk, s.n, s.l});
  dcolumns =
      buildReshape(b, loc, buildTranspose(b, loc, dcolumns, {3, 0, 1, 2, 4}),
                   {s.n, s.c, s.kk, s.l});
  grads.push_back(
      windowImage(b, loc, s.window, dcolumns, getInput().getType()));
  // dW: dy·columnsᵀ, contracting the examples and positions together; the
  // taps that read only padding get zeros.
  Value dweight = buildMatmul(b, loc, dyByGroup, columnsByGroup(b, *this, s),
                              /*transposeLhs=*/false, /*transposeRhs=*/true);
  dweight = buildReshape(b, loc, dweight, s.reachingWeightShape());
  if (s.dropsTaps(*this)) {
    ArrayRef<int64_t> full = getWeight().getType().getShape();
    dweight = buildPad(b, loc, dweight, {0, 0, s.first[0], s.first[1]},
                       {0, 0, full[2] - s.first[0] - s.window.kernel[0],
                        full[3] - s.first[1] - s.window.kernel[1]});
  }
  grads.push_back(dweight);
  return success();
}

/// The window's columns of a pooling op's input, with the window as the
/// reduced axis 2: [N, C, KH·KW, OH·OW].
static Value poolColumns(OpBuilder &b, Operation *op, Value input,
                         double paddingValue) {
  return buildIm2col(b, op, input, paddingValue);
}

/// A pooled result [N, C, 1, L] as the op's N x C x OH x OW.
static Value poolResult(OpBuilder &b, Operation *op, Value reduced) {
  return buildReshape(b, op->getLoc(), reduced,
                      typeOf(op->getResult(0)).getShape());
}

/// The op's result gradient as [N, C, 1, OH·OW].
static Value poolGradient(OpBuilder &b, Operation *op, Value dy) {
  RankedTensorType type = typeOf(dy);
  return buildReshape(b, op->getLoc(), dy,
                      {type.getDimSize(0), type.getDimSize(1), 1,
                       type.getDimSize(2) * type.getDimSize(3)});
}

Value mlir::gacc::buildMaxPool2dByColumns(OpBuilder &b, MaxPool2dOp op) {
  Value columns = poolColumns(b, op, op.getInput(),
                              -std::numeric_limits<double>::infinity());
  return poolResult(b, op,
                    buildReduceMax(b, op.getLoc(), columns, {2}, true));
}

LogicalResult MaxPool2dOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  // All of a window's gradient goes to its first maximal element, as
  // PyTorch's indices say: among the positions equal to the maximum, the
  // one with the smallest window index.
  Location loc = getLoc();
  TensorMath m = tensorMath(b, *this, getInput());
  Value columns = poolColumns(b, *this, getInput(),
                              -std::numeric_limits<double>::infinity());
  int64_t window = typeOf(columns).getDimSize(2);
  Value isMax =
      m.compare(ComparePredicate::eq, columns, m.max(columns, {2}));
  SmallVector<Attribute> positions;
  for (int64_t i = 0; i < window; ++i)
    positions.push_back(b.getFloatAttr(m.element, double(i)));
  auto positionType = RankedTensorType::get({window, 1}, m.element);
  Value position = ConstantOp::create(
      b, loc, DenseElementsAttr::get(positionType, positions));
  Value candidates = m.select(isMax, position, m.c(double(window)));
  Value first = m.neg(m.max(m.neg(candidates), {2}));
  Value isFirst = m.compare(ComparePredicate::eq, position, first);
  Value dcolumns =
      m.select(isFirst, poolGradient(b, *this, dy), m.c(0.0));
  grads.push_back(buildCol2im(b, *this, dcolumns, getInput().getType()));
  return success();
}

Value mlir::gacc::buildAvgPool2dByColumns(OpBuilder &b, AvgPool2dOp op) {
  Value columns = poolColumns(b, op, op.getInput(), 0.0);
  return poolResult(b, op,
                    buildReduceMean(b, op.getLoc(), columns, {2}, true));
}

LogicalResult AvgPool2dOp::buildVJP(OpBuilder &b, Value dy,
                                    SmallVectorImpl<Value> &grads) {
  TensorMath m = tensorMath(b, *this, getInput());
  Window w = Window::of(*this);
  RankedTensorType columns = w.columnsType(getInput().getType());
  Value share = m.div(poolGradient(b, *this, dy),
                      m.c(double(w.kernel[0] * w.kernel[1])));
  Value dcolumns = buildBroadcast(b, getLoc(), share, columns.getShape());
  grads.push_back(buildCol2im(b, *this, dcolumns, getInput().getType()));
  return success();
}

LogicalResult Im2colOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  grads.push_back(buildCol2im(b, *this, dy, getInput().getType()));
  return success();
}

LogicalResult Col2imOp::buildVJP(OpBuilder &b, Value dy,
                                 SmallVectorImpl<Value> &grads) {
  grads.push_back(buildIm2col(b, *this, dy, 0.0));
  return success();
}
