//===- GaccOps.h - gacc operations ------------------------------*- C++ -*-===//
#ifndef GACC_DIALECTS_GACC_GACCOPS_H
#define GACC_DIALECTS_GACC_GACCOPS_H

#include "dialects/gacc/GaccAttrs.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccShapes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/gacc/GaccInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/gacc/GaccOps.h.inc"

namespace mlir::gacc {
/// The parameters of `module` that are not frozen, in declaration order:
/// those with gradients and optimizer state.
SmallVector<ParamOp> getTrainableParams(ModuleOp module);
} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCOPS_H
