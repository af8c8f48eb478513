//===- GaccDialect.cpp - the gacc dialect
//-----------------------------------===//

#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccAttrs.h"
#include "dialects/gacc/GaccOps.h"

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
