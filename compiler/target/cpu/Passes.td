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
    `gacc_cpu_matmul_<type>(A, B, C, transpose_a, transpose_b, accumulate)`
    (`<type>`: `f32`, `f64`, `f16_f32`, `bf16_f32`), which accumulates
    `op(A)·op(B)` into `C` (or overwrites `C` when `accumulate` is 0) over
    batch dimensions broadcast as NumPy does (16-bit operands
    are widened panel by panel, so no full f32 copy exists). An operand
    that skips a batch loop before one it reads gets a unit dimension there
    (`memref.expand_shape`, a view), so that its batch dimensions align
    with C's from the end. Measured against the generated loops on this
    machine it is 10-50x faster (bench/RESULTS.md). Other element types
    keep the contraction, which becomes loops.

    A `linalg.fill` of zeros into `C` that is the last operation touching
    memory before the contraction is dropped and the call overwrites `C`
    (BLAS's beta = 0): one pass less over every product's result.

    A contraction marked `gacc.embedding_gradient` (`one_hot(ids)ᵀ · dy`,
    gacc.embedding's VJP), whose one-hot operand was last written by a
    one-hot generic of ids read from the batch arena (contiguous, never
    written or freed by the step), becomes
    `gacc_cpu_embedding_gradient_<f32|f64>_<i32|i64>(ids, dy, C,
    accumulate)`, which adds each row of dy into its id's row (in position
    order, columns in parallel); the one-hot goes too when nothing else
    reads it. At GPT-2's vocabulary that is 0.8 M additions instead of
    39.5 G multiply-adds. Ids the step computes keep the product.

    ```mlir
    linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                     affine_map<(m, n, k) -> (n, k)>,
                                     affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : ...) outs(%c : ...)
    // becomes
    %ua = memref.cast %a : memref<64x784xf32> to memref<*xf32>
    ...
    call @gacc_cpu_matmul_f32(%ua, %ub, %uc, %c0_i32, %c1_i32, %c1_i32)
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def AttentionToCall : GaccPass<"gacc-cpu-attention-to-call", "ModuleOp"> {
  let consumes = "bufferized `gacc.attention` and `gacc.attention_grad`";
  let produces = "calls to the runtime's blocked attention kernels";
  let summary = "Run bufferized attention through the runtime's CPU kernels";
  let description = [{
    Replaces each bufferized `gacc.attention` by a call to the runtime's
    `gacc_cpu_attention_<type>(Q, K, V, key_bias, out, logsumexp, scale,
    causal, has_key_bias)` and each `gacc.attention_grad` by
    `gacc_cpu_attention_grad_<type>(Q, K, V, dO, logsumexp, delta,
    key_bias, dQ, dK, dV, scale, causal, has_key_bias)` (`<type>`: `f32`,
    `f64`, `f16`, `bf16`; memrefs as unranked descriptors). Without a key
    bias another memref of its type takes its place, unread.

    The kernels (runtime/src/cpu/Attention.cpp) work on 64 queries at a
    time: the block's scores are BLAS products (`Q Kᵀ`, then `P V`; the
    backward recomputes them from the log-sum-exp) in per-thread scratch,
    so that no T x S tensor exists, and the softmax rows vectorize. Other
    element types are an error.

    ```mlir
    gacc.attention %q, %k, %v into %o, %lse scale = 1.250000e-01 causal
        : memref<2x4x64x32xf32>, ... into memref<2x4x64x32xf32>,
          memref<2x4x64xf32>
    // becomes
    %uq = memref.cast %q : memref<2x4x64x32xf32> to memref<*xf32>
    ...
    call @gacc_cpu_attention_f32(%uq, %uk, %uv, %ulse, %uo, %ulse, %scale,
        %c1_i32, %c0_i32)
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ExpandBf16Conversions : GaccPass<"gacc-cpu-expand-bf16-conversions"> {
  let consumes = "`arith.truncf` and `arith.extf` between f32 and bf16";
  let produces = "the same conversions as integer arithmetic";
  let summary = "Convert between f32 and bf16 with integer operations";
  let description = [{
    A CPU without AVX512-BF16 has no instruction that rounds f32 to bf16:
    LLVM then calls `__truncsfbf2`, which Debian 12's libgcc (GCC 12) does
    not have, so the step's code could not load, and a call per element
    keeps the loop around it scalar. This pass writes the conversions as
    MLIR's integer expansions (round to nearest even on the bits, NaN kept
    a NaN; widening is a shift), which vectorize. The CPU pipelines run it
    on every CPU, after `arith-emulate-unsupported-floats` has put bf16
    arithmetic in f32, so the code and its results do not depend on
    whether the CPU has `vcvtneps2bf16` (the same rounding).

    ```mlir
    %h = arith.truncf %x : f32 to bf16
    // becomes: bitcast to i32, add 0x7fff plus the lowest kept bit, shift
    // right by 16, NaN selected apart, truncate to i16, bitcast to bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ApproximateMath : GaccPass<"gacc-cpu-approximate-math"> {
  let consumes = "f32 `math` ops (exp, expm1, log, log1p, log2, tanh, erf, erfc, atan, atan2, cbrt)";
  let produces = "their polynomial approximations in `arith` and `math.fma`";
  let summary = "Replace f32 transcendental functions by polynomials that vectorize";
  let description = [{
    Rewrites the f32 transcendental functions of the step (softmax's and
    cross entropy's exp and log, GELU's tanh or erf, and the rest that MLIR
    has approximations for) into MLIR's polynomial approximations: plain
    arithmetic that LLVM vectorizes with the loop around it, where a call
    to libm keeps the loop scalar (on this machine 12% of GPT-mini's step
    was scalar `expm1f`, `tanhf` and `expf`). The approximations are
    accurate to a few ulp, as IREE's CPU backend uses them. f16 and bf16
    operands (mixed precision) are extended to f32 around them; f64
    (gradient checks) keeps libm.

    ```mlir
    %y = math.exp %x : f32
    // becomes arithmetic on %x: range reduction, a polynomial, the
    // exponent put back with bit operations
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
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

def CollapseNests : GaccPass<"gacc-cpu-collapse-nests"> {
  let consumes = "outlined loop nests (one bufferized linalg op each)";
  let produces = "the same nests as generics over fewer, longer loops, their scalar operands read once";
  let summary = "Collapse the contiguous loops of each nest into one for LLVM's vectorizer";
  let description = [{
    LLVM vectorizes a nest's innermost loop only. A convolution's weight
    (512x512x3x3) has an innermost loop of 3: its SGD update, the fill of
    its gradient and every other elementwise nest over it ran scalar, 3
    elements per loop. This pass makes each outlined nest a
    `linalg.generic` (named ops generalized) and collapses runs of adjacent
    loops of one iterator type that every operand reads as adjacent,
    contiguous dimensions (`memref.collapse_shape`, views) into one loop,
    as IREE's CPU backend flattens dispatches. Loops whose index the body
    reads (`linalg.index`) are left alone: delinearizing them would put a
    division into every iteration. The elements are visited in the same
    order, so the results are bitwise the same.

    It also reads each 0-d input (a learning rate, a gradient scale)
    once before the nest instead of in every iteration, which LLVM could
    not hoist past the nest's stores to other buffers.

    ```mlir
    linalg.generic {indexing_maps = [#id4, #scalar, #id4], ...}
        ins(%w, %lr : memref<512x512x3x3xf32>, memref<f32>)
        outs(%m : memref<512x512x3x3xf32>)
    // becomes
    %s = memref.load %lr[] : memref<f32>
    %cw = memref.collapse_shape %w [[0, 1, 2, 3]] : ... into memref<2359296xf32>
    %cm = memref.collapse_shape %m [[0, 1, 2, 3]] : ...
    linalg.generic {indexing_maps = [#id1, #id1], ...} ins(%cw ...) outs(%cm ...)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def SplitParallelNests : GaccPass<"gacc-cpu-split-parallel-nests", "ModuleOp"> {
  let consumes = "outlined loop nests (`gacc-cpu-outline-loop-nests`) with static shapes";
  let produces = "nests that compute a range [lo, hi) of one parallel loop, marked `gacc.parallel_grain`";
  let summary = "Let each outlined loop nest compute a range of a parallel loop";
  let description = [{
    Gives every outlined loop nest with enough work (at least two chunks of
    `min-chunk-work` iterations) two more arguments, `lo` and `hi`, and
    makes it compute iterations [lo, hi) of its outermost parallel loop
    that every operand reads as a plain dimension (subviews of those
    operands; `linalg.index` of that loop is shifted by `lo`). Its calls
    pass the whole range, so the IR still runs serially as before. The
    function is marked `gacc.parallel_grain`: the chunk size, a function of
    the shapes alone, so that results never depend on the thread count.
    `gacc-cpu-dispatch-parallel-calls` then runs the chunks on the
    runtime's threads. Reduction loops are never split: each element is
    summed in the same order as before.

    ```mlir
    func.func private @gacc_nest(%a: memref<1024x128xf32>, %b: memref<1024x128xf32>) {
      linalg.generic ... ins(%a) outs(%b)
    // becomes
    func.func private @gacc_nest(%a: memref<1024x128xf32>, %b: memref<1024x128xf32>,
                                 %lo: index, %hi: index)
        attributes {gacc.parallel_grain = 256 : i64} {
      %n = arith.subi %hi, %lo : index
      %sa = memref.subview %a[%lo, 0] [%n, 128] [1, 1]
      %sb = memref.subview %b[%lo, 0] [%n, 128] [1, 1]
      linalg.generic ... ins(%sa) outs(%sb)
    ```
  }];
  let options = [
    Option<"minChunkWork", "min-chunk-work", "int64_t", "32768",
           "The least iterations of a nest a chunk holds">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DispatchParallelCalls : GaccPass<"gacc-cpu-dispatch-parallel-calls", "ModuleOp"> {
  let consumes = "LLVM dialect calls of functions marked `gacc.parallel_grain`";
  let produces = "calls of the runtime's `gacc_cpu_parallel_for` with a task per function";
  let summary = "Run the chunks of split loop nests on the runtime's threads";
  let description = [{
    After the conversion to the LLVM dialect, replaces each call of a
    function that `gacc-cpu-split-parallel-nests` split (its last two
    arguments are the range [lo, hi)) by a call of the runtime's
    `gacc_cpu_parallel_for(task, context, hi - lo, grain)`. The call's
    other arguments are stored in a context of 8-byte slots on the
    caller's stack (one per calling function, reused by every call), and
    `<function>.task(context, begin, end)`, made once per function, loads
    them back and calls the function on [lo + begin, lo + end).

    ```mlir
    llvm.call @gacc_nest(%a, %b, %c0, %c1024) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    // becomes
    llvm.store %a, %slot0 ... llvm.store %c0, %slot2
    llvm.call @gacc_cpu_parallel_for(@gacc_nest.task, %context, %c1024, %c256)
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // GACC_TARGET_CPU_PASSES_TD
