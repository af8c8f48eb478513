//===- BatchSplit.cpp - a model specialized to a micro-batch ----------------===//

#include "passes/BatchSplit.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Where a value carries the batch: dimension `position`, which holds
/// `outer × batch × inner` elements. A reshape may merge the batch with
/// neighbouring dimensions (nn.MultiheadAttention views [T, B, E] as
/// [T·B, E] and [T, B·H, D]); resizing the batch resizes only its factor.
struct BatchDim {
  int64_t position;
  int64_t inner = 1;
  int64_t outer = 1;
  bool operator==(const BatchDim &other) const {
    return position == other.position && inner == other.inner &&
           outer == other.outer;
  }
  bool operator!=(const BatchDim &other) const { return !(*this == other); }
  /// The size of the dimension for `batch` examples.
  int64_t size(int64_t batch) const { return outer * batch * inner; }
};

/// Rebuilds a model op by op for the micro-batch, tracking which dimension
/// of each value is the batch.
class Splitter {
public:
  Splitter(int64_t batch, int64_t micro) : batch(batch), micro(micro) {}

  /// The batch dimension of `value`, if it has one.
  std::optional<int64_t> batchDim(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt
                            : std::optional(it->second.position);
  }
  std::optional<BatchDim> batchLayout(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt : std::optional(it->second);
  }

  /// Where the batch dimension of the result of `op` lies, or failure (with
  /// a diagnostic) if the op mixes examples.
  FailureOr<BatchDim> resultBatchDim(Operation *op);

  const int64_t batch, micro;
  DenseMap<Value, BatchDim> dims; ///< Keyed by the values of the old model.
  Value loss;                     ///< The old model's loss.

private:
  FailureOr<int64_t> resultPosition(Operation *op);
  FailureOr<BatchDim> reshapedBatchDim(ReshapeOp reshape);
};

/// Whether `value` is a gacc.broadcast that replicates its input along
/// dimension `dim` (a filled tensor such as torch.zeros_like): the same for
/// every example, so a micro-batch takes a smaller broadcast.
bool broadcastAlong(Value value, int64_t dim) {
  auto broadcast = value.getDefiningOp<BroadcastOp>();
  if (!broadcast)
    return false;
  RankedTensorType in = broadcast.getInput().getType();
  int64_t at = dim - (broadcast.getType().getRank() - in.getRank());
  return at < 0 || in.getDimSize(at) == 1;
}

InFlightDiagnostic splitError(Operation *op) {
  return op->emitOpError("mixes examples of the batch, so its result "
                         "depends on how the batch is split into "
                         "micro-batches: ");
}
} // namespace

FailureOr<BatchDim> Splitter::resultBatchDim(Operation *op) {
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return reshapedBatchDim(reshape);
  FailureOr<int64_t> position = resultPosition(op);
  if (failed(position))
    return failure();
  // Every other op keeps the batch's factors: all operands that carry it
  // must agree on them.
  std::optional<BatchDim> layout;
  for (Value operand : op->getOperands()) {
    std::optional<BatchDim> d = batchLayout(operand);
    if (!d)
      continue;
    if (layout && (layout->inner != d->inner || layout->outer != d->outer))
      return splitError(op) << "its operands merge the batch with other "
                               "dimensions differently";
    layout = d;
  }
  return BatchDim{*position, layout->inner, layout->outer};
}

/// The batch through a row-major reshape: the batch factor occupies a range
/// of strides of the flattened tensor; it must lie within one result
/// dimension.
FailureOr<BatchDim> Splitter::reshapedBatchDim(ReshapeOp reshape) {
  ArrayRef<int64_t> in = reshape.getInput().getType().getShape();
  ArrayRef<int64_t> out = reshape.getType().getShape();
  BatchDim from = *batchLayout(reshape.getInput());
  int64_t stride = from.inner; // of the batch factor, in elements
  for (int64_t d = from.position + 1; d < int64_t(in.size()); ++d)
    stride *= in[d];
  int64_t after = 1; // elements of the result dimensions after q
  for (int64_t q = int64_t(out.size()) - 1; q >= 0; --q) {
    if (stride % after == 0 && out[q] % ((stride / after) * batch) == 0)
      return BatchDim{q, stride / after, out[q] / ((stride / after) * batch)};
    after *= out[q];
    if (after > stride)
      break;
  }
  return splitError(reshape) << "it splits the batch across dimensions";
}

FailureOr<int64_t> Splitter::resultPosition(Operation *op) {
  auto rankOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  if (op->getNumResults() == 0)
    return splitError(op) << "it takes a value that carries the batch";
  int64_t resultRank = rankOf(op->getResult(0));
  // Elementwise with NumPy broadcasting: the operands' batch dimensions,
  // aligned at the trailing dimension, must coincide, and no operand
  // without the batch may be batch-sized there.
  auto aligned = [&]() -> FailureOr<int64_t> {
    std::optional<int64_t> position;
    for (Value operand : op->getOperands()) {
      std::optional<int64_t> d = batchDim(operand);
      if (!d)
        continue;
      int64_t at = *d + resultRank - rankOf(operand);
      if (position && *position != at)
        return splitError(op) << "operands carry the batch in different "
                                 "dimensions";
      position = at;
    }
    for (Value operand : op->getOperands()) {
      if (batchDim(operand) || !isa<RankedTensorType>(operand.getType()))
        continue;
      int64_t at = *position - (resultRank - rankOf(operand));
      if (at >= 0 &&
          cast<RankedTensorType>(operand.getType()).getDimSize(at) != 1 &&
          !broadcastAlong(operand, at))
        return splitError(op) << "an operand without the batch is not "
                                 "broadcast along it";
    }
    return *position;
  };
  auto axisCheck = [&](int64_t position,
                       ArrayRef<int64_t> axes) -> FailureOr<int64_t> {
    if (llvm::is_contained(axes, position))
      return splitError(op) << "it reduces or normalizes along the batch "
                               "dimension";
    return position;
  };

  return TypeSwitch<Operation *, FailureOr<int64_t>>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, SelectOp, CompareOp, NegOp, ExpOp,
            LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ReluOp, ErfOp, GeluOp,
            CheckpointOp, CastOp, DropoutOp, BroadcastOp>(
          [&](auto) { return aligned(); })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) -> FailureOr<int64_t> {
        return axisCheck(*batchDim(softmax.getInput()),
                         {softmax.getAxisAttr().getInt()});
      })
      .Case([&](LayerNormOp norm) -> FailureOr<int64_t> {
        if (batchDim(norm.getScale()) || batchDim(norm.getBias()))
          return splitError(op) << "its scale or bias carries the batch";
        int64_t rank = norm.getInput().getType().getRank();
        int64_t first = rank - norm.getScale().getType().getRank();
        int64_t position = *batchDim(norm.getInput());
        if (position >= first)
          return splitError(op) << "it normalizes along the batch dimension";
        return position;
      })
      .Case<Conv2dOp, MaxPool2dOp, AvgPool2dOp, Im2colOp, Col2imOp>(
          [&](Operation *) -> FailureOr<int64_t> {
            // Each example's image on its own: the batch in dimension 0
            // of the input, not in the weight.
            if (op->getNumOperands() > 1 && batchDim(op->getOperand(1)))
              return splitError(op) << "its weight carries the batch";
            std::optional<BatchDim> layout = batchLayout(op->getOperand(0));
            if (!layout || layout->position != 0 || layout->inner != 1)
              return splitError(op) << "its input does not carry the batch "
                                       "in dimension 0";
            return int64_t(0);
          })
      .Case([&](BatchNormOp norm) -> FailureOr<int64_t> {
        // Statistics over each micro-batch: allowed, but not equal to the
        // whole batch's (gacc-split-batch warns). Only the input carries
        // the batch, in dimension 0; the running statistics do not.
        for (Value operand : op->getOperands().drop_front())
          if (batchDim(operand))
            return splitError(op) << "its scale, bias or running statistics "
                                     "carry the batch";
        if (*batchDim(norm.getInput()) != 0)
          return splitError(op) << "its input does not carry the batch in "
                                   "dimension 0";
        int64_t perExample = norm.getValuesPerChannel() / batch;
        if (!norm.getInference() && micro * perExample < 2)
          return op->emitOpError("needs more than 1 value per channel in "
                                 "training, but a micro-batch of ")
                 << micro << " example" << (micro == 1 ? "" : "s") << " has "
                 << micro * perExample;
        return int64_t(0);
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
          [&](auto reduce) -> FailureOr<int64_t> {
            int64_t position = *batchDim(reduce.getInput());
            if (failed(axisCheck(position, reduce.getAxes())))
              return failure();
            if (reduce.getKeepdims())
              return position;
            return position - llvm::count_if(reduce.getAxes(), [&](int64_t a) {
                     return a < position;
                   });
          })
      .Case([&](MatmulOp matmul) -> FailureOr<int64_t> {
        int64_t result = resultRank;
        std::optional<int64_t> position;
        auto place = [&](Value operand, bool transposed,
                         bool isLhs) -> LogicalResult {
          std::optional<int64_t> d = batchDim(operand);
          if (!d)
            return success();
          int64_t rank = rankOf(operand);
          int64_t outer = isLhs ? (transposed ? rank - 1 : rank - 2)
                                : (transposed ? rank - 2 : rank - 1);
          int64_t at;
          if (*d < rank - 2)
            at = *d + result - rank;
          else if (*d == outer)
            at = isLhs ? result - 2 : result - 1;
          else
            return splitError(op) << "it contracts over the batch dimension";
          if (position && *position != at)
            return splitError(op) << "its operands carry the batch in "
                                     "different dimensions";
          position = at;
          return success();
        };
        if (failed(place(matmul.getLhs(), matmul.getTransposeLhs(), true)) ||
            failed(place(matmul.getRhs(), matmul.getTransposeRhs(), false)))
          return failure();
        return *position;
      })
      .Case([&](TransposeOp transpose) -> FailureOr<int64_t> {
        int64_t position = *batchDim(transpose.getInput());
        for (auto [i, d] : llvm::enumerate(transpose.getPermutation()))
          if (d == position)
            return int64_t(i);
        llvm_unreachable("a permutation lists every dimension");
      })
      .Case([&](SliceOp slice) -> FailureOr<int64_t> {
        int64_t position = *batchDim(slice.getInput());
        if (slice.getOffsets()[position] != 0 ||
            slice.getSizes()[position] !=
                slice.getInput().getType().getDimSize(position))
          return splitError(op) << "it slices the batch dimension";
        return position;
      })
      .Case([&](PadOp pad) -> FailureOr<int64_t> {
        int64_t position = *batchDim(pad.getInput());
        if (pad.getLow()[position] != 0 || pad.getHigh()[position] != 0)
          return splitError(op) << "it pads the batch dimension";
        return position;
      })
      .Case([&](ConcatOp concat) -> FailureOr<int64_t> {
        std::optional<int64_t> position;
        for (Value input : concat.getInputs()) {
          std::optional<int64_t> d = batchDim(input);
          if (!d)
            return splitError(op) << "an input does not carry the batch";
          position = d;
        }
        return axisCheck(*position, {concat.getAxisAttr().getInt()});
      })
      .Case<EmbeddingOp, OneHotOp>([&](Operation *) -> FailureOr<int64_t> {
        Value ids = op->getOperand(op->getNumOperands() - 1);
        if (isa<EmbeddingOp>(op) && batchDim(op->getOperand(0)))
          return splitError(op) << "its table carries the batch";
        return *batchDim(ids);
      })
      .Default([&](Operation *) -> FailureOr<int64_t> {
        return splitError(op) << "no rule says how the batch flows through "
                                 "it";
      });
}

/// `type` with dimension `dim` set to `size`.
static RankedTensorType withDim(Type type, int64_t dim, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = size;
  return tensor.clone(shape);
}

namespace {
/// How the rebuilt model differs from the original besides its batch.
enum class Rebuild {
  /// Inputs become arguments; the loss becomes a sum (gacc-accumulate).
  MicroBatch,
  /// The same model over another global batch (--batch).
  Resize,
};
} // namespace

/// Builds `name` after `model`: `model` for batch `size` instead of
/// `batch`, as `mode` says.
static FailureOr<func::FuncOp> rebuildForBatch(func::FuncOp model,
                                               int64_t batch, int64_t size,
                                               StringRef name, Rebuild mode) {
  auto module = model->getParentOfType<ModuleOp>();
  Operation *lossOp = model.getBody().front().getTerminator()->getOperand(0)
                          .getDefiningOp();
  if (mode == Rebuild::MicroBatch && !isa_and_nonnull<CrossEntropyOp, MseLossOp>(lossOp))
    return model.emitError("gradient accumulation needs the loss (the first "
                           "result) to be a gacc.cross_entropy or "
                           "gacc.mse_loss result, so that it can be summed "
                           "over micro-batches and normalized once");

  SmallVector<InputOp> inputs(module.getOps<InputOp>());
  SmallVector<Type> argTypes;
  if (mode == Rebuild::MicroBatch)
    for (InputOp input : inputs)
      argTypes.push_back(withDim(input.getTensorType(), 0, size));

  OpBuilder b(model);
  b.setInsertionPointAfter(model);
  auto func = func::FuncOp::create(b, model.getLoc(), name,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Splitter splitter(batch, size);
  // At the same size the types stay, and there is no batch to split: the
  // ops are copied as they are. (Which dimension carries a batch of one is
  // ambiguous: [1, 256, 768] viewed as [1, 256, 12, 64] may carry it in
  // either of its first two dimensions.)
  bool resizes = size != batch;
  IRMapping mapping;
  for (Operation &op : model.getBody().front()) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      for (auto [i, input] : llvm::enumerate(inputs)) {
        if (input.getSymName() != load.getName())
          continue;
        splitter.dims[load.getResult()] = BatchDim{0};
        if (mode == Rebuild::MicroBatch) {
          mapping.map(load.getResult(), entry->getArgument(i));
        } else {
          Operation *clone = b.clone(op, mapping);
          clone->getResult(0).setType(
              withDim(load.getResult().getType(), 0, size));
        }
      }
      if (!mapping.contains(load.getResult()))
        b.clone(op, mapping);
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        if (resizes && i > 0 &&
            splitter.batchLayout(value) != std::optional(BatchDim{0})) {
          func.erase();
          return model.emitError("result ")
                 << i << " does not carry the batch in dimension 0, so "
                 << "micro-batches cannot be reassembled into it";
        }
        results.push_back(mapping.lookup(value));
      }
      func::ReturnOp::create(b, ret.getLoc(), results);
      func.setFunctionType(b.getFunctionType(
          argTypes, ValueRange(results).getTypes()));
      break;
    }
    bool carriesBatch = llvm::any_of(op.getOperands(), [&](Value v) {
      return splitter.batchDim(v).has_value();
    });
    // Replaces `clone`'s operands that broadcast along the batch (see
    // broadcastAlong; `layout` in `rank` dimensions) by broadcasts of the
    // rebuilt size. False if an operand that does not carry the batch is
    // something else and `strict`.
    auto shrinkBroadcasts = [&](Operation *clone, const BatchDim &layout,
                                int64_t rank, bool strict) {
      for (OpOperand &operand : clone->getOpOperands()) {
        Value old = op.getOperand(operand.getOperandNumber());
        auto type = dyn_cast<RankedTensorType>(old.getType());
        if (splitter.batchDim(old))
          continue;
        int64_t at = layout.position - (rank - (type ? type.getRank() : 0));
        if (!type || at < 0 || type.getDimSize(at) == 1 ||
            !broadcastAlong(old, at)) {
          if (strict)
            return false;
          continue;
        }
        auto broadcast = old.getDefiningOp<BroadcastOp>();
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(clone);
        operand.set(BroadcastOp::create(b, broadcast.getLoc(),
                                        withDim(type, at, layout.size(size)),
                                        mapping.lookup(broadcast.getInput())));
      }
      return true;
    };
    if (&op == lossOp && isa<CrossEntropyOp, MseLossOp>(op) &&
        (carriesBatch || !resizes)) {
      // The loss reduces over the examples: a sum over this micro-batch's,
      // or the same reduction over the resized batch. Its operands are per
      // example, or broadcasts along the batch (torch.zeros_like targets).
      Operation *loss = b.clone(op, mapping);
      if (resizes) {
        Value carrier = *llvm::find_if(op.getOperands(), [&](Value v) {
          return splitter.batchDim(v).has_value();
        });
        if (!shrinkBroadcasts(
                loss, *splitter.batchLayout(carrier),
                cast<RankedTensorType>(carrier.getType()).getRank(),
                /*strict=*/true)) {
          func.erase();
          return op.emitOpError("cannot be split with the batch: an operand "
                                "does not carry it (a loss takes per-example "
                                "operands or broadcasts along the batch, not "
                                "a parameter of the batch's shape)");
        }
      }
      if (mode == Rebuild::MicroBatch)
        loss->setAttr("reduction", LossReductionAttr::get(
                                       b.getContext(), LossReduction::sum));
      continue;
    }
    if (!carriesBatch || !resizes) {
      b.clone(op, mapping);
      continue;
    }
    FailureOr<BatchDim> layout = splitter.resultBatchDim(&op);
    if (failed(layout)) {
      func.erase();
      return failure();
    }
    Operation *clone = b.clone(op, mapping);
    clone->getResult(0).setType(withDim(op.getResult(0).getType(),
                                        layout->position, layout->size(size)));
    // Broadcasts along the batch (see broadcastAlong) shrink with it.
    shrinkBroadcasts(
        clone, *layout,
        cast<RankedTensorType>(clone->getResult(0).getType()).getRank(),
        /*strict=*/false);
    if (auto slice = dyn_cast<SliceOp>(clone)) {
      SmallVector<int64_t> sizes(slice.getSizes());
      sizes[layout->position] = layout->size(size);
      slice.setSizes(sizes);
    }
    splitter.dims[op.getResult(0)] = *layout;
  }
  if (failed(mlir::verify(func))) {
    func.erase();
    return model.emitError("internal error: the rebuilt model does not "
                           "verify");
  }
  return func;
}

FailureOr<func::FuncOp> gacc::specializeToMicroBatch(func::FuncOp model,
                                                     int64_t batch,
                                                     int64_t micro,
                                                     StringRef name) {
  return rebuildForBatch(model, batch, micro, name, Rebuild::MicroBatch);
}

LogicalResult gacc::resizeModelBatch(TrainStepOp step, int64_t batch) {
  if (batch < 1)
    return step.emitError("the batch size must be positive, got ") << batch;
  func::FuncOp model = step.getModelFunc();
  auto module = step->getParentOfType<ModuleOp>();
  std::string name = (model.getSymName() + "_batch_" + Twine(batch)).str();
  FailureOr<func::FuncOp> resized = rebuildForBatch(
      model, step.getRankBatchSize(), batch, name, Rebuild::Resize);
  if (failed(resized))
    return failure();
  // The resized model takes the original's place and name.
  StringAttr modelName = model.getSymNameAttr();
  model.erase();
  resized->setSymNameAttr(modelName);
  for (InputOp input : module.getOps<InputOp>())
    input.setType(withDim(input.getTensorType(), 0, batch));
  return success();
}

LogicalResult gacc::resizeBatch(TrainStepOp step, int64_t batch) {
  auto module = step->getParentOfType<ModuleOp>();
  StringRef modelName = step.getModel();
  int64_t ranks = step.getEffectiveZero().getRanks();
  if (batch % ranks != 0)
    return step.emitError("the batch (")
           << batch << ") must divide evenly over " << ranks << " ranks";
  if (failed(resizeModelBatch(step, batch / ranks)))
    return failure();
  // Every step of this model now trains on the new batch.
  Builder b(step.getContext());
  for (TrainStepOp other : module.getOps<TrainStepOp>()) {
    if (other.getModel() != modelName)
      continue;
    other.setBatchSizeAttr(b.getI64IntegerAttr(batch));
    if (other.getMicroBatchSizeAttr() &&
        other.getEffectiveMicroBatchSize() > other.getRankBatchSize())
      other.setMicroBatchSizeAttr(
          b.getI64IntegerAttr(other.getRankBatchSize()));
  }
  return mlir::verify(module);
}
