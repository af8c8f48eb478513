//===- Passes.h - CPU target passes -------------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_CPU_PASSES_H
#define GACC_COMPILER_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/target/cpu/Passes.h.inc"

/// On a loop nest function gacc-cpu-split-parallel-nests split: the chunk
/// size gacc-cpu-dispatch-parallel-calls runs its calls in.
inline constexpr StringLiteral kParallelGrainAttrName = "gacc.parallel_grain";

#define GEN_PASS_REGISTRATION
#include "compiler/target/cpu/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CPU_PASSES_H
