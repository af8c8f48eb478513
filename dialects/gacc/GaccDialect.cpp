//===- GaccDialect.cpp - the gacc dialect ---------------------------------===//

#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccAttrs.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::gacc;

#include "dialects/gacc/GaccDialect.cpp.inc"

void GaccDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/gacc/GaccOps.cpp.inc"
      >();
  registerAttributes();
}

LogicalResult GaccDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  Attribute value = attribute.getValue();
  auto expect = [&](bool ok, StringRef what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitOpError("attribute '") << name << "' must be " << what;
  };
  if (name == getGradientsAttrHelper().getName()) {
    auto fn = dyn_cast<func::FuncOp>(op);
    auto list = dyn_cast<ArrayAttr>(value);
    if (!fn || !list ||
        !llvm::all_of(list, llvm::IsaPred<FlatSymbolRefAttr>) ||
        list.size() > fn.getNumResults())
      return expect(false, "an array of parameter symbols on a func.func, "
                           "no longer than its results");
    return success();
  }
  if (name == getAutocastPrecisionAttrHelper().getName())
    return expect(isa<func::FuncOp>(op) && isa<PrecisionAttr>(value),
                  "a precision on a func.func");
  // Op overrides: on the ops of a function.
  bool inFunction = op->getParentOfType<FunctionOpInterface>() != nullptr;
  if (name == getAutocastAttrHelper().getName()) {
    auto choice = dyn_cast<StringAttr>(value);
    return expect(inFunction && choice &&
                      (choice == "low" || choice == "f32"),
                  "\"low\" or \"f32\" on an op of a function");
  }
  if (name == getRematAttrHelper().getName()) {
    auto choice = dyn_cast<StringAttr>(value);
    return expect(inFunction && choice &&
                      (choice == "save" || choice == "recompute"),
                  "\"save\" or \"recompute\" on an op of a function");
  }
  if (name == getLoraAttrHelper().getName()) {
    auto param = dyn_cast<ParamOp>(op);
    return expect(param && param.getFrozen() && isa<LoraAttr>(value) &&
                      param.getTensorType().getRank() == 2,
                  "a #gacc.lora on a frozen gacc.param of rank 2");
  }
  if (name == getWeightDecayAttrHelper().getName()) {
    auto decay = dyn_cast<FloatAttr>(value);
    return expect(isa<ParamOp>(op) && decay && decay.getType().isF64() &&
                      decay.getValueAsDouble() >= 0.0,
                  "a non-negative f64 on a gacc.param");
  }
  if (name == getRematActivationBudgetAttrHelper().getName()) {
    auto bytes = dyn_cast<IntegerAttr>(value);
    return expect(isa<TrainStepOp>(op) && bytes && bytes.getInt() >= 0,
                  "a non-negative byte count on a gacc.train_step");
  }
  if (name == getWorkspaceBytesAttrHelper().getName() ||
      name == getUnplannedBytesAttrHelper().getName()) {
    auto bytes = dyn_cast<IntegerAttr>(value);
    // (Kept on the function when it is lowered to the LLVM dialect.)
    return expect(isa<FunctionOpInterface>(op) && bytes &&
                      bytes.getInt() >= 0,
                  "a non-negative byte count on a function");
  }
  if (name == getParallelGrainAttrHelper().getName()) {
    auto grain = dyn_cast<IntegerAttr>(value);
    return expect(isa<FunctionOpInterface>(op) && grain && grain.getInt() > 0,
                  "a positive chunk size on a function");
  }
  if (name == getEmbeddingGradientAttrHelper().getName())
    return expect(
        (isa<MatmulOp>(op) || isa<linalg::ContractionOpInterface>(op)) &&
            isa<UnitAttr>(value),
        "a unit attribute on a gacc.matmul or the contraction it "
        "lowers to");
  if (name == getInitialValuesAttrHelper().getName()) {
    auto file = dyn_cast<StringAttr>(value);
    return expect(isa<ModuleOp>(op) && file && !file.empty(),
                  "a file name on a builtin.module");
  }
  if (name == getArenaAttrHelper().getName())
    return op->emitOpError("'") << name << "' belongs on a function argument";
  return op->emitOpError("has an unknown gacc attribute '") << name << "'";
}

LogicalResult GaccDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned region,
                                                    unsigned argument,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (name != getArenaAttrHelper().getName())
    return op->emitOpError("argument ")
           << argument << " has an unknown gacc attribute '" << name << "'";
  auto role = dyn_cast<StringAttr>(attribute.getValue());
  if (!role || !llvm::is_contained(kArenaRoles, role.getValue()))
    return op->emitOpError("argument ")
           << argument << ": '" << name << "' must be \"state\", \"batch\", \"io\" or \"workspace\"";
  return success();
}
