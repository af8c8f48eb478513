//===- MixedPrecision.cpp - autocast a model to f16 or bf16 -----------------===//
//
// Places gacc.cast ops so that every op of a model function computes in the
// type of its autocast class (see Passes.td); parameters stay f32 master
// weights and are cast where they are used.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
enum class CastClass { Low, F32, Promote };

/// The discardable attribute that overrides an op's class.
constexpr StringLiteral kAutocastAttrName =
    GaccDialect::AutocastAttrHelper::getNameStr();

struct MixedPrecisionPass
    : public gacc::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;
  void runOnOperation() override;
};

/// Places the casts of one model function.
class Autocaster {
public:
  Autocaster(Type low, int64_t &numCasts) : low(low), numCasts(numCasts) {}

  LogicalResult run(func::FuncOp model) {
    Block &body = model.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        // The model's results keep their declared types.
        for (auto [operand, type] : llvm::zip_equal(
                 ret->getOpOperands(), model.getFunctionType().getResults()))
          operand.set(castTo(operand.get(), elementOf(type), ret));
        continue;
      }
      if (auto load = dyn_cast<LoadOp>(op)) {
        if (isParameter(load))
          weights.insert(load.getResult());
        continue;
      }
      if (auto assign = dyn_cast<AssignOp>(op)) {
        // A frozen parameter keeps its declared type.
        auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(
            assign, assign.getNameAttr());
        if (param)
          assign.getValueMutable().assign(castTo(
              assign.getValue(), param.getTensorType().getElementType(), &op));
        continue;
      }
      CastClass cls = classify(&op);
      // Values that elementwise and shape ops compute from parameters and
      // constants alone (constants, a transposed weight, a mask, a scale)
      // keep their type and adapt to the activations they meet, like
      // parameters do.
      if (cls == CastClass::Promote &&
          llvm::all_of(op.getOperands(),
                       [&](Value v) { return weights.contains(v); })) {
        for (Value result : op.getResults())
          weights.insert(result);
        continue;
      }
      if (Type type = computeType(&op, cls))
        retype(&op, type);
    }
    return success();
  }

private:
  static Type elementOf(Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor ? tensor.getElementType() : Type();
  }
  static FloatType floatElementOf(Value value) {
    return dyn_cast_or_null<FloatType>(elementOf(value.getType()));
  }
  static bool isParameter(LoadOp load) {
    return isa_and_nonnull<ParamOp>(SymbolTable::lookupNearestSymbolFrom(
        load, load.getNameAttr()));
  }

  /// (The dialect verifies gacc.autocast's values.)
  static CastClass classify(Operation *op) {
    if (auto attr = op->getAttrOfType<StringAttr>(kAutocastAttrName))
      return attr.getValue() == "low" ? CastClass::Low : CastClass::F32;
    if (isa<MatmulOp, Conv2dOp>(op))
      return CastClass::Low;
    if (isa<ExpOp, LogOp, RsqrtOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
            BatchNormOp, ReduceSumOp, ReduceMeanOp, CrossEntropyOp, MseLossOp>(
            op))
      return CastClass::F32;
    return CastClass::Promote;
  }

  /// The widest float type among the operands that are activations (not
  /// parameters or constants, which adapt to what they meet); null if none.
  FloatType widestActivation(Operation *op) const {
    FloatType widest;
    for (Value operand : op->getOperands()) {
      FloatType type = floatElementOf(operand);
      if (!type || weights.contains(operand))
        continue;
      if (!widest || type.getWidth() > widest.getWidth())
        widest = type;
    }
    return widest;
  }

  /// The element type `op` computes in; null to leave it as it is.
  Type computeType(Operation *op, CastClass cls) const {
    FloatType widest = widestActivation(op);
    switch (cls) {
    case CastClass::Low:
      return low;
    case CastClass::F32: {
      Type f32 = Float32Type::get(op->getContext());
      return widest && widest.getWidth() > 32 ? widest : f32;
    }
    case CastClass::Promote:
      return widest;
    }
    llvm_unreachable("unknown class");
  }

  /// Casts the float operands of `op` to `type` and gives its float results
  /// that type.
  void retype(Operation *op, Type type) {
    for (OpOperand &operand : op->getOpOperands())
      if (floatElementOf(operand.get()))
        operand.set(castTo(operand.get(), type, op));
    for (Value result : op->getResults())
      if (floatElementOf(result))
        result.setType(cast<RankedTensorType>(result.getType()).clone(type));
  }

  /// `value` as `type` elements, cast before `user`; one cast per value and
  /// type, so a parameter used by several matmuls is cast once.
  Value castTo(Value value, Type type, Operation *user) {
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    if (!tensor || tensor.getElementType() == type ||
        !isa<FloatType>(tensor.getElementType()))
      return value;
    Value &cast = casts[{value, type}];
    if (!cast) {
      OpBuilder b(user);
      cast = CastOp::create(b, value.getLoc(), tensor.clone(type), value);
      if (weights.contains(value))
        weights.insert(cast);
      ++numCasts;
    }
    return cast;
  }

  Type low;
  int64_t &numCasts;
  DenseSet<Value> weights;
  DenseMap<std::pair<Value, Type>, Value> casts;
};
} // namespace

LogicalResult gacc::autocast(func::FuncOp model, Precision precision,
                             int64_t *numCasts) {
  if (precision == Precision::f32 || model->hasAttr(kAutocastDoneAttrName))
    return success();
  Builder b(model.getContext());
  Type low = precision == Precision::f16 ? Type(b.getF16Type())
                                         : Type(b.getBF16Type());
  int64_t casts = 0;
  LogicalResult result = Autocaster(low, casts).run(model);
  if (numCasts)
    *numCasts += casts;
  model->setAttr(kAutocastDoneAttrName,
                 PrecisionAttr::get(model.getContext(), precision));
  return result;
}

/// The parameters `model` (autocast) reads only through casts to `low`.
static llvm::StringSet<> paramsReadAs(ModuleOp module, func::FuncOp model,
                                      Type low) {
  llvm::StringMap<bool> readLow;
  model.walk([&](LoadOp load) {
    // A frozen parameter stays in its declared type, however it is read.
    auto param =
        dyn_cast_or_null<ParamOp>(module.lookupSymbol(load.getNameAttr()));
    if (!param || param.getFrozen())
      return;
    bool onlyCasts = !load->use_empty() &&
                     llvm::all_of(load->getUsers(), [&](Operation *user) {
                       auto cast = dyn_cast<CastOp>(user);
                       return cast && cast.getType().getElementType() == low;
                     });
    auto [it, first] = readLow.try_emplace(load.getName(), onlyCasts);
    if (!first)
      it->second &= onlyCasts;
  });
  llvm::StringSet<> params;
  for (auto &[name, low] : readLow)
    if (low)
      params.insert(name);
  return params;
}

FailureOr<llvm::StringSet<>> gacc::lowPrecisionParams(TrainStepOp step) {
  Precision precision = step.getEffectivePrecision();
  if (precision == Precision::f32)
    return llvm::StringSet<>();
  Builder b(step.getContext());
  Type low = precision == Precision::f16 ? Type(b.getF16Type())
                                         : Type(b.getBF16Type());
  auto module = step->getParentOfType<ModuleOp>();
  func::FuncOp model = step.getModelFunc();
  if (model->hasAttr(kAutocastDoneAttrName))
    return paramsReadAs(module, model, low);
  // Before gacc-mixed-precision: what it will make of the model.
  OwningOpRef<ModuleOp> scratch = module.clone();
  func::FuncOp copy = TrainStepOp::find(*scratch, step.getSymName()).getModelFunc();
  if (failed(autocast(copy, precision)))
    return failure();
  return paramsReadAs(*scratch, copy, low);
}

void MixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<Precision> forced;
  if (!dtype.empty()) {
    forced = symbolizePrecision(dtype);
    if (!forced || *forced == Precision::f32) {
      module.emitError("gacc-mixed-precision: dtype must be f16 or bf16, got '")
          << dtype << "'";
      return signalPassFailure();
    }
  }
  Builder b(module.getContext());
  llvm::SmallSetVector<func::FuncOp, 2> done;
  int64_t casts = 0;
  for (TrainStepOp step : module.getOps<TrainStepOp>()) {
    if (forced)
      step.setPrecisionAttr(PrecisionAttr::get(b.getContext(), *forced));
    func::FuncOp model = step.getModelFunc();
    if (!model || !done.insert(model))
      continue;
    // The functions derived from the model would keep computing in f32.
    if (step.getEffectivePrecision() != Precision::f32 &&
        !model->hasAttr(kAutocastDoneAttrName) &&
        (step.getMicroModelAttr() || step.getGradientAttr() ||
         step.getMicroGradientAttr())) {
      step.emitOpError("is split into micro-batches or differentiated "
                       "already: run gacc-mixed-precision before "
                       "gacc-split-batch and gacc-autodiff");
      return signalPassFailure();
    }
    if (failed(autocast(model, step.getEffectivePrecision(), &casts)))
      return signalPassFailure();
  }
  numCasts += casts;
}
