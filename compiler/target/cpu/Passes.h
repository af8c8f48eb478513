//===- Passes.h - CPU target passes -------------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_CPU_PASSES_H
#define GACC_COMPILER_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// The runtime's matmul kernel (gacc_cpu_matmul_<type>) that
/// gacc-cpu-matmul-to-call calls for a contraction of `in` operands into an
/// `out` result, or "" when there is none and the contraction stays a loop
/// nest.
StringRef getCpuMatmulKernel(Type in, Type out);

/// A call at `b`'s insertion point of the runtime's C function `name` with
/// `args`, memrefs passed as unranked descriptors (the rank and a pointer to
/// the ranked one, what the runtime's kernels read); the function is
/// declared in `module` on first use.
func::CallOp createRuntimeCall(OpBuilder &b, Location loc, ModuleOp module,
                               StringRef name, ValueRange args);

#define GEN_PASS_REGISTRATION
#include "compiler/target/cpu/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CPU_PASSES_H
