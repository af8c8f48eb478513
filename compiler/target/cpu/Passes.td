//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//

#ifndef GACC_TARGET_CPU_PASSES_TD
#define GACC_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToCall : Pass<"gacc-cpu-matmul-to-call", "ModuleOp"> {
  let summary = "Run bufferized matmuls through the runtime's BLAS kernel";
  let description = [{
    Replaces each bufferized matmul contraction (the `linalg.generic` that
    `convert-gacc-to-linalg` emits for `gacc.matmul`: loops
    `(batch..., m, n, k)`, `C[batch, m, n] += A[batch, m|k, k|m] *
    B[batch, k|n, n|k]`, batch dimensions looped or broadcast) of f32 or f64,
    or of f16 or bf16 operands accumulating into f32, by a call to the
    runtime's `gacc_cpu_matmul_<type>(A, B, C, transpose_a, transpose_b)`
    (`<type>`: `f32`, `f64`, `f16_f32`, `bf16_f32`), which accumulates
    `op(A)·op(B)` into `C` over broadcast batch dimensions with OpenBLAS
    (16-bit operands are widened panel by panel, so no full f32 copy
    exists). Measured against the generated loops on this machine it is
    10-50x faster (bench/RESULTS.md). Other element types keep the loops.

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

def AccumulateInPlace : Pass<"gacc-cpu-accumulate-in-place"> {
  let summary = "Update loop-carried sums in place";
  let description = [{
    Gradient accumulation loops (`gacc-accumulate`) carry sums in their
    `scf.for` iteration arguments. Left alone, every iteration computes the
    new sum into a fresh buffer, yields it, and frees the old one: a loop-
    carried allocation the memory plan cannot place and a full pass over
    the accumulator per micro-batch. This pass makes each sum update its
    iteration argument in place, so that bufferization yields the same
    buffer every iteration:

    * `acc + A·B`, where the matmul starts from zeros, becomes a matmul
      that accumulates into `acc` (BLAS with beta = 1): the gradient of a
      weight is added without a temporary;
    * any other elementwise update that reads `acc` at the position it
      writes (bias gradients, the loss sum) writes into `acc`;
    * splat constants that initialize iteration arguments (the zeroed
      accumulators) become `linalg.fill`, which bufferizes to a writable
      buffer instead of a copy of a global.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<256x784xf32>)
    %g = linalg.generic {...matmul...} ins(%a, %b : ...) outs(%z : ...)
    %s = linalg.generic {...addf...} ins(%acc, %g : ...) outs(%e2 : ...)
    scf.yield %s
    // becomes
    %s = linalg.generic {...matmul...} ins(%a, %b : ...) outs(%acc : ...)
    scf.yield %s
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitFills : Pass<"gacc-cpu-split-fills"> {
  let summary = "Give each op that accumulates into a fill its own fill";
  let description = [{
    CSE merges identical `linalg.fill`s of empty tensors, such as the zeros
    two matmuls accumulate into. Bufferization then writes the first user
    in place and gives every other one a copy of the filled buffer. Filling
    again is cheaper than filling once and copying: when a fill has several
    uses, this pass clones it (and its empty tensor) right before each
    destination-passing user.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x256xf32>)
    %a = linalg.matmul ins(...) outs(%z : tensor<32x256xf32>)
    %b = linalg.matmul ins(...) outs(%z : tensor<32x256xf32>)
    // becomes
    %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x256xf32>)
    %a = linalg.matmul ins(...) outs(%z1 : tensor<32x256xf32>)
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x256xf32>)
    %b = linalg.matmul ins(...) outs(%z2 : tensor<32x256xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // GACC_TARGET_CPU_PASSES_TD
