//===- GaccAttrs.h - gacc enums and attributes --------------------*- C++ -*-===//
#ifndef GACC_DIALECTS_GACC_GACCATTRS_H
#define GACC_DIALECTS_GACC_GACCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/gacc/GaccEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/gacc/GaccAttrs.h.inc"

#endif // GACC_DIALECTS_GACC_GACCATTRS_H
