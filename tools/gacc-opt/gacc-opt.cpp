//===- gacc-opt.cpp - the gacc optimizer driver ---------------------------===//
//
// MlirOptMain with the gacc dialect, every gacc pass and the upstream
// dialects and passes the gacc pipelines use.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::gacc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "gacc optimizer driver: gacc dialect and passes\n",
      registry));
}
