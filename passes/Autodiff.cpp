//===- Autodiff.cpp - reverse-mode automatic differentiation ----------------===//
//
// Builds <model>_grad beside each model function: the forward ops, then the
// backward ops that VJPOpInterface rules create in reverse order, and a
// return of the model's results followed by one gradient per gacc.param.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "mlir/IR/IRMapping.h"

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

/// Adds `grad` to the gradient recorded for `value`.
static void accumulate(OpBuilder &b, DenseMap<Value, Value> &adjoints,
                       Value value, Value grad) {
  auto [it, inserted] = adjoints.try_emplace(value, grad);
  if (!inserted)
    it->second = AddOp::create(b, grad.getLoc(), it->second, grad);
}

FailureOr<func::FuncOp> gacc::buildGradientFunction(func::FuncOp model,
                                                    GradientSeed seed,
                                                    int64_t *numRules) {
  auto module = model->getParentOfType<ModuleOp>();
  std::string name = (model.getSymName() + "_grad").str();
  if (module.lookupSymbol(name))
    return model.emitError("cannot differentiate: '")
           << name << "' already exists";
  if (!model.getBody().hasOneBlock())
    return model.emitError("cannot differentiate a model with control flow");
  for (Operation &op : model.getBody().front())
    if (op.getNumRegions() != 0)
      return op.emitError("cannot differentiate through an op with regions");

  OpBuilder b(model);
  b.setInsertionPointAfter(model);
  auto grad = cast<func::FuncOp>(b.clone(*model));
  grad.setSymName(name);
  Block &body = grad.getBody().front();
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

  // Walk the forward ops backwards; every value's gradient is complete when
  // its defining op is reached, because all its users come later.
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    // Loads are the leaves; ops without operands (constants) end paths.
    if (op->getNumResults() != 1 || op->getNumOperands() == 0)
      continue;
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
      if (operandGrad)
        accumulate(b, adjoints, operand, operandGrad);
  }

  // One gradient per parameter, summed over its loads; zeros if unused.
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Attribute> params;
  for (ParamOp param : module.getOps<ParamOp>()) {
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
  grad.setFunctionType(b.getFunctionType(body.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  grad->setAttr(kGradientsAttrName, b.getArrayAttr(params));
  grad->setAttr(kForwardOpsAttrName,
                b.getI64IntegerAttr(static_cast<int64_t>(forward.size())));
  return grad;
}

void AutodiffPass::runOnOperation() {
  llvm::SmallMapVector<func::FuncOp, GradientSeed, 2> models;
  for (TrainStepOp step : getOperation().getOps<TrainStepOp>())
    if (func::FuncOp model = step.getModelFunc())
      models.insert({model, step.getEffectiveLossScale()
                                ? GradientSeed::LossScale
                                : GradientSeed::One});
  int64_t rules = 0;
  for (auto [model, seed] : models)
    if (failed(buildGradientFunction(model, seed, &rules)))
      return signalPassFailure();
  numRules += rules;
}
