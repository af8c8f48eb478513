//===- Passes.td - lowering passes every target shares -----*- tablegen -*-===//
//
// What every target runs on linalg before it lowers the step its own way
// (IREE's Codegen/Common): fusion on tensors, and the rewrites that let
// bufferization update accumulators in place.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_TARGET_COMMON_PASSES_TD
#define GACC_TARGET_COMMON_PASSES_TD

include "passes/PassBase.td"

def FuseElementwise : GaccPass<"gacc-fuse-elementwise"> {
  let consumes = "linalg on tensors";
  let produces = "fused elementwise generics; contractions kept named";
  let summary = "Fuse elementwise linalg ops, keeping contractions whole";
  let description = [{
    Linalg's elementwise fusion (`linalg-fuse-elementwise-ops`: producers
    with a single use) and its reshape folding, except into or out of a
    named contraction (`linalg.contract`, `linalg.matmul`, ...: the ops
    with `ContractionOpInterface`): a matmul that absorbed its producers or
    a reshape would become a `linalg.generic`, and the target could no
    longer give it to BLAS (`gacc-cpu-matmul-to-call`) or to its tiled
    kernels (`gacc-cuda-tile-matmuls`). Chains of elementwise ops
    (optimizer updates, activations and their derivatives) still become
    single loops. A rounding or widening with several users (a chain of
    `truncf` and `extf`, no narrower than its input, indexed alike: the
    16-bit rounding mixed precision leaves between a matmul's f32 result
    and its f32 consumers) is computed again in each of them when every one
    is a generic in its block it can fuse into: repeating the conversion
    costs less than writing the converted tensor and reading it back
    (GPT-2-small's logits: 0.4 GB a pass). So is a value made of much
    smaller inputs only (cross-entropy's one-hot of the targets, 206 MB at
    GPT-2-small's vocabulary and 1024 tokens, read by the loss and by its
    gradient): its readers read the targets instead. Transposes and
    narrowings with several users stay. A value also written to an arena
    slot fuses into its consumer when that consumer's values all go to
    slots (an optimizer's new moment, the weight it updates and, under
    mixed precision without ZeRO's gather, the weight's 16-bit rounding:
    one loop).

    With `recompute-producers` (the CUDA targets), any elementwise value
    that several generics read, not only a rounding, is computed again in
    each of them when that is cheap: an all-parallel body of at most 24
    operations that does not read its output, reading at most one tensor
    as large as its result (indexed alike, no wider) and otherwise much
    smaller ones (a row's maximum, a bias), every reader reading each
    element once.
    Autodiff and CSE leave the forward's intermediates to the backward
    (GELU's x² and tanh, softmax's shifted rows, layer norm's centered
    values, cross-entropy's one-hot): computed again from the one input the
    backward keeps anyway, they are neither stored nor read back. On
    GPT-2-small (batch 8, bf16) the workspace shrinks from 9.0 to 6.5 GiB.
    Kept: values with two large inputs (both would stay alive), values a
    loop reads (computed at every iteration), transposes, values their
    readers broadcast (computed again for every column), and values a
    reader cannot take in (a sum over a dimension only that value has).

    A gather's `tensor.extract` of a transpose, or of a static reshape,
    reads the value it rearranges instead (permuted indices; an expansion's
    multiply-adds; a collapse only where each group has one dimension
    larger than 1): col2im gathers the columns' gradient, a tensor KH·KW
    times the image, and the transpose that put the GEMM's result in its
    order was a pass of its own.

    A sum over a loop of a one-hot term, `Σ_c [c == t] · v(c)` (a
    multiplier `select(c == t, 1, 0)`, or `select(c == t, v, 0)`; `t` an
    integer input the loop does not index), is `v(t)`: the loop is dropped
    and the inputs it indexed are read at `t` with `tensor.extract`,
    through elementwise producers (computed for that element only), and a
    `t` outside the loop's range adds 0. Cross-entropy's picked
    log-probability read all of GPT-2-small's 1024 x 50257 logits, with a
    logarithm for each, to use 1024 of them; the shifted logits it also
    read then fuse into their exponential, one tensor fewer. As PyTorch's
    `nll_loss`, only the picked element is read: another class's infinite
    logit no longer turns the sum into NaN (0 · inf).

    ```mlir
    %h = linalg.contract indexing_maps = [...] ins(%x, %w : ...) outs(%z : ...)
    %a = linalg.generic {...addf...} ins(%h, %b : ...) outs(%e : ...)
    %r = linalg.generic {...maximumf...} ins(%a : ...) outs(%e : ...)
    // becomes
    %h = linalg.contract indexing_maps = [...] ins(%x, %w : ...) outs(%z : ...)
    %r = linalg.generic {...addf, maximumf...} ins(%h, %b : ...) outs(%e : ...)
    ```
  }];
  let options = [
    Option<"recomputeProducers", "recompute-producers", "bool", "false",
           "Compute any cheap elementwise producer again in each of its "
           "users, not only 16-bit roundings">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def SplitReductions : GaccPass<"gacc-split-reductions"> {
  let consumes = "bufferized linalg on static shapes";
  let produces = "long sums into few outputs as parallel partial sums and their sum";
  let summary = "Sum into few outputs through partial sums that run in parallel";
  let description = [{
    A linalg.generic that adds into an output with fewer elements than
    `max-outputs` (a loss's sum, the gradient norm's sum of squares of each
    parameter, a bias gradient) has little or no parallel work: on the CPU
    one thread summed resnet18's gradient norm over 11 M parameters (4-5%
    of its step); on a GPU one block of 256 threads summed GPT-2's
    cross-entropy over 8x1024x50257 logits (75% of its step). With at least
    `min-elements` elements, its outer reduction loops become parallel loops
    over partial sums: whole while their ranges multiply to no more than
    the partial sums wanted (`parallelism` / outputs), then the next one
    split in two by its largest divisor that keeps to that (the operands it
    indexes reshaped with `memref.expand_shape`; not when a map combines it
    with another loop, as a convolution's does). The partial sums get a
    buffer of the output's shape and one dimension per such loop, made at
    the function's start and cleared before each sum; a last generic adds
    them in order to what the output held. The body is the original's: it
    must add into the output once (`out + x`); inputs must not overlap the
    output; its loop indices (`linalg.index`: a one-hot computed in the
    sum) follow their loops, a split loop's rebuilt from its two parts.
    The split is a function of the shapes alone, so results do not depend
    on the thread count; the rounding changes, as PyTorch's and BLAS's
    parallel reductions do.

    The CPU pipeline runs it with `max-outputs=64 parallelism=64` (the
    runtime's threads share out the partial sums through
    `gacc-cpu-split-parallel-nests`) and `partial-bytes=64` (each partial
    sum in its own cache line, so threads do not write the same line);
    CUDA with `max-outputs=256 parallelism=2048` and dense partial sums
    (`gacc-cuda-block-reductions` gives each a block; from 256 outputs a
    block each keeps the GPU busy, and rows such as softmax's keep their
    fused block-per-row kernels).

    Sums down columns (`column-rows=N`, CUDA's 32) are split whatever their
    outputs: a bias or layer-norm gradient sums `[rows, C]` into `[C]`, and
    the last dimension of each input, its contiguous one, is an output's
    loop (or broadcast). A block per column read those with a stride of a
    row. Their outer reduction loops instead become partial sums of about
    N rows each, laid out before the output's dimensions (`[partials][C]`),
    so that consecutive threads (`gacc-cuda-block-reductions` leaves sums
    of fewer than 64 elements to a loop in each thread) read consecutive
    columns and write consecutive partial sums; a block per column then
    adds the partial sums (GPT-2-small: 256 of them).

    With `lane-bytes=B` (the CPU's 64, an AVX-512 register), a sum whose
    innermost loops are reductions that every input reading them indexes as
    its last, contiguous dimensions (a parameter's sum of squares, a
    partial sum's chunk, batch norm's statistics over H x W) and whose R
    elements are at least two multiples of the lanes (B over the output's
    element size) is summed in lanes: those loops become R / lanes rows of
    `lanes` columns (the inputs collapsed and expanded, views), the columns
    a parallel innermost loop that accumulates into a buffer of one sum per
    lane and output, which LLVM vectorizes; a last generic adds each
    output's lanes in order to what the output held. Summed into one
    accumulator, each addition waited for the one before (about 4 cycles
    an element): resnet18's gradient norm took 10% of its step that way.
    Not for sums whose body reads those loops' indices, nor where the
    lanes' buffer would exceed 64 KB.

    The partial sums of each function are views of one buffer made at its
    start, as large as the largest (each is used from its fill to its
    total, and the sums run one after another), outside the memory plan;
    so are the lanes' buffers, in another.

    ```mlir
    linalg.generic {iterator_types = ["reduction", "reduction"]}
        ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
    ^bb0(%in: f32, %out: f32):
      %sq = arith.mulf %in, %in : f32
      %0 = arith.addf %sq, %out : f32
      linalg.yield %0 : f32
    }
    // becomes, with max-outputs=64 parallelism=64 partial-bytes=64
    %partial = memref.alloca() : memref<64x16xf32>  // at the function's start
    %chunks = memref.expand_shape %w [[0, 1], [2]] output_shape [64, 8, 4608] : ...
    linalg.fill ins(%zero : f32) outs(%partial : memref<64x16xf32>)
    linalg.generic {iterator_types = ["parallel", "reduction", "reduction"]}
        ins(%chunks : memref<64x8x4608xf32>) outs(%partial : memref<64x16xf32>) { the same body }
    linalg.generic {iterator_types = ["reduction"]}
        ins(%partial : memref<64x16xf32>) outs(%s : memref<f32>) { %out + %in }
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", "65536",
           "The fewest elements of a sum that is split">,
    Option<"maxOutputs", "max-outputs", "int64_t", "64",
           "Split sums into fewer outputs than this">,
    Option<"parallelism", "parallelism", "int64_t", "64",
           "About how many partial sums to split a sum into (outputs "
           "times partial sums each)">,
    Option<"partialBytes", "partial-bytes", "int64_t", "0",
           "Bytes from one partial sum to the next (0: adjacent)">,
    Option<"laneBytes", "lane-bytes", "int64_t", "0",
           "Sum innermost contiguous reductions in lanes of this many bytes "
           "of the output's type, a vector register's (0: no)">,
    Option<"columnRows", "column-rows", "int64_t", "0",
           "Split sums down columns, whatever their outputs, into partial "
           "sums of about this many rows laid out before the outputs (0: "
           "no)">,
  ];
  let statistics = [
    Statistic<"numSplit", "num-split", "Sums split into partial sums">,
    Statistic<"numInLanes", "num-in-lanes", "Sums summed in vector lanes">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DeallocateHeapBuffers : GaccPass<"gacc-deallocate-heap-buffers", "ModuleOp"> {
  let consumes = "bufferized functions, planned (`gacc-plan-buffers`)";
  let produces = "a dealloc for every heap buffer; the IR cleaned up by CSE and canonicalization";
  let summary = "Free what the memory plan left to the heap, if anything";
  let description = [{
    MLIR's buffer deallocation pipeline (`buffer-deallocation-pipeline`:
    ownership-based deallocation, its simplification and lowering, CSE and
    canonicalization) where some function allocates on the heap: buffers
    the memory plan could not place, such as those of dynamic shapes. A
    step whose buffers are all in its arenas or its frame (the usual case)
    gets only the pipeline's clean-up, CSE and canonicalization, which
    leave the same IR for it at a fraction of the cost (the pipeline's two
    canonicalizations and ownership analysis walk the whole step: GPT-2's
    12 layers paid for them 12 times).
  }];
}

def OutlineRepeats : GaccPass<"gacc-outline-repeats", "ModuleOp"> {
  let consumes = "functions of calls: the step once its kernels are outlined";
  let produces = "each run of ops that repeats as one function, called per run";
  let summary = "Call one function for every run of ops that repeats (a model's layers)";
  let description = [{
    Once the target has given each loop nest or kernel a function, a step
    is a long list of calls, views of its arenas and runtime calls, and the
    layers of a model are runs of it that differ only in the values they
    read: their parameters, the offsets of their buffers in the arena. This
    pass makes each such run one function, called once per layer, so that
    code generation compiles a layer once instead of once per layer
    (GPT-2-small's step has 12 layers forward, 12 backward).

    Only the entry points (public functions) and the bodies of their
    `scf.for` loops (accumulation's) are searched. Views (pure ops making a
    memref: `memref.view`, casts, reshapes) are first copied next to each
    of their users, so that a run reads the arenas and its offsets in them
    rather than buffers viewed elsewhere, and leaves none for later ops.
    Runs are then found as LLVM's MachineOutliner finds repeated
    instruction sequences. Each op becomes a token, equal for ops alike up
    to their operands (the same name, attributes, properties and types;
    operands defined as many ops back when near, constants all alike); the
    suffix array of the tokens and its longest common prefixes give every
    run that repeats, with its places. Runs are taken greedily, those
    saving the most ops other than views first (at least `min-ops`), each
    priced again once others have taken some of its places. A place is
    checked op by op against the first: every operand from the same op of
    its run, or from outside both, one outside value of the first always
    standing for one of the place; places are cut short where they stop
    matching, and runs do not end in views. The function's arguments are
    what the run reads from outside (first use first; a constant every
    place reads is copied in), its results what any place's later ops read
    of it. Identical functions of different blocks or functions are one.
    Ops with regions, terminators and allocations of the function's frame
    (`memref.alloca`) are never moved.

    ```mlir
    %v1 = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
    call @gacc_nest_3(%w1, %v1) : (memref<64xf32>, memref<64xf32>) -> ()
    call @gacc_nest_4(%v1, %x) : (memref<64xf32>, memref<64xf32>) -> ()
    %v2 = memref.view %arena[%c256][] : memref<?xi8> to memref<64xf32>
    call @gacc_nest_3(%w2, %v2) : (memref<64xf32>, memref<64xf32>) -> ()
    call @gacc_nest_4(%v2, %x) : (memref<64xf32>, memref<64xf32>) -> ()
    // becomes, with min-ops=2
    call @gacc_repeat(%arena, %c0, %w1, %x) : (...) -> ()
    call @gacc_repeat(%arena, %c256, %w2, %x) : (...) -> ()
    func.func private @gacc_repeat(%arena: memref<?xi8>, %offset: index,
        %w: memref<64xf32>, %x: memref<64xf32>) {
      %v = memref.view %arena[%offset][] : memref<?xi8> to memref<64xf32>
      call @gacc_nest_3(%w, %v) : (memref<64xf32>, memref<64xf32>) -> ()
      %v_0 = memref.view %arena[%offset][] : memref<?xi8> to memref<64xf32>
      call @gacc_nest_4(%v_0, %x) : (memref<64xf32>, memref<64xf32>) -> ()
      return
    }
    ```

    The CPU pipeline runs it last before the conversion to LLVM, after
    `gacc-cpu-outline-loop-nests`. The search looks at no more than 64
    places per op of a block, so that highly repetitive blocks (thousands
    of identical calls) cost linear time.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", "16",
           "The fewest ops, views aside, of a run that is outlined">,
  ];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "Functions made of repeated runs">,
    Statistic<"numCalls", "num-calls", "Runs replaced by calls">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AccumulateInPlace : GaccPass<"gacc-accumulate-in-place"> {
  let consumes = "loop-carried sums of linalg results";
  let produces = "contractions and generics accumulating into the loop's value";
  let summary = "Update loop-carried sums in place";
  let description = [{
    Gradient accumulation loops (`gacc-accumulate`) carry sums in their
    `scf.for` iteration arguments. Left alone, every iteration computes the
    new sum into a fresh buffer, yields it, and frees the old one: a loop-
    carried allocation the memory plan cannot place and a full pass over
    the accumulator per micro-batch. This pass makes each sum update its
    iteration argument in place, so that bufferization yields the same
    buffer every iteration:

    * `acc + A·B`, where the contraction (an op with
      `ContractionOpInterface`, such as the `linalg.contract` of a
      `gacc.matmul`) starts from zeros, becomes the contraction
      accumulating into `acc` (BLAS with beta = 1): the gradient of a
      weight is added without a temporary;
    * any other elementwise update that reads `acc` at the position it
      writes (bias gradients, the loss sum) writes into `acc`;
    * splat constants that initialize iteration arguments (the zeroed
      accumulators) become `linalg.fill`, which bufferizes to a writable
      buffer instead of a copy of a global.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<256x784xf32>)
    %g = linalg.contract indexing_maps = [...] ins(%a, %b : ...) outs(%z : ...)
    %s = linalg.generic {...addf...} ins(%acc, %g : ...) outs(%e2 : ...)
    scf.yield %s
    // becomes
    %s = linalg.contract indexing_maps = [...] ins(%a, %b : ...) outs(%acc : ...)
    scf.yield %s
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitFills : GaccPass<"gacc-split-fills"> {
  let consumes = "a fill shared by several accumulating ops";
  let produces = "one fill, and one empty tensor, per destination-passing op";
  let summary = "Give each op that accumulates into a fill its own fill";
  let description = [{
    CSE merges identical `linalg.fill`s of empty tensors, such as the zeros
    two matmuls accumulate into. Bufferization then writes the first user
    in place and gives every other one a copy of the filled buffer. Filling
    again is cheaper than filling once and copying: when a fill has several
    uses, this pass clones it (and its empty tensor) right before each
    destination-passing user. An empty tensor with several users gets a
    clone per user as well: one-shot bufferization compares every pair of
    accesses to a buffer, so hundreds of ops writing into one merged empty
    tensor (the updates of equally-shaped parameters) cost it quadratic
    time, seconds at GPT-2 depth.

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

def CopiesToLinalg : GaccPass<"gacc-copies-to-linalg"> {
  let consumes = "`memref.copy`";
  let produces = "`linalg.copy`, a loop nest like the others";
  let summary = "memref.copy as linalg.copy, which becomes a loop nest or a kernel";
  let description = [{
    A `memref.copy` becomes a `linalg.copy`, so that it takes the path of
    every other linalg op instead of the runtime's generic, element by
    element `memrefCopy`: on the CPU an outlined, vectorized nest that runs
    on the thread pool (GPT-mini's step: 10% of its time was `memrefCopy`),
    on CUDA a kernel (a copy left on the host would copy device memory with
    the CPU).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // GACC_TARGET_COMMON_PASSES_TD
