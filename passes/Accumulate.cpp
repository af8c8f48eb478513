//===- Accumulate.cpp - micro-batched gradient accumulation -----------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "passes/Zero.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_ACCUMULATE
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct AccumulatePass : public gacc::impl::AccumulateBase<AccumulatePass> {
  void runOnOperation() override;
  LogicalResult accumulate(TrainStepOp step);
};

/// The count the loss is normalized by over the whole global batch, as a
/// scalar of the loss type, from this rank's inputs (all of the batch on
/// one rank, its slice on each of `ranks`).
Value globalCount(OpBuilder &b, Operation *lossOp, IRMapping &fullInputs,
                  int64_t ranks) {
  TensorMath m{b, lossOp->getLoc(),
               cast<RankedTensorType>(lossOp->getResult(0).getType())
                   .getElementType()};
  if (auto mse = dyn_cast<MseLossOp>(lossOp))
    return m.c(mse.getReduction() == LossReduction::mean
                   ? mse.getInput().getType().getNumElements() * ranks
                   : 1.0);
  auto ce = cast<CrossEntropyOp>(lossOp);
  switch (ce.getReduction()) {
  case LossReduction::sum:
    return m.c(1.0);
  case LossReduction::mean: {
    RankedTensorType targets = ce.getTargets().getType();
    return m.c(targets.getRank() == 0 ? ranks
                                      : targets.getDimSize(0) * ranks);
  }
  case LossReduction::token_mean: {
    // The non-ignored targets of the whole batch, counted before the loop
    // (on every rank: their numbers differ, unlike the examples').
    // (Reshapes keep the count: F.cross_entropy reads targets.view(-1).)
    Value source = ce.getTargets();
    while (auto reshape = source.getDefiningOp<ReshapeOp>())
      source = reshape.getInput();
    Value targets = fullInputs.lookupOrNull(source);
    if (!targets)
      return Value();
    RankedTensorType logits = ce.getLogits().getType();
    Value count = m.sumAll(
        buildCountedTargets(b, ce.getLoc(), targets, logits.getShape().back(),
                            logits.getElementType(), ce.getIgnoredTarget()));
    return ranks == 1 ? count
                      : AllReduceOp::create(b, ce.getLoc(), count,
                                            CollectiveReduction::sum, ranks)
                            .getResult();
  }
  }
  llvm_unreachable("unknown reduction");
}
} // namespace

/// Clones the body of `grad` (a micro-batch gradient function) at `b`, with
/// its arguments bound to `args`; returns its results. Its dropouts get the
/// micro-batch index `k` as their counter, so each micro-batch draws its
/// own masks (gacc-build-step adds the step). The frozen parameters it
/// assigns are threaded through `state` (name to current value): its loads
/// of them read the value there and its assigns replace it, so that each
/// micro-batch reads what the one before it wrote.
static SmallVector<Value> inlineCall(OpBuilder &b, func::FuncOp grad,
                                     ValueRange args, Value k,
                                     llvm::StringMap<Value> &state) {
  IRMapping mapping;
  mapping.map(grad.getArguments(), args);
  Value counter;
  // Loads read the values the function began with (gacc.assign's rule).
  const llvm::StringMap<Value> start = state;
  for (Operation &op : grad.getBody().front().without_terminator()) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (Value current = start.lookup(load.getName())) {
        mapping.map(load.getResult(), current);
        continue;
      }
    }
    if (auto assign = dyn_cast<AssignOp>(op)) {
      state[assign.getName()] = mapping.lookup(assign.getValue());
      continue;
    }
    Operation *clone = b.clone(op, mapping);
    if (auto dropout = dyn_cast<DropoutOp>(clone)) {
      if (!counter) {
        Location loc = dropout.getLoc();
        OpBuilder nb(dropout);
        Value index =
            arith::IndexCastOp::create(nb, loc, nb.getI64Type(), k);
        counter = tensor::FromElementsOp::create(
            nb, loc, RankedTensorType::get({}, nb.getI64Type()),
            ValueRange{index});
      }
      dropout.getCounterMutable().assign(counter);
    }
  }
  auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
  return llvm::to_vector(llvm::map_range(
      ret.getOperands(), [&](Value v) { return mapping.lookup(v); }));
}

/// The slice of `full` holding `size` examples from `offset`.
static Value sliceBatch(OpBuilder &b, Location loc, Value full, Value offset,
                        int64_t size) {
  auto type = cast<RankedTensorType>(full.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = offset;
  sizes.push_back(b.getIndexAttr(size));
  for (int64_t d = 1; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = size;
  return tensor::ExtractSliceOp::create(b, loc, type.clone(shape), full,
                                        offsets, sizes, strides);
}

/// The `size` rows of every input from row `offset`: a micro-batch's.
static SmallVector<Value> sliceInputs(OpBuilder &b, Location loc,
                                      ValueRange inputs, Value offset,
                                      int64_t size) {
  return llvm::map_to_vector(inputs, [&](Value input) {
    return sliceBatch(b, loc, input, offset, size);
  });
}

/// `rows`, the output of one micro-batch, placed at row `offset` of `acc`,
/// the whole batch's.
static Value insertRows(OpBuilder &b, Location loc, Value rows, Value acc,
                        Value offset) {
  auto type = cast<RankedTensorType>(acc.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = offset;
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(
      b.getContext(), cast<RankedTensorType>(rows.getType()).getShape());
  return tensor::InsertSliceOp::create(b, loc, rows, acc, offsets, sizes,
                                       strides);
}

/// Loads every gacc.input of `module` whole, mapping the model's loads of
/// them to the loaded tensors in `fullInputs`.
static SmallVector<Value> loadInputs(OpBuilder &b, Location loc,
                                     ModuleOp module, func::FuncOp model,
                                     IRMapping &fullInputs) {
  SmallVector<Value> inputs;
  for (InputOp input : module.getOps<InputOp>()) {
    Value loaded = LoadOp::create(b, loc, input.getTensorType(),
                                  input.getSymNameAttr().getValue());
    inputs.push_back(loaded);
    model.walk([&](LoadOp load) {
      if (load.getName() == input.getSymName())
        fullInputs.map(load.getResult(), loaded);
    });
  }
  return inputs;
}

/// What one micro-batch adds to the accumulators: `fn` run on `size` rows
/// from `offset`; the new accumulators.
using MicroBatchBody = function_ref<SmallVector<Value>(
    OpBuilder &b, func::FuncOp fn, Value k, Value offset, int64_t size,
    ValueRange accumulators)>;

/// Folds `body` over a rank's `batch` rows from `init`: an scf.for over the
/// micro-batches of `micro` rows with `fn`, then `tailFn` on the last
/// `batch % micro` rows. Returns the final accumulators.
static SmallVector<Value> foldMicroBatches(OpBuilder &b, Location loc,
                                           int64_t batch, int64_t micro,
                                           func::FuncOp fn, func::FuncOp tailFn,
                                           ValueRange init,
                                           MicroBatchBody body) {
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, batch / micro);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value microSize = arith::ConstantIndexOp::create(b, loc, micro);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, one, init,
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange accumulators) {
        Value offset = arith::MulIOp::create(nb, nloc, k, microSize);
        scf::YieldOp::create(nb, nloc,
                             body(nb, fn, k, offset, micro, accumulators));
      });
  SmallVector<Value> totals(loop.getResults());
  if (int64_t tail = batch % micro) {
    Value offset = arith::ConstantIndexOp::create(b, loc, batch - tail);
    totals = body(b, tailFn, upper, offset, tail, totals);
  }
  return totals;
}

/// `<model>_eval`: the model's loss and outputs over the rank's batch,
/// computed a micro-batch at a time as the gradient is (the loss summed and
/// divided by this rank's count, each output placed in its rows), so that
/// evaluation needs no more memory than a training micro-batch and runs
/// the same loop nests. It assigns nothing: gacc_eval's batch norm reads
/// the running statistics.
static func::FuncOp buildEvalModel(TrainStepOp step, SymbolTable &symbols) {
  ModuleOp module = step->getParentOfType<ModuleOp>();
  func::FuncOp model = step.getModelFunc();
  Location loc = step.getLoc();
  OpBuilder b(model);
  b.setInsertionPointAfter(step.getGradientFunc());
  auto eval = func::FuncOp::create(b, loc, derivedName(model, "eval"),
                                   model.getFunctionType());
  symbols.insert(eval);
  b.setInsertionPointToStart(eval.addEntryBlock());
  IRMapping fullInputs;
  SmallVector<Value> inputs = loadInputs(b, loc, module, model, fullInputs);
  Operation *lossOp =
      model.getBody().front().getTerminator()->getOperand(0).getDefiningOp();
  // This rank's count: gacc_eval reduces the ranks' losses itself.
  Value count = globalCount(b, lossOp, fullInputs, /*ranks=*/1);
  if (!count) {
    eval.erase();
    lossOp->emitOpError("needs its targets to be a gacc.input (or a reshape "
                        "of one) to be counted over the batch");
    return nullptr;
  }
  SmallVector<Value> zeros;
  for (Type type : model.getResultTypes())
    zeros.push_back(buildSplat(b, loc, cast<RankedTensorType>(type), 0.0));
  auto addMicroBatch = [&](OpBuilder &nb, func::FuncOp fn, Value k,
                           Value offset, int64_t size,
                           ValueRange accumulators) {
    llvm::StringMap<Value> assigned; // left out: evaluation assigns nothing
    SmallVector<Value> results = inlineCall(
        nb, fn, sliceInputs(nb, loc, inputs, offset, size), k, assigned);
    SmallVector<Value> next = {
        AddOp::create(nb, loc, accumulators[0], results[0])};
    for (size_t i = 1; i < results.size(); ++i)
      next.push_back(insertRows(nb, loc, results[i], accumulators[i], offset));
    return next;
  };
  SmallVector<Value> results = foldMicroBatches(
      b, loc, step.getRankBatchSize(), step.getEffectiveMicroBatchSize(),
      step.getMicroModelFunc(), step.getLastMicroModelFunc(), zeros,
      addMicroBatch);
  results[0] = DivOp::create(b, loc, results[0], count);
  func::ReturnOp::create(b, loc, results);
  return eval;
}

LogicalResult AccumulatePass::accumulate(TrainStepOp step) {
  ModuleOp module = getOperation();
  func::FuncOp model = step.getModelFunc();
  int64_t batch = step.getRankBatchSize(),
          micro = step.getEffectiveMicroBatchSize();
  int64_t ranks = step.getEffectiveZero().getRanks();
  int64_t full = batch / micro, tail = batch % micro;
  // The gradient functions of a micro-batch and of the smaller last one.
  func::FuncOp microGrad = step.getMicroGradientFunc();
  func::FuncOp tailGrad = step.getLastMicroGradientFunc();
  if (!microGrad || (tail && !tailGrad))
    return step.emitOpError("runs micro-batches, but has no ")
           << (microGrad ? "last_micro_gradient" : "micro_gradient")
           << ": run gacc-split-batch and gacc-autodiff first";
  bool severalMicroBatches = full > 1 || tail;
  if (severalMicroBatches &&
      (!step.getMicroModelFunc() || (tail && !step.getLastMicroModelFunc())))
    return step.emitOpError("runs micro-batches, but has no ")
           << (step.getMicroModelFunc() ? "last_micro_model" : "micro_model")
           << ": run gacc-split-batch first";

  // Loss and outputs over the rank's batch, then the gradients. ZeRO-2 and
  // -3 keep only this rank's shard of each gradient during the step too:
  // every micro-batch's gradients are reduce-scattered into sharded
  // accumulators, as DeepSpeed does (a reduction per micro-batch for 1/N of
  // the gradient memory); the results' types are the shards'.
  size_t numOutputs = model.getNumResults();
  SmallVector<Type> resultTypes(model.getResultTypes());
  llvm::append_range(resultTypes,
                     microGrad.getResultTypes().drop_front(numOutputs));
  bool shardPerMicroBatch = step.reducesGradientsPerMicroBatch();
  if (shardPerMicroBatch)
    for (Type &type : MutableArrayRef<Type>(resultTypes).drop_front(numOutputs))
      type = shardType(cast<RankedTensorType>(type), ranks);

  // The step's gradient function: load the full batch, loop, normalize.
  Location loc = step.getLoc();
  SymbolTable symbols(module);
  OpBuilder b(model);
  b.setInsertionPointAfter(model);
  auto grad = func::FuncOp::create(b, loc, derivedName(model, "grad"),
                                   b.getFunctionType({}, resultTypes));
  symbols.insert(grad);
  GaccDialect::GradientsAttrHelper gradients(b.getContext());
  gradients.setAttr(grad, gradients.getAttr(microGrad));
  b.setInsertionPointToStart(grad.addEntryBlock());

  IRMapping fullInputs; // model values -> full-batch tensors
  SmallVector<Value> inputs = loadInputs(b, loc, module, model, fullInputs);
  Operation *lossOp =
      model.getBody().front().getTerminator()->getOperand(0).getDefiningOp();
  Value count = globalCount(b, lossOp, fullInputs, ranks);
  if (!count)
    return lossOp->emitOpError("needs its targets to be a gacc.input (or "
                               "a reshape of one) to be counted over the "
                               "whole batch");
  // Each micro-batch's backward starts from (loss scale or 1) / count, so
  // that its gradients come out normalized as the full batch's do: with a
  // loss scale, the scaled micro-batch gradients stay as small as the full
  // batch's instead of count times larger (PyTorch's scaler.scale(loss / K)).
  auto lossType = cast<RankedTensorType>(resultTypes[0]);
  Value seed = step.getEffectiveLossScale()
                   ? Value(LossScaleOp::create(b, loc, lossType))
                   : buildScalar(b, loc, lossType.getElementType(), 1.0);
  seed = DivOp::create(b, loc, seed, count);

  // Accumulators: the loss sum, the further outputs (assembled), the
  // gradients (summed); then the frozen parameters the micro-batches
  // assign (batch norm's running statistics), carried from one micro-batch
  // to the next and assigned once after the last.
  SmallVector<Value> zeros;
  for (Type type : resultTypes)
    zeros.push_back(buildSplat(b, loc, cast<RankedTensorType>(type), 0.0));
  llvm::SetVector<StringRef> assignedNames;
  for (func::FuncOp fn : {microGrad, tailGrad})
    if (fn)
      for (AssignOp assign : fn.getBody().front().getOps<AssignOp>())
        assignedNames.insert(assign.getName());
  for (StringRef name : assignedNames) {
    auto param = module.lookupSymbol<ParamOp>(name);
    zeros.push_back(LoadOp::create(b, loc, param.getTensorType(), name));
  }
  size_t numResults = resultTypes.size();
  auto stateOf = [&](ValueRange accumulators) {
    llvm::StringMap<Value> state;
    for (auto [name, value] :
         llvm::zip_equal(assignedNames, accumulators.drop_front(numResults)))
      state[name] = value;
    return state;
  };
  auto appendState = [&](SmallVectorImpl<Value> &values,
                         llvm::StringMap<Value> &state) {
    for (StringRef name : assignedNames)
      values.push_back(state.lookup(name));
  };

  auto addMicroBatch = [&](OpBuilder &nb, func::FuncOp fn, Value k,
                           Value offset, int64_t size,
                           ValueRange accumulators) {
    SmallVector<Value> args = sliceInputs(nb, loc, inputs, offset, size);
    args.push_back(seed);
    llvm::StringMap<Value> state = stateOf(accumulators);
    SmallVector<Value> results = inlineCall(nb, fn, args, k, state);
    SmallVector<Value> next;
    for (auto [i, acc] : llvm::enumerate(accumulators.take_front(numResults))) {
      if (i == 0 || i >= numOutputs) {
        Value value = results[i];
        if (i >= numOutputs && shardPerMicroBatch)
          value = buildReduceScatter(nb, loc, value, ranks);
        next.push_back(AddOp::create(nb, loc, acc, value));
        continue;
      }
      next.push_back(insertRows(nb, loc, results[i], acc, offset));
    }
    appendState(next, state);
    return next;
  };

  SmallVector<Value> totals;
  if (!severalMicroBatches) {
    // One micro-batch (a rank's whole share): no loop, nothing to add to.
    SmallVector<Value> args(inputs);
    args.push_back(seed);
    llvm::StringMap<Value> state = stateOf(zeros);
    totals = inlineCall(b, microGrad, args,
                        arith::ConstantIndexOp::create(b, loc, 0), state);
    appendState(totals, state);
  } else {
    totals = foldMicroBatches(b, loc, batch, micro, microGrad, tailGrad, zeros,
                              addMicroBatch);
  }

  // The frozen parameters' last values. On several ranks, each rank's
  // statistics are of its own examples: rank 0's are every rank's, as
  // DistributedDataParallel broadcasts buffers from rank 0, so that the
  // replicas stay equal.
  for (auto [name, value] : llvm::zip_equal(
           assignedNames, ArrayRef(totals).drop_front(numResults))) {
    Value last = value;
    if (ranks > 1)
      last = CollectiveBroadcastOp::create(b, loc, last, /*root=*/0, ranks);
    AssignOp::create(b, loc, name, last);
  }
  totals.truncate(numResults);

  // The loss is a sum over micro-batches; the gradients are normalized.
  SmallVector<Value> results(totals);
  results[0] = DivOp::create(b, loc, totals[0], count);
  func::ReturnOp::create(b, loc, results);
  step.setGradientAttr(FlatSymbolRefAttr::get(grad.getSymNameAttr()));

  // Evaluation runs the same micro-batches (with one, the model is the
  // same).
  if (severalMicroBatches) {
    func::FuncOp eval = buildEvalModel(step, symbols);
    if (!eval)
      return failure();
    step.setEvalModelAttr(FlatSymbolRefAttr::get(eval.getSymNameAttr()));
  }

  // The micro-batch functions are inlined: gone, unless another step
  // refers to them too.
  SmallVector<func::FuncOp> inlined = {step.getMicroModelFunc(),
                                       step.getLastMicroModelFunc(),
                                       microGrad, tailGrad};
  step.removeMicroModelAttr();
  step.removeLastMicroModelAttr();
  step.removeMicroGradientAttr();
  step.removeLastMicroGradientAttr();
  for (func::FuncOp fn : inlined)
    if (fn && SymbolTable::symbolKnownUseEmpty(fn, module))
      fn.erase();
  return success();
}

void AccumulatePass::runOnOperation() {
  for (TrainStepOp step : getOperation().getOps<TrainStepOp>())
    // On several ranks, one micro-batch is normalized globally too.
    if (step.accumulatesMicroBatches() && !step.getGradientAttr() &&
        failed(accumulate(step)))
      return signalPassFailure();
}
