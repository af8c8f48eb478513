//===- Passes.td - CUDA target passes ----------------------*- tablegen -*-===//

#ifndef GACC_TARGET_CUDA_PASSES_TD
#define GACC_TARGET_CUDA_PASSES_TD

include "passes/PassBase.td"

def FlashAttention : GaccPass<"gacc-cuda-flash-attention"> {
  let consumes = "bufferized `gacc.attention` and `gacc.attention_grad`";
  let produces = "FlashAttention-2's tensor-core kernels (`gpu.launch`)";
  let summary = "Fused attention as kernels that never store the scores";
  let description = [{
    Replaces each `gacc.attention` on buffers by one kernel and each
    `gacc.attention_grad` by two, for f16 or bf16 operands, head sizes that
    are multiples of 16 up to 64 and lengths that are multiples of 64 (what
    `gacc-fuse-attention`'s `cuda-kernels-only` fuses; anything else is a
    located error). A block of 4 warps owns 64 rows of one (batch, head),
    16 per warp, in shared memory, and loops over the other side 64 rows
    at a time (under the causal mask, only the tiles it can see): products
    are m16n8k16 `mma.sync` with fragments from `ldmatrix`, and the
    probabilities (or their gradient) feed the next product from the
    accumulators, rounded, without going through memory.

    - Forward: a block per 64 queries; each row's running maximum and sum
      (the online softmax: the 4 lanes of a row combine their partial
      maxima through shared memory), the output rescaled as the maximum
      grows, then divided by the sum; the log-sum-exp of each row.
    - dQ: a block per 64 queries recomputes P = exp(S - lse) and dP = dO Vᵀ
      per key tile, dQ += scale · P (dP - delta) K.
    - dK, dV: a block per 64 keys does the same transposed, per query tile:
      dV += Pᵀ dO, dK += scale · dSᵀ Q.

    Every gradient element is a sum in a fixed order: no atomics, results
    that do not depend on scheduling. 4 tiles of 64 x (64 + 8) 16-bit
    elements are 36 KB of shared memory.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def TileMatmuls : GaccPass<"gacc-cuda-tile-matmuls"> {
  let consumes = "bufferized named contractions";
  let produces = "shared-memory tiled and tensor-core matmul kernels (`scf.parallel` with workgroup memory)";
  let summary = "Matmuls as shared-memory tiled gpu kernels";
  let description = [{
    Replaces each bufferized matmul, a named contraction (the
    `linalg.contract` of a `gacc.matmul`, or any op with
    `ContractionOpInterface` whose indexing maps read loops
    `(batch..., m, n, k)` as `C += op(A)·op(B)`, either operand transposed,
    batch dimensions looped or broadcast, 16-bit operands widened to the
    accumulator's type) of static shape, by a `gpu.launch` of the classic
    tiled kernel: blocks of 16x16 threads, each block computing a 64x64 tile
    of C and each thread a 4x4 piece of it in private memory; A and B pass
    through workgroup memory 16 elements of K at a time (each element read
    from global memory once per block, not once per thread), consecutive
    threads reading consecutive addresses whichever operand is transposed,
    16 bytes at a time (`vector.load`, 4 floats or 8 halves) where the
    operand's innermost dimension has unit stride and its offset, other
    strides and length keep every vector aligned and whole (not GPT-2's
    50257 classes), else element by element. The loop over K is
    software-pipelined: each thread loads the next slice into registers
    (private memory, unrolled) while the block multiplies the tiles of one
    of two stages, then stores it into the other stage's tiles; one barrier
    per slice. Edges: loads past the
    matrix are zeros, stores past it are skipped. The batch is `blockIdx.z`.
    A `linalg.fill` of C just before the matmul (only ops without memory
    effects between them) is taken into the kernel: each element of C is
    stored once as the fill's value plus its sum, C is not read, and the
    fill's kernel is gone.

    Epilogues, as cuBLASLt's: the elementwise op that reads C just after
    the matmul (the next op with memory effects; views and constants
    between them move up) runs in the kernel where C's element is in
    registers: the bias add, the 16-bit rounding, GELU, a residual add,
    whatever its body of pure scalar ops computes. It must be a
    `linalg.generic` of parallel loops over C's shape that reads C once
    through the identity and writes one buffer through the identity; its
    other inputs are loaded at C's element through their maps (a bias at
    its column). Its result must share no byte with A or B (other blocks
    still read them) nor with its other inputs (unless one is the result
    itself, element for element). The kernel stores the op's result, and
    C only where something reads C later (C not made in the matmul's
    block, or a later use of its memory before a fill of all of it): in a
    bf16 linear layer the f32 C is then never written, where it was
    written and read back once each.

    Matmuls of f16 or bf16 operands into f32 go to the tensor cores
    instead: 64x64 tiles of C, or 128x128 where C has at least 128 rows and
    columns, 4 warps per block (32x4 threads), each warp computing a
    quarter of the tile (32x32 or 64x64) as `nvvm.mma.sync` m16n8k16 tiles
    (row-major A, column-major B), its accumulators in private memory
    (registers: 4 floats per lane and tile), and 32 elements of K at a
    time, two mma steps per shared tile. The larger tile reads each
    fragment from shared memory for 32 mma instead of 8. The shared tiles
    are laid out as the operand is in memory, so that each thread stores
    its 16-byte loads as whole vectors: rows of K where K is contiguous
    (`64x40` or `128x40`), k-major otherwise (`32x72` or `32x136`), rows
    padded by 8 elements so that the 8 rows of an 8x8 matrix fall in
    different banks. Per 16 of K, each warp loads the fragments of each of
    its m16 tiles of A and of each pair of its n8 tiles of B with one
    `nvgpu.ldmatrix` (four 8x8 matrices; transposed from a k-major tile),
    into private memory, which hands each lane what PTX's layouts for
    m16n8k16 place there (g = lane / 4, t = lane % 4, e = 0 or 1: A's
    register r holds A[g + 8(r % 2)][2t + 8(r / 2) + e], B's
    B[2t + 8r + e][g], D's element i is D[g + 8(i / 2)][2t + i % 2]).

    Where both operands move 16 bytes at a time, the tensor-core kernel's
    tiles are filled by cp.async (`nvgpu.device_async_copy`, sm_80+),
    straight from global into shared memory, no staging registers, in
    `async-stages` stages (default 4): the first stages - 1 slices before
    the loop, a commit group per slice; each trip starts the copies of the
    slice stages - 1 ahead into the stage multiplied last, multiplies this
    stage, waits until at most stages - 2 groups are in flight and meets
    the block at the barrier; after the loop, a wait for all. Vectors past
    the edges copy 0 bytes from a clamped address (zeros). The 128x128
    tile's 4 stages are 68-80 KB:
    `gacc-cuda-dynamic-shared-memory` makes them dynamic shared memory for
    the CUDA target. Otherwise (GPT-2's 50257 classes along K) the register
    pipeline above, two stages. `warps=8` (2x4 warps), `mma-depth=64` (64
    of K per shared tile) and `wide-tiles` (128x256 tiles of 8 warps of
    64x64 where C has 256 columns or more) are the kernel's other shapes;
    on the H100 none beat the default (bench/RESULTS.md: `wide-tiles` made
    GPT-2-small's step 6% slower, one block per multiprocessor).

    Blocks take their tiles of C in groups of 8 row tiles down each column
    (Triton's grouped order), so that the blocks resident at once share
    A's and B's tiles in L2 (GPT-2's logits: 13% faster).

    An embedding's gradient (a contraction marked
    `gacc.embedding_gradient`, `one_hot(ids)ᵀ · dy` with the batch's ids;
    see `getEmbeddingGradient`) is no product: a thread per column of C and
    a block per range of its rows adds the rows of dy at their ids, in
    position order (no atomics: the sums do not depend on scheduling; ids
    outside C's rows add nothing), and the one-hot goes where nothing else
    reads it; C's zero fill stays.

    ```mlir
    linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                     affine_map<(m, n, k) -> (n, k)>,
                                     affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %b : memref<64x784xf32>, memref<256x784xf32>)
        outs(%c : memref<64x256xf32>)
    // becomes
    gpu.launch blocks(...) in (%gx = %c4, %gy = %c1, %gz = %c1)
               threads(...) in (%sx = %c16, %sy = %c16, %sz = %c1)
               workgroup(%ta : memref<2x16x64xf32, 3>, %tb : memref<2x16x64xf32, 3>)
               private(%sa : memref<4xf32, 5>, %sb : memref<4xf32, 5>,
                       %acc : memref<4x4xf32, 5>) {
      load slice 0; store it into stage 0; gpu.barrier
      scf.for %k0 = %c0 to %c784 step %c16 {
        load the next slice; multiply this stage's tiles;
        store the next slice into the other stage; gpu.barrier }
      C += the 4x4 piece
    }
    ```
  }];
  let options = [
    Option<"asyncStages", "async-stages", "int64_t", "4",
           "Shared tiles per operand of the tensor-core kernel where "
           "cp.async fills them (0: through registers; 2 or more, as many "
           "as 163 KB of shared memory holds)">,
    Option<"warps", "warps", "int64_t", "4",
           "Warps per block of the tensor-core kernel (4: 2x2, 8: 2x4)">,
    Option<"mmaDepth", "mma-depth", "int64_t", "32",
           "Elements of K per shared tile of the tensor-core kernel (32, 64)">,
    Option<"wideTiles", "wide-tiles", "bool", "false",
           "128x256 tensor-core tiles (8 warps of 64x64) where C has at "
           "least 128 rows and 256 columns">,
  ];
  let statistics = [
    Statistic<"numEpilogues", "num-epilogues",
              "Elementwise ops computed in a matmul's kernel">,
    Statistic<"numCKept", "num-c-kept",
              "Epilogues whose matmul stores C too">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def DynamicSharedMemory : GaccPass<"gacc-cuda-dynamic-shared-memory"> {
  let consumes = "`gpu.launch` ops with workgroup attributions";
  let produces = "those over 48 KB as views of `gpu.dynamic_shared_memory`";
  let summary = "Workgroup memory over 48 KB as dynamic shared memory";
  let description = [{
    A kernel's static shared memory stops at 48 KB; more must be dynamic
    shared memory, sized at launch and allowed per kernel by the driver
    (`cuFuncSetAttribute`, which the runtime calls before each launch above
    48 KB; sm_80 has 163 KB, sm_90 227 KB). Kernel
    generators (the tensor-core matmul's cp.async stages) declare what they
    need as workgroup attributions whatever the size, which the emulator
    runs as they are; for the CUDA target, just before outlining, this
    pass replaces the attributions of each launch that needs more than
    48 KB by `memref.view`s of one `gpu.dynamic_shared_memory` buffer, at
    16-byte aligned offsets, and sets the launch's
    `dynamic_shared_memory_size` to their total. Launches within 48 KB
    keep static shared memory. A launch over 48 KB with a buffer that
    cannot be such a view (not of static shape and identity layout, or of
    elements that are not whole bytes) is an error.

    ```mlir
    gpu.launch ... workgroup(%a : memref<4x128x40xbf16, 3>,
                             %b : memref<4x32x136xbf16, 3>) { ... %a ... %b }
    // becomes
    %bytes = arith.constant 75776 : i32
    gpu.launch ... dynamic_shared_memory_size %bytes {
      %raw = gpu.dynamic_shared_memory : memref<?xi8, 3>
      %a = memref.view %raw[%c0][] : memref<?xi8, 3> to memref<4x128x40xbf16, 3>
      %b = memref.view %raw[%c40960][] : memref<?xi8, 3> to memref<4x32x136xbf16, 3>
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def BlockReductions : GaccPass<"gacc-cuda-block-reductions"> {
  let consumes = "bufferized row reductions and their row neighbours";
  let produces = "one block-per-row kernel per chain";
  let summary = "Reductions as one block per reduced element";
  let description = [{
    Replaces each bufferized reduction `out[p] = combine(out[p], f(inputs
    at (p, r)))` (one output indexed by exactly the parallel loops; `combine`
    one of `addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`,
    `addi`, `maxsi`, `minsi`; static shapes) over at least 64 elements by a
    `gpu.launch` with a block of 256 threads per output element: each
    thread combines the elements `r = thread, thread + 256, ...` (any
    number of reduction loops, linearized), then a tree in workgroup memory
    (128, 64, ..., 1 threads, a barrier per round) and thread 0 combines
    the total into `out[p]`. Softmax's row maximum and sum, layer norm's
    statistics, losses, bias gradients and the gradient norm's squares are
    such reductions; with the default mapping a single thread would loop
    over all of a row (or, for a scalar, over the whole tensor). Smaller
    reductions keep a loop per output in its thread. The block has as many
    threads as the row has elements, rounded up to a power of two, from 32
    to 256.

    A reduction over its last loop takes into its kernel the ops around it
    that work on the same rows (their first loops are the rows', at most
    one loop follows, they write only at their row): softmax's and layer
    norm's fills, row-broadcast elementwise ops and further row reductions,
    forward and backward. Each block runs the whole chain on its row, a
    barrier between ops, where each op was a kernel of its own. An op joins
    only if, run row by row, the ops meet at no byte one of them writes
    except at the same row: the memory plan puts buffers whose lifetimes do
    not overlap in the same bytes, and block q must not write over what
    block p has yet to read. Views of the step's arenas at constant byte
    shifts are compared by their byte ranges; two views at one shift with
    one type are the same rows. Ops without memory effects (views,
    constants) between the chain's ops stay where they are; anything else
    ends the chain. An op with rows wider than 256 elements joins only when
    there are rows enough (1024) to fill a GPU.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<1024x128xf32>) outs(%max : memref<1024xf32>) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %out : f32
        linalg.yield %m : f32
    }
    // becomes
    gpu.launch blocks(%p, ...) in (%gx = %c1024, ...)
               threads(%t, ...) in (%sx = %c256, ...)
               workgroup(%partial : memref<256xf32, 3>) {
      %own = scf.for %r = %t to %c128 step %c256 iter_args(%acc = %ninf) ...
      memref.store %own, %partial[%t]
      gpu.barrier
      scf.for %round = %c0 to %c8 step %c1 { ... gpu.barrier }
      scf.if %t == 0 { %max[%p] = max(%max[%p], %partial[0]) }
    }
    ```

    ```mlir
    // softmax: fill, max, exp(x - max), fill, sum, divide
    linalg.fill ins(%ninf : f32) outs(%max : memref<512x1xf32>)
    linalg.generic {... ["parallel", "reduction"]} ins(%x ...) outs(%max ...)
    ...
    // becomes one kernel
    gpu.launch blocks(%p, ...) in (%gx = %c512, ...)
               threads(%t, ...) in (%sx = %c64, ...)
               workgroup(%partial : memref<64xf32, 3>) {
      fill of row %p by thread 0;   gpu.barrier
      maximum of row %p (a tree);   gpu.barrier
      exp(x - max), row %p;         gpu.barrier
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def HostMemoryToKernels : GaccPass<"gacc-cuda-host-memory-to-kernels", "::mlir::func::FuncOp"> {
  let consumes = "host values kernels read (constants, globals)";
  let produces = "those values inside the kernels";
  let summary = "Move the host's reads and writes of memory into kernels";
  let description = [{
    On a GPU the step's arenas are device memory, which host code cannot
    touch. After `convert-parallel-loops-to-gpu`, what is left outside the
    kernels includes scalar code on memory (0-d linalg ops become loads and
    stores without loops: loss sums, the loss scale's update, the optimizer
    schedule) and loops without parallel dimensions (small reductions).
    This pass moves each maximal run of such ops (with the pure ops that
    use their results) into a `gpu.launch` of one thread, placed where the
    run ends: launches, calls, allocations and frees keep their place, so
    the order of memory accesses is kept. A value the run computes and a
    later kernel (or run) uses passes through a 0-d scratch buffer: stored
    by the run, loaded by its user. The other way round, a kernel that reads
    a constant global of the host (a zero accumulator to copy from, a
    table) gets the `memref.get_global` (and views of it) sunk into its
    body, so that outlining gives its module a copy in device memory. Then
    nothing on the host reads or writes memory; the pass fails, pointing at the op, if something still
    does (a load feeding a loop that holds kernels, for instance).

    ```mlir
    %l = memref.load %loss[] : memref<f32>
    %s = arith.mulf %l, %scale : f32
    memref.store %s, %out[] : memref<f32>
    // becomes
    gpu.launch blocks(...) in (%c1, %c1, %c1) threads(...) in (%c1, %c1, %c1) {
      %l = memref.load %loss[] : memref<f32>
      %s = arith.mulf %l, %scale : f32
      memref.store %s, %out[] : memref<f32>
      gpu.terminator
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DeviceAllocations : GaccPass<"gacc-cuda-device-allocations", "::mlir::func::FuncOp"> {
  let consumes = "host `memref.alloc`/`dealloc`, `memref.alloca` at the function's start";
  let produces = "`gpu.alloc`/`gpu.dealloc` on device memory";
  let summary = "The host's allocations as device memory";
  let description = [{
    Replaces the `memref.alloc` and `memref.dealloc` ops of host code (the
    scratch values of `gacc-cuda-host-memory-to-kernels`, what the memory
    plan leaves to the heap) by `gpu.alloc` and `gpu.dealloc`, which
    `gpu-to-llvm` turns into the runtime's `mgpuMemAlloc` and `mgpuMemFree`:
    the kernels that use them run on the device. A `memref.alloca` in the
    function's entry block (`gacc-split-reductions`' partial sums) becomes a
    `gpu.alloc` there and a `gpu.dealloc` before each return; one in a loop
    or a branch is an error. Allocations inside kernels (private memory)
    stay.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def SumsInRegisters : GaccPass<"gacc-cuda-sums-in-registers"> {
  let consumes = "loops from `convert-linalg-to-parallel-loops`";
  let produces = "`scf.for` loops that carry their sums as `iter_args`";
  let summary = "Keep a thread's running sum in a register, not in memory";
  let description = [{
    `convert-linalg-to-parallel-loops` gives a reduction that a thread
    computes (one of fewer than 64 elements per output, such as
    `gacc-split-reductions`' partial sums down columns) a loop that loads
    the output's element, adds, and stores it back at every trip: two
    memory accesses of the output per element read, which the kernel's
    compiler cannot remove since the buffers are views of one arena. Here
    such a loop loads the element once before it, carries it as an
    `iter_args` value, and stores it once after; enclosing loops in turn.

    It applies when the loop runs a constant number of trips, at least one,
    the load precedes the store in the loop's body, both at the same
    indices defined outside the loop, and nothing else in the loop reads or
    writes bytes the output may share (`ArenaView`: the memory plan places
    buffers in arenas); several sums in one loop are carried together.
    Loops inside `gpu.launch` (kernels built by the passes before) are left
    alone.

    ```mlir
    scf.for %r = %c0 to %c32 step %c1 {
      %x = memref.load %in[%p, %r, %c] : memref<256x32x768xbf16>
      %acc = memref.load %partial[%p, %c] : memref<256x768xf32>
      %sum = arith.addf (extf %x), %acc : f32
      memref.store %sum, %partial[%p, %c] : memref<256x768xf32>
    }
    // becomes
    %init = memref.load %partial[%p, %c] : memref<256x768xf32>
    %total = scf.for %r = %c0 to %c32 step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memref.load %in[%p, %r, %c] : memref<256x32x768xbf16>
      %sum = arith.addf (extf %x), %acc : f32
      scf.yield %sum : f32
    }
    memref.store %total, %partial[%p, %c] : memref<256x768xf32>
    ```
  }];
  let statistics = [
    Statistic<"numCarried", "num-carried", "Elements carried by loops">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def CollapseParallelLoops : GaccPass<"gacc-cuda-collapse-parallel-loops"> {
  let consumes = "nested `scf.parallel` loops";
  let produces = "one collapsed parallel loop per kernel";
  let summary = "Collapse each outermost scf.parallel nest into one dimension";
  let description = [{
    Gives every outermost `scf.parallel` loop a single dimension that
    enumerates all its points (the loop's indices are recovered with
    division and remainder), so that tiling it by 256 and mapping the tiles
    to blocks gives every kernel blocks of 256 threads whatever its shape:
    a `64x10` loop becomes 3 blocks of 256 threads instead of 64 blocks of
    10 (of which 256 are launched). Loops inside the thread (reductions)
    are left alone.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c10) step (%c1, %c1) {...}
    // becomes
    scf.parallel (%ij) = (%c0) to (%c640) step (%c1) {
      %i = arith.divsi ... %j = arith.remsi ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def MergeKernelModules : GaccPass<"gacc-cuda-merge-kernel-modules", "ModuleOp"> {
  let consumes = "one `gpu.module` per kernel";
  let produces = "one `gpu.module` with every distinct kernel";
  let summary = "Put every outlined gpu kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` gives each kernel its own `gpu.module`. This pass
    moves every kernel into one module, `gacc_kernels`, each renamed after
    the module it came from, and updates the launches: a step becomes one
    PTX module (one load, one ptxas run) instead of one per kernel.
    Structurally identical kernels (the layers of a transformer, a forward
    kernel and its recomputation under remat) are kept once, and their
    launches all name it. The other symbols outlining copied into the
    modules (the host's constant globals that kernels read) are kept once.
    Every kernel's workgroup buffers are marked 16-byte aligned
    (`llvm.align`, which the NVVM lowering gives their globals): the tiled
    matmuls store 16 bytes at a time into them, and `ldmatrix` needs each
    row it reads 16-byte aligned.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def AssembleKernels : GaccPass<"gacc-cuda-assemble-kernels", "ModuleOp"> {
  let consumes = "`gpu.binary` ops holding PTX";
  let produces = "`gpu.binary` ops holding a fatbin: machine code for each chip, and the PTX";
  let summary = "Assemble the kernels' PTX into machine code for each chip, ahead of time";
  let description = [{
    Runs CUDA's `ptxas` on the PTX of every `gpu.binary` for each chip in
    `chips` (one process per chip, at once) and packs the machine code and
    the PTX into one fatbin with `fatbinary`, as `nvcc -gencode` does. The
    driver loads the machine code of the GPU's chip as it is; on any other
    chip it compiles the PTX. Without this, the driver compiles the PTX
    of every kernel each time a process loads it on a machine whose driver
    cache does not hold it yet (GPT-mini's step: seconds).

    ```mlir
    gpu.binary @gacc_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "...PTX...">]
    // becomes
    gpu.binary @gacc_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "...fatbin...">]
    ```

    A `ptxas` failure is an error on the binary, with what `ptxas` said.
  }];
  let options = [
    Option<"ptxas", "ptxas", "std::string", "\"/usr/local/cuda/bin/ptxas\"",
           "CUDA's PTX assembler">,
    Option<"fatbinary", "fatbinary", "std::string",
           "\"/usr/local/cuda/bin/fatbinary\"",
           "CUDA's fatbin packer">,
    ListOption<"chips", "chips", "std::string",
               "The chips to assemble for (sm_80: A100, sm_90: H100 and H200)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def EmulateLaunches : GaccPass<"gacc-cuda-emulate-launches"> {
  let consumes = "`gpu.launch` kernels";
  let produces = "host loops over blocks and threads (the kernels' logic on the CPU)";
  let summary = "Run gpu.launch bodies on the CPU, ids as loop indices";
  let description = [{
    Executes the CUDA target's kernels on the CPU so that tests catch
    indexing, tiling, shared-memory and reduction bugs without a GPU. Each
    `gpu.launch` becomes loops over its blocks, one after the other and the
    last first (CUDA promises no order between blocks: one that reads what
    another writes is a bug this order is likelier to show); in them, the kernel body is split at every `gpu.barrier` into segments,
    each an `scf.parallel` loop over the block's threads (a barrier is where
    one thread loop ends and the next begins, which is what it guarantees).
    Block and thread ids, block and grid sizes become loop indices and the
    launch's sizes. Workgroup memory is one buffer that the blocks share in
    turn; private memory one buffer with a row per thread, so that it
    survives barriers (both on the heap for the launch). Loops and
    conditionals that contain barriers must be uniform in the block (their
    bounds and conditions must not depend on the thread), as CUDA requires:
    they run once per block with the thread loops inside. Values a thread
    computes before a barrier and uses after it are recomputed when they
    are pure (index arithmetic); otherwise the pass fails, pointing at the
    use.

    A warp's `nvvm.mma.sync` (the tensor-core matmuls' m16n8k16 on f16 or
    bf16, into f32) is first expanded into what each lane computes of it:
    the lanes store their fragments to workgroup memory, and after a
    barrier each lane sums its four elements of D from its warp's fragments,
    read where PTX's fragment layouts put each element of A and B; a second
    barrier frees the fragments' memory. A warp's `nvgpu.ldmatrix` (the
    fragments' loads from shared tiles, plain or transposed) becomes the
    loads of the elements PTX's layouts give each lane, from the rows the
    other lanes point to: their indices are computed again with their
    thread ids (they must be pure functions of the thread id). So the kernels' fragment indexing
    is tested on the CPU against the layouts of the PTX ISA.

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, ...)
               threads(%tx, %ty, %tz) in (%sx = %c256, ...)
               workgroup(%tile : memref<256xf32, #gpu.address_space<workgroup>>) {
      A(%tx)
      gpu.barrier
      B(%tx)
      gpu.terminator
    }
    // becomes
    %tile = memref.alloc() : memref<256xf32>
    scf.for %bz = %c0 to %c1 step %c1 {
      scf.for %by = %c0 to %c1 step %c1 {
        scf.for %i = %c0 to %n step %c1 {
          %bx = (%n - 1) - %i
          scf.parallel (%tz, %ty, %tx) = ... to (%c1, %c1, %c256) ... { A(%tx) }
          scf.parallel (%tz, %ty, %tx) = ... to (%c1, %c1, %c256) ... { B(%tx) }
        }
      }
    }
    memref.dealloc %tile : memref<256xf32>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // GACC_TARGET_CUDA_PASSES_TD
