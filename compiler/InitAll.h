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

namespace mlir::gacc {

/// The gacc dialect and the upstream dialects the pipelines lower through.
void registerAllDialects(DialectRegistry &registry);

/// The gacc passes and the upstream passes the pipelines use.
void registerAllPasses();

} // namespace mlir::gacc

#endif // GACC_COMPILER_INITALL_H
