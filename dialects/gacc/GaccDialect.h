//===- GaccDialect.h - the gacc dialect -------------------------*- C++ -*-===//
#ifndef GACC_DIALECTS_GACC_GACCDIALECT_H
#define GACC_DIALECTS_GACC_GACCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"
// The discardable attributes' helpers name the dialect's attributes.
#include "dialects/gacc/GaccAttrs.h"

#include "dialects/gacc/GaccDialect.h.inc"

namespace mlir::gacc {
/// The arenas an entry point's arguments are, in order (`gacc.arena`).
inline constexpr llvm::StringLiteral kArenaRoles[] = {"state", "batch", "io",
                                                      "workspace"};
} // namespace mlir::gacc

#endif // GACC_DIALECTS_GACC_GACCDIALECT_H
