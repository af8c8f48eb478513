//===- LoadModel.cpp - parse and verify a gacc model ----------------------===//

#include "compiler/LoadModel.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

OwningOpRef<ModuleOp> gacc::loadModel(StringRef path,
                                      llvm::SourceMgr &sourceMgr,
                                      MLIRContext &context) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code error = buffer.getError()) {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "cannot read '" << path << "': " << error.message();
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  // parseSourceFile verifies the module after parsing it.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
