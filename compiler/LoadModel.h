//===- LoadModel.h - parse and verify a gacc model --------------*- C++ -*-===//
//
// The front door of every gacc tool and API: read a model file, parse it,
// and verify it. Every failure is a located
// diagnostic on the context's handler; callers only check for null.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_LOADMODEL_H
#define GACC_COMPILER_LOADMODEL_H

#include "dialects/gacc/GaccOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::gacc {

/// Parses and verifies the model in `path` ("-" is stdin). The buffer is
/// added to `sourceMgr` so that diagnostics can quote it. Returns null after
/// reporting an error.
OwningOpRef<ModuleOp> loadModel(llvm::StringRef path,
                                llvm::SourceMgr &sourceMgr,
                                MLIRContext &context);

} // namespace mlir::gacc

#endif // GACC_COMPILER_LOADMODEL_H
