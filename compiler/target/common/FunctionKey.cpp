//===- FunctionKey.cpp - structurally identical functions -------------------===//

#include "compiler/target/common/FunctionKey.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

std::string gacc::getStructuralKey(FunctionOpInterface function) {
  StringAttr name = SymbolTable::getSymbolName(function);
  SymbolTable::setSymbolName(function, "f");
  std::string key;
  llvm::raw_string_ostream os(key);
  function->print(os, OpPrintingFlags().useLocalScope());
  SymbolTable::setSymbolName(function, name);
  return key;
}
