//===- FunctionKey.cpp - structurally identical functions -----------------===//

#include "compiler/target/common/FunctionKey.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

std::string gacc::getStructuralKey(FunctionOpInterface function) {
  StringAttr name = SymbolTable::getSymbolName(function);
  SymbolTable::setSymbolName(function, "f");
  std::string key;
  llvm::raw_string_ostream os(key);
  // Whatever the command line asks of printing (-mlir-elide-elementsattrs-
  // if-larger would make functions with different constants one).
  function->print(
      os, OpPrintingFlags()
              .useLocalScope()
              .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
              .enableDebugInfo(false)
              .printGenericOpForm(false)
              .printNameLocAsPrefix(false)
              .printValueUsers(false)
              .skipRegions(false));
  SymbolTable::setSymbolName(function, name);
  return key;
}
