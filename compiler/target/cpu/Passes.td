//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//

#ifndef GACC_TARGET_CPU_PASSES_TD
#define GACC_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToCall : Pass<"gacc-cpu-matmul-to-call", "ModuleOp"> {
  let summary = "Run bufferized matmuls through the runtime's BLAS kernel";
  let description = [{
    Replaces each bufferized matmul contraction of f32 or f64 (the
    `linalg.generic` that `convert-gacc-to-linalg` emits for `gacc.matmul`:
    loops `(batch..., m, n, k)`, `C[batch, m, n] += A[batch, m|k, k|m] *
    B[batch, k|n, n|k]`, batch dimensions looped or broadcast) by a call to the runtime's `gacc_cpu_matmul_<type>(A, B, C, transpose_a,
    transpose_b)`, which accumulates `op(A)·op(B)` into `C` over broadcast
    batch dimensions with OpenBLAS. Measured against the generated loops on
    this machine it is 10-50x faster (bench/RESULTS.md). Other element types
    keep the loops.

    ```mlir
    linalg.generic {indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k),
                                     (m, n, k) -> (m, n)], ...}
        ins(%a, %b : ...) outs(%c : ...)
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

def FuseElementwise : Pass<"gacc-cpu-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops, keeping contractions whole";
  let description = [{
    Linalg's elementwise fusion (`linalg-fuse-elementwise-ops`: producers
    with a single use), except into matmul contractions: a matmul that
    absorbed its producers would no longer be a matmul, and
    `gacc-cpu-matmul-to-call` could not give it to BLAS. Chains of
    elementwise ops (optimizer updates, activations and their derivatives)
    still become single loops.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // GACC_TARGET_CPU_PASSES_TD
