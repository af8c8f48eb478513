//===- Adafactor.cpp - Adafactor, as transformers' Adafactor --------------===//

#include "passes/Zero.h"
#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr llvm::StringLiteral kAverage = "exp_avg";
constexpr llvm::StringLiteral kSquareAverage = "exp_avg_sq";
constexpr llvm::StringLiteral kRowAverage = "exp_avg_sq_row";
constexpr llvm::StringLiteral kColumnAverage = "exp_avg_sq_col";
/// Per-step scalars: the relative step size or the scheduled rate, and the
/// second moments' decay 1 - t^decay_rate (t = step + 1).
constexpr llvm::StringLiteral kStepSize = "step_size";
constexpr llvm::StringLiteral kDecay = "beta2t";

/// Whether the second moments of a parameter are factored (rank ≥ 2; one
/// without elements has nothing to factor).
bool isFactored(RankedTensorType weights) {
  return weights.getRank() >= 2 && weights.getNumElements() > 0;
}

/// transformers' Adafactor._rms: the root mean square of every element of
/// the parameter `x` is of (a shard's padding is zero).
Value rms(UpdateContext &context, Value x) {
  TensorMath &m = context.math;
  int64_t n = context.shard
                  ? context.shard->whole.getNumElements()
                  : cast<RankedTensorType>(x.getType()).getNumElements();
  return m.div(m.sqrt(context.sumOverRanks(m.sumAll(m.mul(x, x)))),
               m.c(std::sqrt(static_cast<double>(n))));
}

Value maximum(TensorMath &m, Value x, Value y) {
  return m.select(m.compare(ComparePredicate::gt, x, y), x, y);
}

/// An exponential average `old·decay + value·complement` (complement =
/// 1 - decay), as `old.mul_(decay).add_(value, alpha=complement)`.
Value decayed(UpdateContext &context, Value old, Value value, Value decay,
              Value complement) {
  TensorMath &m = context.math;
  return context.unlessSkipped(
      m.add(m.mul(old, decay), m.mul(value, complement)), old);
}

/// The factored moments' update of a [..., n, m] parameter from the means
/// of `squares` (grad² + eps1) over its rows and columns; returns the
/// estimate of 1 / sqrt(v) as [..., n, 1] and [..., 1, m] factors.
std::pair<Value, Value> updateFactoredMoments(UpdateContext &context,
                                              RankedTensorType whole,
                                              Value rowMean, Value columnMean,
                                              Value decay, Value complement) {
  TensorMath &m = context.math;
  int64_t rank = whole.getRank();
  Value row = decayed(context, context.readState(kRowAverage), rowMean, decay,
                      complement);
  Value column = decayed(context, context.readState(kColumnAverage), columnMean,
                         decay, complement);
  context.writeState(kRowAverage, row);
  context.writeState(kColumnAverage, column);
  // rsqrt(row / mean(row)) times rsqrt(column).
  ArrayRef<int64_t> shape = whole.getShape();
  SmallVector<int64_t> rowShape(shape), columnShape(shape);
  rowShape.back() = 1;
  columnShape[rank - 2] = 1;
  Value rowFactor = m.rsqrt(m.div(row, m.mean(row, {rank - 2}, true)));
  return {buildReshape(m.b, m.loc, rowFactor, rowShape),
          buildReshape(m.b, m.loc, m.rsqrt(column), columnShape)};
}

/// The factored second moments' update of this rank's flat shard of a
/// [..., n, m] parameter under ZeRO, where each row and column of the whole
/// holds elements of several shards. Each rank sums grad² over the rows
/// (GroupWindow) and, in each matrix, the columns that its shard overlaps;
/// the sums over the ranks give the whole's means, as mean(grad² + eps1) =
/// mean(grad²) + eps1 (the padding's zeros add nothing). The moments are
/// whole on every rank; the shard's factors are read back through the same
/// windows. Returns the update before clipping.
Value shardedFactoredUpdate(UpdateContext &context, AdafactorAttr adafactor,
                            Value grad, Value decay, Value complement) {
  TensorMath &m = context.math;
  OpBuilder &b = m.b;
  Location loc = m.loc;
  const UpdatedShard &shard = *context.shard;
  ArrayRef<int64_t> shape = shard.whole.getShape();
  int64_t n = shape[shape.size() - 2], columns = shape.back();
  int64_t rows = shard.whole.getNumElements() / columns;
  int64_t matrices = rows / n;
  int64_t size = cast<RankedTensorType>(grad.getType()).getDimSize(0);

  GroupWindow rowWindow =
      GroupWindow::ofShard(b, loc, shard.rank, shard.ranks, size, columns);
  // [count, m]: the rows of the shard's squares.
  Value squares = rowWindow.spread(m.mul(grad, grad));
  // What the shard adds to each row's sum, placed among all rows, then to
  // each column's ([m], or [paddedGroups, m] placed among all matrices,
  // flattened): one sum over the ranks for both.
  Value rowPartials = rowWindow.place(m.sum(squares, {1}, false));
  int64_t paddedRows = rowWindow.paddedGroups;
  std::optional<GroupWindow> matrixWindow;
  Value columnPartials;
  if (matrices == 1) {
    columnPartials = m.sum(squares, {0}, false);
  } else {
    matrixWindow.emplace(b, loc, rowWindow.first, rowWindow.maxFirst,
                         rowWindow.count, n);
    Value perMatrix =
        matrixWindow->place(m.sum(matrixWindow->spread(squares), {1}, false));
    columnPartials =
        buildReshape(b, loc, perMatrix, {matrixWindow->paddedGroups * columns});
  }
  int64_t columnElements =
      cast<RankedTensorType>(columnPartials.getType()).getNumElements();
  auto flatSums = RankedTensorType::get(
      {paddedRows + columnElements},
      cast<RankedTensorType>(rowPartials.getType()).getElementType());
  Value sums = context.sumOverRanks(ConcatOp::create(
      b, loc, flatSums, ValueRange{rowPartials, columnPartials}, 0));
  Value rowSums = buildSlice(b, loc, sums, {0}, {rows});
  Value columnSums =
      buildSlice(b, loc, sums, {paddedRows}, {matrices * columns});
  if (matrices > 1)
    columnSums = buildReshape(b, loc, columnSums, {matrices, columns});
  double eps1 = adafactor.getEps1().convertToDouble();
  SmallVector<int64_t> columnShape(shape.drop_back(2));
  columnShape.push_back(columns);
  Value rowMean =
      buildReshape(b, loc, m.add(m.div(rowSums, m.c(columns)), m.c(eps1)),
                   shape.drop_back());
  Value columnMean = buildReshape(
      b, loc, m.add(m.div(columnSums, m.c(n)), m.c(eps1)), columnShape);
  auto [rowFactor, columnFactor] = updateFactoredMoments(
      context, shard.whole, rowMean, columnMean, decay, complement);

  // [count, 1] and [count, m] (or [1, m]) for the shard's rows; zero past
  // the whole's end, where the shard's padding is.
  Value rowFactors = buildReshape(
      b, loc, rowWindow.take(buildReshape(b, loc, rowFactor, {rows})),
      {rowWindow.count, 1});
  Value columnFactors;
  if (!matrixWindow) {
    columnFactors = buildReshape(b, loc, columnFactor, {1, columns});
  } else {
    Value perMatrix = matrixWindow->take(
        buildReshape(b, loc, columnFactor, {matrices, columns}));
    columnFactors = matrixWindow->collect(buildBroadcast(
        b, loc,
        buildReshape(b, loc, perMatrix, {matrixWindow->count, 1, columns}),
        {matrixWindow->count, n, columns}));
  }
  return m.mul(rowWindow.collect(m.mul(rowFactors, columnFactors)), grad);
}

/// transformers.optimization.Adafactor.step, for one parameter.
class Adafactor : public OptimizerOf<AdafactorAttr> {
  SmallVector<Hyperparameter>
  hyperparameters(AdafactorAttr adafactor) const override {
    return {{kLearningRate, adafactor.getLr().convertToDouble()},
            {"eps1", adafactor.getEps1().convertToDouble()},
            {"eps2", adafactor.getEps2().convertToDouble()},
            {"clip_threshold", adafactor.getClipThreshold().convertToDouble()},
            {"decay_rate", adafactor.getDecayRate().convertToDouble()},
            {"beta1", adafactor.getBeta1().convertToDouble()},
            {"weight_decay", adafactor.getWeightDecay().convertToDouble()},
            {"scale_parameter", adafactor.getScaleParameter() ? 1.0 : 0.0},
            {"relative_step", adafactor.getRelativeStep() ? 1.0 : 0.0},
            {"warmup_init", adafactor.getWarmupInit() ? 1.0 : 0.0}};
  }
  SmallVector<StateSlot> stateSlots(AdafactorAttr adafactor,
                                    RankedTensorType whole,
                                    RankedTensorType updated) const override {
    SmallVector<StateSlot> slots;
    if (!adafactor.getBeta1().isZero())
      slots.push_back({kAverage, updated});
    if (!isFactored(whole)) {
      slots.push_back({kSquareAverage, updated});
      return slots;
    }
    // [..., n, m] keeps [..., n] and [..., m], whole on every rank.
    ArrayRef<int64_t> shape = whole.getShape();
    SmallVector<int64_t> column(shape.drop_back(2));
    column.push_back(shape.back());
    slots.push_back({kRowAverage, whole.clone(shape.drop_back()), true});
    slots.push_back({kColumnAverage, whole.clone(column), true});
    return slots;
  }
  SmallVector<StringRef> stepScalars(AdafactorAttr) const override {
    return {kStepSize, kDecay};
  }
  AdafactorAttr
  rebuildImpl(MLIRContext *context, Attribute other, double lr,
              double weightDecay,
              function_ref<InFlightDiagnostic()> emitError) const override {
    // Without an Adafactor to copy, transformers Trainer's `--optim
    // adafactor`: the given learning rate, no relative step nor scaling.
    auto like = dyn_cast_or_null<AdafactorAttr>(other);
    if (!like)
      return AdafactorAttr::getChecked(
          emitError, context, APFloat(lr), APFloat(1e-30), APFloat(1e-3),
          APFloat(1.0), APFloat(-0.8), APFloat(0.0), APFloat(weightDecay),
          /*scaleParameter=*/false, /*relativeStep=*/false,
          /*warmupInit=*/false);
    return AdafactorAttr::getChecked(
        emitError, context, APFloat(lr), like.getEps1(), like.getEps2(),
        like.getClipThreshold(), like.getDecayRate(), like.getBeta1(),
        APFloat(weightDecay), like.getScaleParameter(), like.getRelativeStep(),
        like.getWarmupInit());
  }

  Value update(AdafactorAttr adafactor, UpdateContext &context, Value param,
               Value grad) const override {
    TensorMath &m = context.math;
    RankedTensorType whole = context.shard
                                 ? context.shard->whole
                                 : cast<RankedTensorType>(param.getType());
    int64_t rank = whole.getRank();
    Value decay = context.scalar(kDecay);
    Value complement = m.sub(m.c(1.0), decay);
    double eps1 = adafactor.getEps1().convertToDouble();
    Value update;
    if (isFactored(whole) && context.shard) {
      update =
          shardedFactoredUpdate(context, adafactor, grad, decay, complement);
    } else {
      Value squares = m.add(m.mul(grad, grad), m.c(eps1));
      if (isFactored(whole)) {
        auto [rowFactor, columnFactor] = updateFactoredMoments(
            context, whole, m.mean(squares, {rank - 1}, false),
            m.mean(squares, {rank - 2}, false), decay, complement);
        update = m.mul(m.mul(rowFactor, columnFactor), grad);
      } else {
        Value square = decayed(context, context.readState(kSquareAverage),
                               squares, decay, complement);
        context.writeState(kSquareAverage, square);
        update = m.mul(m.rsqrt(square), grad);
      }
    }
    Value clipped = m.div(rms(context, update),
                          m.c(adafactor.getClipThreshold().convertToDouble()));
    update = m.div(update, maximum(m, clipped, m.c(1.0)));
    Value lr = context.scalar(kStepSize);
    if (adafactor.getScaleParameter())
      lr = m.mul(maximum(m, m.c(adafactor.getEps2().convertToDouble()),
                         rms(context, param)),
                 lr);
    update = m.mul(update, lr);
    if (!adafactor.getBeta1().isZero()) {
      double beta1 = adafactor.getBeta1().convertToDouble();
      Value average = decayed(context, context.readState(kAverage), update,
                              m.c(beta1), m.c(1.0 - beta1));
      context.writeState(kAverage, average);
      update = average;
    }
    Value weights = param;
    if (double weightDecay = context.weightDecay(adafactor.getWeightDecay()))
      weights = m.add(param, m.mul(param, m.mul(m.c(-weightDecay), lr)));
    return context.unlessSkipped(m.sub(weights, update), param);
  }
};
} // namespace

const Optimizer &mlir::gacc::getAdafactorOptimizer() {
  static const Adafactor adafactor;
  return adafactor;
}
