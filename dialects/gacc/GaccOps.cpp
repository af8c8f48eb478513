//===- GaccOps.cpp - gacc operations --------------------------------------===//
//
// Verifiers, type inference and folders. Shape rules that other code reuses
// live in GaccShapes.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gacc;

static bool isFloat(Type type) { return isa<FloatType>(type); }

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  InitKind kind = getInit().getKind();
  bool needsFans =
      kind == InitKind::xavier_uniform || kind == InitKind::xavier_normal ||
      kind == InitKind::kaiming_uniform || kind == InitKind::kaiming_normal;
  if (needsFans && getTensorType().getRank() < 2)
    return emitOpError("initializer '")
           << stringifyInitKind(kind)
           << "' needs at least 2 dimensions to compute fan-in and fan-out";
  return success();
}

LogicalResult InputOp::verify() {
  RankedTensorType type = getTensorType();
  if (type.getRank() < 1)
    return emitOpError("needs a batch dimension (rank at least 1)");
  Type element = type.getElementType();
  switch (getKind()) {
  case InputKind::features:
    if (!isFloat(element))
      return emitOpError("'features' input must have a float element type");
    break;
  case InputKind::labels:
  case InputKind::tokens:
    if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
      return emitOpError("'") << stringifyInputKind(getKind())
                              << "' input must have an i32 or i64 element type";
    break;
  case InputKind::mask:
    if (!element.isInteger(1) && !isFloat(element))
      return emitOpError("'mask' input must have an i1 or float element type");
    break;
  }
  return success();
}

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *decl = symbolTable.lookupNearestSymbolFrom(*this, getNameAttr());
  if (!decl || !isa<ParamOp, InputOp>(decl))
    return emitOpError("'")
           << getName() << "' does not name a gacc.param or gacc.input";
  Type declared = isa<ParamOp>(decl) ? cast<ParamOp>(decl).getType()
                                     : cast<InputOp>(decl).getType();
  if (declared != getType())
    return emitOpError("result type ")
           << getType() << " differs from the declared type " << declared;
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// bitsandbytes' create_dynamic_map(signed, max_exponent_bits=7,
/// total_bits=8): for decades i = 0..6, the midpoints of
/// linspace(0.1, 1, 2^i + 1) (signed; 2^(i+1) + 1 unsigned) times
/// 10^(i-6), negated too when signed; then 0 and 1; sorted. Computed in
/// double and rounded to f32 (bitsandbytes rounds its f32 linspace).
static SmallVector<float> buildDynamicMap(bool isSigned) {
  SmallVector<float> values;
  for (int decade = 0; decade < 7; ++decade) {
    int count = isSigned ? 1 << decade : 2 << decade;
    double scale = std::pow(10.0, decade - 6);
    for (int j = 0; j < count; ++j) {
      double mean = 0.1 + 0.9 * (j + 0.5) / count;
      values.push_back(static_cast<float>(scale * mean));
      if (isSigned)
        values.push_back(static_cast<float>(-scale * mean));
    }
  }
  values.push_back(0.0f);
  values.push_back(1.0f);
  llvm::sort(values);
  assert(values.size() == 256 && "the dynamic map has 256 values");
  return values;
}

ArrayRef<float> QuantizeDynamicOp::getDynamicMap(bool isSigned) {
  static const SmallVector<float> signedMap = buildDynamicMap(true);
  static const SmallVector<float> unsignedMap = buildDynamicMap(false);
  return isSigned ? signedMap : unsignedMap;
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A round trip through a type that holds every value of the first is exact.
  auto semantics = [](Value value) -> const llvm::fltSemantics & {
    return cast<FloatType>(getElementTypeOrSelf(value.getType()))
        .getFloatSemantics();
  };
  if (auto inner = getInput().getDefiningOp<CastOp>())
    if (inner.getInput().getType() == getType() &&
        APFloat::isRepresentableBy(semantics(inner.getInput()),
                                   semantics(getInput())))
      return inner.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise and shape
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  return inferBroadcastResult(location,
                              {adaptor.getCondition().getType(),
                               adaptor.getTrueValue().getType(),
                               adaptor.getFalseValue().getType()},
                              results);
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  // (Inference runs as the op is parsed, before its operand types are
  // verified; masks would leave it no element type.)
  for (Type operand : {adaptor.getLhs().getType(), adaptor.getRhs().getType()})
    if (getElementTypeOrSelf(operand).isInteger(1))
      return emitOptionalError(location,
                               "gacc.compare compares floats or "
                               "integer ids, not masks: ",
                               operand);
  if (failed(inferBroadcastResult(
          location, {adaptor.getLhs().getType(), adaptor.getRhs().getType()},
          results)))
    return failure();
  results[0] =
      cast<RankedTensorType>(results[0]).clone(IntegerType::get(context, 1));
  return success();
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError("rate must be in [0, 1), got ")
           << formatShortest(getRate());
  return success();
}

/// Fails unless the op's declared result type is `expected`.
static LogicalResult verifyResultType(Operation *op, Type expected) {
  if (op->getResult(0).getType() != expected)
    return op->emitOpError("result type ")
           << op->getResult(0).getType() << " differs from the expected "
           << expected;
  return success();
}

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOpError("operands must have rank at least 2, got ")
           << lhs.getRank() << " and " << rhs.getRank();
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ: ")
           << lhs.getElementType() << " vs " << rhs.getElementType();
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  int64_t m = a[a.size() - 2], k = a.back();
  if (getTransposeLhs())
    std::swap(m, k);
  int64_t kr = b[b.size() - 2], n = b.back();
  if (getTransposeRhs())
    std::swap(kr, n);
  if (k != kr)
    return emitOpError("contracting dimensions differ: ") << k << " vs " << kr;
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (!batch)
    return emitOpError("batch dimensions are not broadcastable");
  SmallVector<int64_t> shape = *batch;
  shape.append({m, n});
  return verifyResultType(*this,
                          RankedTensorType::get(shape, lhs.getElementType()));
}

template <typename ReduceOp> static LogicalResult verifyReduceOp(ReduceOp op) {
  RankedTensorType input = op.getInput().getType();
  if (failed(verifyAxes(op.getAxes(), input.getRank(),
                        [&] { return op.emitOpError(); })))
    return failure();
  return verifyResultType(
      op, RankedTensorType::get(
              reducedShape(input.getShape(), op.getAxes(), op.getKeepdims()),
              input.getElementType()));
}

LogicalResult BroadcastOp::verify() {
  if (getInput().getType().getElementType() != getType().getElementType())
    return emitOpError("element type must not change");
  if (!isBroadcastableTo(getInput().getType().getShape(), getType().getShape()))
    return emitOpError("cannot broadcast ")
           << getInput().getType() << " to " << getType();
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : nullptr;
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type must not change");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? getInput() : nullptr;
}

LogicalResult TransposeOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOpError("permutation has ")
           << perm.size() << " entries for rank " << input.getRank();
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= input.getRank() || seen[dim])
      return emitOpError("permutation must list each dimension exactly once");
    seen[dim] = true;
    shape.push_back(input.getDimSize(dim));
  }
  return verifyResultType(*this,
                          RankedTensorType::get(shape, input.getElementType()));
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, dim] : llvm::enumerate(getPermutation()))
    if (static_cast<int64_t>(i) != dim)
      return nullptr;
  return getInput();
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes();
  if (static_cast<int64_t>(offsets.size()) != input.getRank() ||
      static_cast<int64_t>(sizes.size()) != input.getRank())
    return emitOpError("expects one offset and one size per dimension (rank ")
           << input.getRank() << ")";
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (offsets[d] < 0 || sizes[d] < 1 ||
        offsets[d] + sizes[d] > input.getDimSize(d))
      return emitOpError("slice [")
             << offsets[d] << ", " << offsets[d] + sizes[d] << ") of dimension "
             << d << " is out of bounds [0, " << input.getDimSize(d) << ")";
  }
  return verifyResultType(*this,
                          RankedTensorType::get(sizes, input.getElementType()));
}

LogicalResult PadOp::verify() {
  RankedTensorType input = getInput().getType();
  if (static_cast<int64_t>(getLow().size()) != input.getRank() ||
      static_cast<int64_t>(getHigh().size()) != input.getRank())
    return emitOpError("expects one low and one high padding per dimension "
                       "(rank ")
           << input.getRank() << ")";
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (getLow()[d] < 0 || getHigh()[d] < 0)
      return emitOpError("padding must be non-negative");
    shape[d] += getLow()[d] + getHigh()[d];
  }
  return verifyResultType(*this,
                          RankedTensorType::get(shape, input.getElementType()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  auto first = cast<RankedTensorType>(getInputs().front().getType());
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= first.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << first.getRank();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitOpError("inputs must share rank and element type");
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && type.getDimSize(d) != first.getDimSize(d))
        return emitOpError("inputs differ in dimension ")
               << d << ", which is not the concatenation axis";
    shape[axis] += type.getDimSize(axis);
  }
  return verifyResultType(*this,
                          RankedTensorType::get(shape, first.getElementType()));
}

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

template <typename SoftmaxLike>
static LogicalResult verifySoftmaxAxis(SoftmaxLike op) {
  int64_t rank = op.getInput().getType().getRank();
  int64_t axis = op.getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return op.emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> normalized = getScale().getType().getShape();
  if (normalized.empty() || normalized.size() > input.size() ||
      input.take_back(normalized.size()) != normalized)
    return emitOpError("scale and bias shape must equal the trailing "
                       "dimensions of the input");
  if (getScale().getType().getElementType() !=
      getInput().getType().getElementType())
    return emitOpError("scale and input element types differ");
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive");
  return success();
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType();
  if (table.getRank() != 2)
    return emitOpError("table must have rank 2, got ") << table.getRank();
  SmallVector<int64_t> shape(getIndices().getType().getShape());
  shape.push_back(table.getDimSize(1));
  return verifyResultType(*this,
                          RankedTensorType::get(shape, table.getElementType()));
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> ids = getIndices().getType().getShape();
  ArrayRef<int64_t> result = getType().getShape();
  if (result.size() != ids.size() + 1 || result.drop_back() != ids)
    return emitOpError("result shape must be the ids shape plus a class "
                       "dimension");
  return success();
}

LogicalResult CausalMaskOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("needs rank at least 2 ([..., queries, keys])");
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> location,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  auto logits = cast<RankedTensorType>(adaptor.getLogits().getType());
  auto targets = cast<RankedTensorType>(adaptor.getTargets().getType());
  if (logits.getRank() < 1)
    return emitOptionalError(location, "logits need a class dimension");
  if (targets.getShape() != logits.getShape().drop_back())
    return emitOptionalError(location, "targets shape ", targets,
                             " must be the logits shape without its class "
                             "dimension ",
                             logits);
  results.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  if (adaptor.getReduction() == LossReduction::token_mean)
    return emitOptionalError(location,
                             "'token_mean' applies only to cross_entropy");
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  results.push_back(RankedTensorType::get({}, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// TrainStepOp
//===----------------------------------------------------------------------===//

TrainStepOp TrainStepOp::find(ModuleOp module, StringRef name) {
  SmallVector<TrainStepOp> steps(module.getOps<TrainStepOp>());
  if (!name.empty()) {
    for (TrainStepOp step : steps)
      if (step.getSymName() == name)
        return step;
    module.emitError() << "no gacc.train_step named '" << name << "'";
    return nullptr;
  }
  if (steps.size() == 1)
    return steps.front();
  InFlightDiagnostic diag = module.emitError();
  if (steps.empty()) {
    diag << "the model has no gacc.train_step";
  } else {
    diag << "the model has " << steps.size()
         << " gacc.train_step ops; choose one with --step";
  }
  return nullptr;
}

func::FuncOp TrainStepOp::lookupFunc(FlatSymbolRefAttr ref) {
  return ref ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(*this, ref)
             : func::FuncOp();
}

RematAttr TrainStepOp::getEffectiveRemat() {
  if (std::optional<RematAttr> remat = getRemat())
    return *remat;
  return RematAttr::get(getContext(), RematPolicy::none, 0);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// `sharded` is `full` with dimension `dim` divided by `ranks`.
static LogicalResult verifySharding(Operation *op, RankedTensorType full,
                                    RankedTensorType sharded, int64_t dim,
                                    int64_t ranks) {
  Type in = op->getOperand(0).getType(), out = op->getResult(0).getType();
  if (getElementTypeOrSelf(in) != getElementTypeOrSelf(out))
    return op->emitOpError("result element type ")
           << getElementTypeOrSelf(out) << " differs from the operand's ("
           << getElementTypeOrSelf(in) << ")";
  if (dim >= full.getRank())
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << full.getRank();
  if (full.getDimSize(dim) % ranks != 0)
    return op->emitOpError("dimension ")
           << dim << " of size " << full.getDimSize(dim)
           << " does not split evenly over " << ranks << " ranks";
  SmallVector<int64_t> expected(full.getShape());
  expected[dim] /= ranks;
  if (sharded.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("expected the shard type ")
           << full.clone(expected) << ", got " << sharded;
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifySharding(*this, getInput().getType(), getType(), getDim(),
                        getRanks());
}

LogicalResult AllGatherOp::verify() {
  return verifySharding(*this, getType(), getInput().getType(), getDim(),
                        getRanks());
}

LogicalResult CollectiveBroadcastOp::verify() {
  if (getRoot() >= getRanks())
    return emitOpError("root ")
           << getRoot() << " is not one of the " << getRanks() << " ranks";
  return success();
}

LossScaleAttr TrainStepOp::getEffectiveLossScale() {
  if (std::optional<LossScaleAttr> lossScale = getLossScale())
    return *lossScale;
  if (getEffectivePrecision() == Precision::f16)
    return LossScaleAttr::get(getContext(), APFloat(65536.0), APFloat(2.0),
                              APFloat(0.5), 2000);
  return {};
}

ZeroAttr TrainStepOp::getEffectiveZero() {
  if (std::optional<ZeroAttr> zero = getZero())
    return *zero;
  return ZeroAttr::get(getContext(), 0, 1);
}

Attribute TrainStepOp::getEffectiveSchedule() {
  if (std::optional<Attribute> schedule = getSchedule())
    return *schedule;
  return ConstantScheduleAttr::get(getContext());
}

double TrainStepOp::getBaseLearningRate() {
  return TypeSwitch<Attribute, double>(getOptimizer())
      .Case<SGDAttr, AdamWAttr, AdamAttr, AdamW8bitAttr, AdafactorAttr>(
          [](auto opt) { return opt.getLr().convertToDouble(); })
      .Default([](Attribute) { return 0.0; });
}

LogicalResult TrainStepOp::verify() {
  // I64Attr accessors are unsigned; read the signed values.
  int64_t batch = getBatchSizeAttr().getInt();
  if (batch < 1)
    return emitOpError("batch_size must be positive, got ") << batch;
  uint64_t ranks = getEffectiveZero().getRanks();
  if (getBatchSize() % ranks != 0)
    return emitOpError("batch_size (")
           << batch << ") must divide evenly over " << ranks << " ZeRO ranks";
  if (IntegerAttr microAttr = getMicroBatchSizeAttr()) {
    int64_t micro = microAttr.getInt();
    if (micro < 1)
      return emitOpError("micro_batch_size must be positive, got ") << micro;
    if (micro > getRankBatchSize())
      return emitOpError("micro_batch_size (")
             << micro << ") exceeds "
             << (ranks == 1 ? "batch_size" : "the batch of each rank") << " ("
             << getRankBatchSize() << ")";
  }
  if (std::optional<APFloat> clip = getGradClipNorm())
    if (!(clip->convertToDouble() > 0.0))
      return emitOpError("grad_clip_norm must be positive");
  std::optional<APFloat> minLr =
      TypeSwitch<Attribute, std::optional<APFloat>>(getEffectiveSchedule())
          .Case<WarmupCosineScheduleAttr, WarmupPolynomialScheduleAttr>(
              [](auto schedule) { return schedule.getMinLr(); })
          .Default([](Attribute) { return std::nullopt; });
  if (minLr && minLr->convertToDouble() > getBaseLearningRate())
    return emitOpError("schedule min_lr (")
           << formatShortest(*minLr) << ") exceeds the optimizer's lr ("
           << formatShortest(APFloat(getBaseLearningRate())) << ")";
  return success();
}

LogicalResult
TrainStepOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto model =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getModelAttr());
  if (!model)
    return emitOpError("model '") << getModel() << "' is not a func.func";
  // The derived functions: each reference names a func.func; a gradient
  // function lists its parameters; a last micro-batch comes with the others.
  if (getLastMicroModelAttr() && !getMicroModelAttr())
    return emitOpError("has a last_micro_model but no micro_model");
  if (getLastMicroGradientAttr() && !getMicroGradientAttr())
    return emitOpError("has a last_micro_gradient but no micro_gradient");
  if ((getMicroModelAttr() || getMicroGradientAttr()) &&
      !accumulatesMicroBatches())
    return emitOpError("refers to micro-batch functions, but runs no "
                       "micro-batches");
  // A micro-batch model takes its rows of every input (0: not a model).
  int64_t micro = getEffectiveMicroBatchSize();
  int64_t lastRows = getRankBatchSize() % micro;
  for (auto [role, ref, gradient, rows] :
       {std::tuple{"micro_model", getMicroModelAttr(), false, micro},
        std::tuple{"last_micro_model", getLastMicroModelAttr(), false,
                   lastRows},
        std::tuple{"micro_gradient", getMicroGradientAttr(), true, int64_t{0}},
        std::tuple{"last_micro_gradient", getLastMicroGradientAttr(), true,
                   int64_t{0}},
        std::tuple{"gradient", getGradientAttr(), true, int64_t{0}}}) {
    if (!ref)
      continue;
    auto fn = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, ref);
    if (!fn)
      return emitOpError(role)
             << " '" << ref.getValue() << "' is not a func.func";
    if (!gradient) {
      for (Type type : fn.getArgumentTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            !tensor || tensor.getRank() == 0 || tensor.getDimSize(0) != rows)
          return emitOpError(role)
                 << " '" << ref.getValue() << "' must take the " << rows
                 << " rows of a micro-batch of every input, got " << type;
      continue;
    }
    auto *dialect = cast<GaccDialect>((*this)->getDialect());
    ArrayAttr params = dialect->getGradientsAttrHelper().getAttr(fn);
    if (!params)
      return emitOpError(role) << " '" << ref.getValue() << "' has no '"
                               << GaccDialect::GradientsAttrHelper::getNameStr()
                               << "': not a gradient function";
    for (auto param : params.getAsRange<FlatSymbolRefAttr>()) {
      auto decl = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, param);
      if (!decl)
        return emitOpError(role)
               << " '" << ref.getValue() << "' lists the gradient of '"
               << param.getValue() << "', not a gacc.param";
      if (decl.getFrozen())
        return emitOpError(role)
               << " '" << ref.getValue() << "' lists the gradient of '"
               << param.getValue() << "', a frozen gacc.param";
    }
  }
  if (FlatSymbolRefAttr ref = getEvalModelAttr()) {
    auto eval = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, ref);
    if (!eval)
      return emitOpError("eval_model '")
             << ref.getValue() << "' is not a func.func";
    if (eval.getFunctionType() != model.getFunctionType())
      return emitOpError("eval_model '")
             << ref.getValue() << "' must have the type of model '"
             << getModel() << "', " << model.getFunctionType() << ", got "
             << eval.getFunctionType();
  }
  if (model.getNumArguments() != 0)
    return emitOpError("model '")
           << getModel()
           << "' must take no arguments: it reads parameters and inputs "
              "with gacc.load";
  auto loss = model.getNumResults() == 0
                  ? RankedTensorType()
                  : dyn_cast<RankedTensorType>(model.getResultTypes()[0]);
  if (!loss || loss.getRank() != 0 || !isFloat(loss.getElementType()))
    return emitOpError("model '")
           << getModel() << "' must return the scalar float loss first";

  bool readsParam = false;
  model.walk([&](LoadOp load) {
    readsParam |= isa_and_nonnull<ParamOp>(
        symbolTable.lookupNearestSymbolFrom(load, load.getNameAttr()));
  });
  if (!readsParam)
    return emitOpError("model '")
           << getModel() << "' reads no gacc.param: nothing to train";

  Operation *module = (*this)->getParentOp();
  // Each rank's inputs hold its share of the batch.
  for (auto input : module->getRegion(0).getOps<InputOp>())
    if (input.getTensorType().getDimSize(0) != getRankBatchSize()) {
      InFlightDiagnostic diag = emitOpError("batch_size (") << getBatchSize();
      if (getEffectiveZero().getRanks() != 1)
        diag << ") over " << getEffectiveZero().getRanks() << " ranks ("
             << getRankBatchSize() << " each";
      return diag << ") differs from dimension 0 of input '"
                  << input.getSymName() << "' ("
                  << input.getTensorType().getDimSize(0) << ")";
    }
  return success();
}

#include "dialects/gacc/GaccInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/gacc/GaccOps.cpp.inc"
