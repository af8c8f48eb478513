//===- LoadModel.cpp - parse and verify a gacc model
//------------------------===//

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

gacc::TrainStepOp gacc::findTrainStep(ModuleOp module, StringRef name) {
  SmallVector<gacc::TrainStepOp> steps(module.getOps<gacc::TrainStepOp>());
  if (!name.empty()) {
    for (gacc::TrainStepOp step : steps)
      if (step.getSymName() == name)
        return step;
    module.emitError() << "no gacc.train_step named '" << name << "'";
    return nullptr;
  }
  if (steps.size() == 1)
    return steps.front();
  InFlightDiagnostic diag = module.emitError();
  if (steps.empty()) {
    diag << "the model has no gacc.train_step";
  } else {
    diag << "the model has " << steps.size()
         << " gacc.train_step ops; choose one with --step";
  }
  return nullptr;
}
