//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
//
// What only the CPU target does; the lowering every target shares is in
// compiler/target/common.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TARGET_CPU_PASSES_TD
#define GACC_TARGET_CPU_PASSES_TD

include "passes/PassBase.td"

def MatmulToCall : GaccPass<"gacc-cpu-matmul-to-call", "ModuleOp"> {
  let consumes = "bufferized named contractions";
  let produces = "calls to the runtime's BLAS matmul";
  let summary = "Run bufferized matmuls through the runtime's BLAS kernel";
  let description = [{
    Replaces each bufferized matmul, the named contraction
    `convert-gacc-to-linalg` makes of `gacc.matmul` (`linalg.contract`, or
    any op with `ContractionOpInterface` whose indexing maps read loops
    `(batch..., m, n, k)` as `C[batch, m, n] += A[batch, m|k, k|m] *
    B[batch, k|n, n|k]`, A and B reading some of the batch loops and
    broadcast over the others) of f32 or f64, or of f16 or bf16 operands
    accumulating into f32, by a call to the runtime's
    `gacc_cpu_matmul_<type>(A, B, C, transpose_a, transpose_b)` (`<type>`:
    `f32`, `f64`, `f16_f32`, `bf16_f32`), which accumulates `op(A)·op(B)`
    into `C` over batch dimensions broadcast as NumPy does (16-bit operands
    are widened panel by panel, so no full f32 copy exists). An operand
    that skips a batch loop before one it reads gets a unit dimension there
    (`memref.expand_shape`, a view), so that its batch dimensions align
    with C's from the end. Measured against the generated loops on this
    machine it is 10-50x faster (bench/RESULTS.md). Other element types
    keep the contraction, which becomes loops.

    ```mlir
    linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                     affine_map<(m, n, k) -> (n, k)>,
                                     affine_map<(m, n, k) -> (m, n)>]
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

def OutlineLoopNests : GaccPass<"gacc-cpu-outline-loop-nests", "ModuleOp"> {
  let consumes = "bufferized linalg ops in the step's entry functions";
  let produces = "one private function per distinct loop nest, called";
  let summary = "Give every loop nest its own function, one per distinct nest";
  let description = [{
    Moves every bufferized linalg op of the module's functions (each is one
    fused loop nest after `gacc-fuse-elementwise`) into a function of its
    own, called with the op's buffers. Structurally identical nests (the
    layers of a transformer, a forward op and its recomputation under remat,
    the same update of parameters of one shape) become one function called
    with different buffers, so the code LLVM optimizes and generates grows
    with the number of distinct nests instead of with the model's depth,
    and the functions can be compiled in parallel. Constants the op's body
    uses are copied into the function, so nests that differ only in a
    constant stay distinct. The functions are `no_inline`: inlining them
    back would undo both.

    ```mlir
    func.func @gacc_step(...) {
      linalg.generic {...} ins(%a : memref<64x128xf32>) outs(%b : ...) {...}
    // becomes
    func.func private @gacc_nest_3(%arg0: memref<64x128xf32>, %arg1: ...)
        attributes {no_inline} {
      linalg.generic {...} ins(%arg0 : memref<64x128xf32>) outs(%arg1 : ...)
      return
    }
    func.func @gacc_step(...) {
      call @gacc_nest_3(%a, %b) : (memref<64x128xf32>, ...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // GACC_TARGET_CPU_PASSES_TD
