//===- GaccAttrs.h - gacc enums and attributes ------------------*- C++ -*-===//
#ifndef GACC_DIALECTS_GACC_GACCATTRS_H
#define GACC_DIALECTS_GACC_GACCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/APFloat.h"
#include <string>

namespace mlir::gacc {
/// The shortest decimal text that parses back to exactly `value`.
std::string formatShortest(const llvm::APFloat &value);
} // namespace mlir::gacc

#include "dialects/gacc/GaccEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/gacc/GaccAttrs.h.inc"

#endif // GACC_DIALECTS_GACC_GACCATTRS_H
