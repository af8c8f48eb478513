//===- InitAll.h - register every dialect and pass gacc uses ----*- C++ -*-===//
//
// One place that the tools call, as CIRCT's InitAllDialects.h and
// InitAllPasses.h: adding a dialect or a pass registers it everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_INITALL_H
#define GACC_COMPILER_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace gacc {

/// The gacc dialect and the upstream dialects the pipelines lower through.
void registerAllDialects(mlir::DialectRegistry &registry);

/// The gacc passes and the upstream passes the pipelines use.
void registerAllPasses();

} // namespace gacc

#endif // GACC_COMPILER_INITALL_H
