//===- FunctionKey.h - structurally identical functions ---------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_COMMON_FUNCTIONKEY_H
#define GACC_COMPILER_TARGET_COMMON_FUNCTIONKEY_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace mlir::gacc {

/// A function's text without its name: equal for structurally identical
/// functions (the same ops, attributes and types, arguments used alike),
/// which can then be one function. What deduplicates the loop nests of the
/// CPU target and the kernels of the CUDA target.
std::string getStructuralKey(FunctionOpInterface function);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_COMMON_FUNCTIONKEY_H
