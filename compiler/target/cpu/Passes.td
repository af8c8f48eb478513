//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//

#ifndef GACC_TARGET_CPU_PASSES_TD
#define GACC_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToCall : Pass<"gacc-cpu-matmul-to-call", "ModuleOp"> {
  let summary = "Run bufferized matmuls through the runtime's BLAS kernel";
  let description = [{
    Replaces each bufferized matmul contraction (the `linalg.generic` that
    `convert-gacc-to-linalg` marks with `gacc.matmul`) of f32 or f64 by a
    call to the runtime's `gacc_cpu_matmul_<type>(A, B, C, transpose_a,
    transpose_b)`, which accumulates `op(A)·op(B)` into `C` over broadcast
    batch dimensions with OpenBLAS. Measured against the generated loops on
    this machine it is 10-50x faster (bench/RESULTS.md). Other element types
    keep the loops.

    ```mlir
    linalg.generic {..., gacc.matmul = {transpose_rhs}} ins(%a, %b : ...) outs(%c : ...)
    // becomes
    %ua = memref.cast %a : memref<64x784xf32> to memref<*xf32>
    ...
    call @gacc_cpu_matmul_f32(%ua, %ub, %uc, %false, %true)
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // GACC_TARGET_CPU_PASSES_TD
