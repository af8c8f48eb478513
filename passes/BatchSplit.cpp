//===- BatchSplit.cpp - a model specialized to a micro-batch ----------------===//

#include "passes/BatchSplit.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Rebuilds a model op by op for the micro-batch, tracking which dimension
/// of each value is the batch.
class Splitter {
public:
  Splitter(int64_t batch, int64_t micro) : batch(batch), micro(micro) {}

  /// The batch dimension of `value`, if it has one.
  std::optional<int64_t> batchDim(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt : std::optional(it->second);
  }

  /// Where the batch dimension of the result of `op` lies, or failure (with
  /// a diagnostic) if the op mixes examples.
  FailureOr<int64_t> resultBatchDim(Operation *op);

  const int64_t batch, micro;
  DenseMap<Value, int64_t> dims; ///< Keyed by the values of the old model.
  Value loss;                    ///< The old model's loss.
};

InFlightDiagnostic splitError(Operation *op) {
  return op->emitOpError("mixes examples of the batch, so its result "
                         "depends on how the batch is split into "
                         "micro-batches: ");
}
} // namespace

FailureOr<int64_t> Splitter::resultBatchDim(Operation *op) {
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
          cast<RankedTensorType>(operand.getType()).getDimSize(at) != 1)
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
      .Case([&](ReshapeOp reshape) -> FailureOr<int64_t> {
        ArrayRef<int64_t> in = reshape.getInput().getType().getShape();
        ArrayRef<int64_t> out = reshape.getType().getShape();
        if (*batchDim(reshape.getInput()) != 0 || out.empty() ||
            out[0] != in[0])
          return splitError(op) << "it does not keep the batch as its "
                                   "leading dimension";
        return int64_t(0);
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
            slice.getSizes()[position] != batch)
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
  IRMapping mapping;
  for (Operation &op : model.getBody().front()) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      for (auto [i, input] : llvm::enumerate(inputs)) {
        if (input.getSymName() != load.getName())
          continue;
        splitter.dims[load.getResult()] = 0;
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
        if (i > 0 && splitter.batchDim(value) != std::optional<int64_t>(0)) {
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
    if (!carriesBatch) {
      b.clone(op, mapping);
      continue;
    }
    if (&op == lossOp && isa<CrossEntropyOp, MseLossOp>(op)) {
      // The loss reduces over the examples: a sum over this micro-batch's,
      // or the same reduction over the resized batch.
      Operation *loss = b.clone(op, mapping);
      if (mode == Rebuild::MicroBatch)
        loss->setAttr("reduction", LossReductionAttr::get(
                                       b.getContext(), LossReduction::sum));
      continue;
    }
    FailureOr<int64_t> position = splitter.resultBatchDim(&op);
    if (failed(position)) {
      func.erase();
      return failure();
    }
    Operation *clone = b.clone(op, mapping);
    clone->getResult(0).setType(
        withDim(op.getResult(0).getType(), *position, size));
    if (auto slice = dyn_cast<SliceOp>(clone)) {
      SmallVector<int64_t> sizes(slice.getSizes());
      sizes[*splitter.batchDim(cast<SliceOp>(op).getInput())] = size;
      slice.setSizes(sizes);
    }
    splitter.dims[op.getResult(0)] = *position;
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
