//===- Autodiff.cpp - reverse-mode automatic differentiation ----------------===//
//
// Builds the gradient function of each function a gacc.train_step trains
// (its model, or the models of its micro-batches): the forward ops, then the
// backward ops that VJPOpInterface rules create in reverse order, and a
// return of the model's results followed by one gradient per gacc.param.
// The step refers to it (`gradient`, `micro_gradient`, ...).
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_AUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct AutodiffPass : public gacc::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override;
};
} // namespace

/// `x + y` when both are zero pads that place their inputs side by side
/// along one axis (the gradients of `q, k, v = qkv.split(C, dim=2)`): the
/// inputs joined, padded once, instead of zero-filled tensors added.
/// Null otherwise.
static Value joinAdjacentPads(OpBuilder &b, Location loc, Value x, Value y) {
  auto first = x.getDefiningOp<PadOp>(), second = y.getDefiningOp<PadOp>();
  if (!first || !second || first.getType() != second.getType())
    return Value();
  std::optional<int64_t> axis;
  for (int64_t d = 0, rank = first.getType().getRank(); d < rank; ++d)
    if (first.getLow()[d] != second.getLow()[d] ||
        first.getHigh()[d] != second.getHigh()[d]) {
      if (axis)
        return Value();
      axis = d;
    }
  if (!axis)
    return Value();
  if (second.getLow()[*axis] < first.getLow()[*axis])
    std::swap(first, second);
  if (first.getLow()[*axis] + first.getInput().getType().getDimSize(*axis) !=
      second.getLow()[*axis])
    return Value();
  // A join of earlier pads along the same axis is extended, not nested.
  SmallVector<Value> inputs;
  for (PadOp pad : {first, second}) {
    auto joined = pad.getInput().getDefiningOp<ConcatOp>();
    if (joined && static_cast<int64_t>(joined.getAxis()) == *axis &&
        joined->hasOneUse())
      llvm::append_range(inputs, joined.getInputs());
    else
      inputs.push_back(pad.getInput());
  }
  SmallVector<int64_t> low(first.getLow()), high(second.getHigh());
  SmallVector<int64_t> shape(first.getType().getShape());
  shape[*axis] -= low[*axis] + high[*axis];
  Value joined =
      ConcatOp::create(b, loc, first.getType().clone(shape), inputs, *axis);
  if (llvm::all_of(low, [](int64_t n) { return n == 0; }) &&
      llvm::all_of(high, [](int64_t n) { return n == 0; }))
    return joined;
  return buildPad(b, loc, joined, low, high);
}

/// Adds `grad` to the gradient recorded for `value`.
static void accumulate(OpBuilder &b, DenseMap<Value, Value> &adjoints,
                       Value value, Value grad) {
  auto [it, inserted] = adjoints.try_emplace(value, grad);
  if (inserted)
    return;
  // The pads a join replaces may be other values' gradients too (an add's
  // rule passes its result's on): the end's sweep of dead ops erases them.
  Value sum = joinAdjacentPads(b, grad.getLoc(), it->second, grad);
  it->second = sum ? sum : AddOp::create(b, grad.getLoc(), it->second, grad);
}

FailureOr<func::FuncOp> gacc::buildGradientFunction(func::FuncOp model,
                                                    GradientSeed seed,
                                                    int64_t *numRules) {
  auto module = model->getParentOfType<ModuleOp>();
  if (!model.getBody().hasOneBlock())
    return model.emitError("cannot differentiate a model with control flow");
  for (Operation &op : model.getBody().front())
    if (op.getNumRegions() != 0)
      return op.emitError("cannot differentiate through an op with regions");

  // `<model>_grad`, renamed if that is taken: the step refers to it.
  SymbolTable symbols(module);
  OpBuilder b(model);
  b.setInsertionPointAfter(model);
  auto grad = cast<func::FuncOp>(b.clone(*model));
  grad.setSymName(derivedName(model, "grad"));
  symbols.insert(grad);
  Block &body = grad.getBody().front();
  // Without dead forward ops, the forward is exactly what the results are
  // computed from (how gacc-remat finds where the backward starts).
  // (Users before producers; a reverse iterator over the block would point
  // at the op just erased.)
  SmallVector<Operation *> ops = llvm::to_vector(llvm::map_range(
      body.without_terminator(), [](Operation &op) { return &op; }));
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  DenseMap<Value, Value> adjoints;
  b.setInsertionPoint(ret);
  auto lossType = cast<RankedTensorType>(loss.getType());
  switch (seed) {
  case GradientSeed::One:
    adjoints[loss] =
        buildScalar(b, loss.getLoc(), lossType.getElementType(), 1.0);
    break;
  case GradientSeed::LossScale:
    adjoints[loss] = LossScaleOp::create(b, loss.getLoc(), lossType);
    break;
  case GradientSeed::Argument:
    adjoints[loss] = body.addArgument(lossType, loss.getLoc());
    break;
  }

  // The active values: those computed from a trainable parameter. Only
  // they need gradients, so frozen parameters (and inputs) get none, and
  // the work only their gradients would need is erased below.
  SmallVector<ParamOp> trainable = getTrainableParams(module);
  llvm::StringSet<> trainableNames;
  for (ParamOp param : trainable)
    trainableNames.insert(param.getSymName());
  DenseSet<Value> active;
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    bool isActive = isa<LoadOp>(op)
                        ? trainableNames.contains(cast<LoadOp>(op).getName())
                        : llvm::any_of(op.getOperands(), [&](Value v) {
                            return active.contains(v);
                          });
    if (isActive)
      active.insert(op.getResults().begin(), op.getResults().end());
  }

  // Walk the forward ops backwards; every value's gradient is complete when
  // its defining op is reached, because all its users come later.
  for (Operation *op : llvm::reverse(forward)) {
    // Loads are the leaves; ops without operands (constants) end paths.
    if (op->getNumResults() == 0 || op->getNumOperands() == 0 ||
        !active.contains(op->getResult(0)))
      continue;
    // A rule takes the gradient of the op's first result; the others (the
    // running statistics of batch norm) must not reach the loss.
    for (Value result : op->getResults().drop_front())
      if (adjoints.count(result))
        return op->emitOpError("has no derivative for its result #")
               << cast<OpResult>(result).getResultNumber()
               << ", but the loss depends on it";
    auto it = adjoints.find(op->getResult(0));
    if (it == adjoints.end())
      continue;
    auto rule = dyn_cast<VJPOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no derivative rule (VJPOpInterface), but "
                             "the loss depends on it");
    SmallVector<Value> operandGrads;
    if (failed(rule.buildVJP(b, it->second, operandGrads)))
      return failure();
    if (numRules)
      ++*numRules;
    for (auto [operand, operandGrad] :
         llvm::zip_equal(op->getOperands(), operandGrads))
      if (operandGrad && active.contains(operand))
        accumulate(b, adjoints, operand, operandGrad);
  }

  // One gradient per trainable parameter, summed over its loads; zeros if
  // unused.
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Attribute> params;
  for (ParamOp param : trainable) {
    Value total;
    for (LoadOp load : body.getOps<LoadOp>()) {
      auto it = adjoints.find(load.getResult());
      if (load.getName() != param.getSymName() || it == adjoints.end())
        continue;
      total = total ? AddOp::create(b, load.getLoc(), total, it->second)
                    : it->second;
    }
    results.push_back(total ? total
                            : buildSplat(b, param.getLoc(),
                                         param.getTensorType(), 0.0));
    params.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  // A rule builds the gradient of each of its operands; those of inactive
  // operands (a frozen weight's, an input's) are left unused: erased here,
  // so that no weight-gradient matmul of a frozen weight remains.
  ops = llvm::to_vector(llvm::map_range(body.without_terminator(),
                                        [](Operation &op) { return &op; }));
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  grad.setFunctionType(b.getFunctionType(body.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  GaccDialect::GradientsAttrHelper(b.getContext())
      .setAttr(grad, b.getArrayAttr(params));
  return grad;
}

void AutodiffPass::runOnOperation() {
  // Steps that share a model (and its seed) share its gradient function.
  DenseMap<std::pair<func::FuncOp, GradientSeed>, func::FuncOp> gradients;
  int64_t rules = 0;
  auto differentiate = [&](func::FuncOp fn,
                           GradientSeed seed) -> FlatSymbolRefAttr {
    func::FuncOp &grad = gradients[{fn, seed}];
    if (!grad) {
      FailureOr<func::FuncOp> built = buildGradientFunction(fn, seed, &rules);
      if (failed(built))
        return {};
      grad = *built;
    }
    return FlatSymbolRefAttr::get(grad.getSymNameAttr());
  };
  for (TrainStepOp step : getOperation().getOps<TrainStepOp>()) {
    if (step.getGradientAttr() || step.getMicroGradientAttr())
      continue; // differentiated already
    if (func::FuncOp micro = step.getMicroModelFunc()) {
      // Micro-batches (gacc-split-batch): each backward starts from the
      // scale that gacc-accumulate passes in.
      FlatSymbolRefAttr grad = differentiate(micro, GradientSeed::Argument);
      if (!grad)
        return signalPassFailure();
      step.setMicroGradientAttr(grad);
      if (func::FuncOp last = step.getLastMicroModelFunc()) {
        FlatSymbolRefAttr lastGrad =
            differentiate(last, GradientSeed::Argument);
        if (!lastGrad)
          return signalPassFailure();
        step.setLastMicroGradientAttr(lastGrad);
      }
      continue;
    }
    if (step.accumulatesMicroBatches()) {
      step.emitOpError("runs micro-batches, but has no micro_model: run "
                       "gacc-split-batch before gacc-autodiff");
      return signalPassFailure();
    }
    FlatSymbolRefAttr grad = differentiate(
        step.getModelFunc(), step.getEffectiveLossScale()
                                 ? GradientSeed::LossScale
                                 : GradientSeed::One);
    if (!grad)
      return signalPassFailure();
    step.setGradientAttr(grad);
  }
  numRules += rules;
}
