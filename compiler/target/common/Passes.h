//===- Passes.h - lowering passes every target shares -------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_COMMON_PASSES_H
#define GACC_COMPILER_TARGET_COMMON_PASSES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/target/common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/target/common/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_COMMON_PASSES_H
