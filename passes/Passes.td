//===- Passes.td - gacc passes -----------------------------*- tablegen -*-===//

#ifndef GACC_PASSES_TD
#define GACC_PASSES_TD

include "passes/PassBase.td"

def MixedPrecision : GaccPass<"gacc-mixed-precision", "ModuleOp"> {
  let consumes = "the model function, the step's `precision`";
  let produces = "the model with `gacc.cast` ops placed by the autocast policy, marked `gacc.autocast_precision`";
  let summary = "Autocast: run a model's ops in f16 or bf16 by an op policy";
  let description = [{
    For every `gacc.train_step` whose `precision` is `f16` or `bf16` (or all
    of them, with the `dtype` option, which also sets their precision),
    places `gacc.cast` ops in the model function so that each op computes
    in the type its class asks for, like `torch.autocast`:

    * low precision: `matmul` (f16/bf16 operands, f32 accumulation);
    * f32: `exp`, `log`, `rsqrt`, `softmax`, `log_softmax`, `layer_norm`,
      `batch_norm`, `reduce_sum`, `reduce_mean`, `cross_entropy`,
      `mse_loss` (autocast's fp32 list: range- and precision-sensitive
      math, losses and sums; batch norm's statistics stay f32 as in
      PyTorch);
    * everything else runs in the widest float type of its activation
      operands; parameters and constants take the type of the activations
      they meet (so a bias add after a low-precision matmul stays low, as in
      `torch.nn.Linear` under autocast), and an op on parameters alone keeps
      their type.

    Parameters stay f32 (the master weights: the optimizer updates them
    and its state in f32); each parameter is cast once per use type, and
    the gradient of a cast is the gradient cast back, so gradients reach
    the parameters, and accumulate across micro-batches, in f32. The model's
    results keep their declared types; the model is marked
    `gacc.autocast_precision`. A parameter read only through casts to the
    low type is then kept by `gacc-build-step` in 16 bits, with its
    gradient, and its f32 master weights as optimizer state (DeepSpeed's
    layout: 2 + 2 + 12 bytes per parameter with AdamW), so the casts cost
    nothing per step.

    `gacc.autocast = "low"` or `"f32"` on an op overrides its class.

    ```mlir
    %h = gacc.matmul %x, %w transpose_rhs : tensor<64x784xf32>, tensor<256x784xf32> -> tensor<64x256xf32>
    // becomes (dtype=bf16)
    %xl = gacc.cast %x : tensor<64x784xf32> to tensor<64x784xbf16>
    %wl = gacc.cast %w : tensor<256x784xf32> to tensor<256x784xbf16>
    %h = gacc.matmul %xl, %wl transpose_rhs : tensor<64x784xbf16>, tensor<256x784xbf16> -> tensor<64x256xbf16>
    ```
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"",
           "f16 or bf16 for every step (default: each step's precision)">
  ];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
  let statistics = [
    Statistic<"numCasts", "casts", "Casts placed">
  ];
}

def Lora : GaccPass<"gacc-lora", "ModuleOp"> {
  let consumes = "trainable `gacc.param`s matching `targets`, read by `gacc.matmul`s";
  let produces = "those parameters `frozen` with a `#gacc.lora` adapter, their matmuls with the low-rank branch";
  let summary = "Low-rank adapters (LoRA) on frozen weights, as peft";
  let description = [{
    Every trainable matrix whose whole name matches the regular
    expression `targets` (peft's `target_modules` as a string) must be a
    matrix read only as the rhs of `gacc.matmul`s (a linear layer, in the
    `[out, in]` layout with `transpose_rhs` or `[in, out]` without);
    matched parameters that are not matrices (biases) are left out. As
    with peft's defaults (`bias="none"`), every parameter of the module
    becomes `frozen`, and each adapted one gets two trainable parameters
    beside it, as peft initializes them: `<name>.lora_A` `[rank, in]` (`kaiming_uniform` with
    PyTorch's Linear gain) and `<name>.lora_B` `[out, rank]` (zeros). Each
    matmul `y = x·W` then computes `y + (alpha/rank)·(dropout(x)·Aᵀ)·Bᵀ`:
    the same function as `W + (alpha/rank)·B·A` without forming it, so
    that autodiff builds no gradient, and no weight-gradient matmul, for
    W. The frozen weight records its adapter (`gacc.lora`), which merging
    (`gacc export --merge-lora`) reads. `gacc --lora rank=8,alpha=16,
    targets=REGEX` and `lora=` on `gacc.from_torch` run it first.

    ```mlir
    %y = gacc.matmul %x, %w transpose_rhs : tensor<8x32xf32>, tensor<64x32xf32> -> tensor<8x64xf32>
    // becomes (rank 4, alpha 8)
    %y = gacc.matmul %x, %w transpose_rhs : tensor<8x32xf32>, tensor<64x32xf32> -> tensor<8x64xf32>
    %a = gacc.load @w.lora_A : tensor<4x32xf32>
    %b = gacc.load @w.lora_B : tensor<64x4xf32>
    %xa = gacc.matmul %x, %a transpose_rhs : tensor<8x32xf32>, tensor<4x32xf32> -> tensor<8x4xf32>
    %xab = gacc.matmul %xa, %b transpose_rhs : tensor<8x4xf32>, tensor<64x4xf32> -> tensor<8x64xf32>
    %s = gacc.mul %xab, %c2 : tensor<8x64xf32>, tensor<f32>
    %y2 = gacc.add %y, %s : tensor<8x64xf32>, tensor<8x64xf32>
    ```
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"8",
           "The adapters' rank r">,
    Option<"alpha", "alpha", "double", /*default=*/"8.0",
           "The branch is scaled by alpha / rank">,
    Option<"dropout", "dropout", "double", /*default=*/"0.0",
           "Dropout on the branch's input">,
    Option<"targets", "targets", "std::string", /*default=*/"",
           "A regular expression that the whole name of each adapted "
           "parameter matches">
  ];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
}

def Zero : GaccPass<"gacc-zero", "ModuleOp"> {
  let consumes = "the step's `#gacc.zero`";
  let produces = "the model and `gacc.input`s rebuilt for one rank's examples";
  let summary = "Distribute training steps over ZeRO data-parallel ranks";
  let description = [{
    Sets each `gacc.train_step`'s `#gacc.zero<stage, ranks>` and rebuilds
    its model and `gacc.input` declarations for the examples of one rank:
    `batch_size` stays the global batch B, every input holds B/N examples
    (each rank reads its own slice), and `micro_batch_size` splits a rank's
    examples. The passes after it make the N copies of the step equal to
    the one-rank step (see docs/zero.md):

    * `gacc-accumulate` normalizes each rank's loss and gradients by the
      count of the whole global batch (the non-ignored targets of all ranks
      for `token_mean`, summed with `gacc.all_reduce`), so that summing
      over ranks gives the full-batch values exactly;
    * `gacc-build-step` reduces them once per step, after every
      micro-batch, each where the backward computes it: stage 0 all-reduces
      each gradient; stages 1 and 2 reduce-scatter it and update this
      rank's shard of the parameter with its shard of the optimizer state,
      then all-gather the parameter; stage 3 keeps only the shard of the
      parameter too and all-gathers it before each op that reads it,
      forward and backward, so that it is whole only while that op runs.
      Stage 2 keeps only the gradient's shard in the state; stage 1 the
      rank's own whole gradient. With several micro-batches, stages 2 and 3
      reduce-scatter every micro-batch's gradients in `gacc-accumulate`
      into sharded accumulators. The gradient norm and the loss-scale
      overflow check are summed over the ranks.

    Tensors are sharded flat and padded (see `Zero.h`), so the
    communication per step is 2Ψ elements in stages 0-2 (stage 2 with K
    micro-batches: (K + 1)Ψ) and at most 3Ψ per micro-batch in stage 3 for
    Ψ (padded) parameters, plus a few scalars (and for Adafactor the row and
    column sums of each factored parameter: its moments are whole on every
    rank).

    ```mlir
    // gacc-zero{stage=1 ranks=4}: 64 examples, 16 per rank
    gacc.input @image : tensor<16x784xf32> features
    gacc.train_step @train model @mlp batch_size 64 optimizer ...
        zero #gacc.zero<stage = 1, ranks = 4>
    ```
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"-1",
           "ZeRO stage 0, 1, 2 or 3 (default: each step's)">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "Data-parallel ranks (default: each step's)">
  ];
  let dependentDialects = [
    "::mlir::gacc::GaccDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SplitBatch : GaccPass<"gacc-split-batch", "ModuleOp"> {
  let consumes = "a step that runs micro-batches (or several ranks)";
  let produces = "the micro-batch models: the step's `micro_model`, `last_micro_model`";
  let summary = "The model of one micro-batch, for gradient accumulation";
  let description = [{
    For a `gacc.train_step` whose ranks run their examples as micro-batches
    (`micro_batch_size` below the rank's batch, or several ZeRO ranks, whose
    losses are normalized by the global batch's count), builds the model of
    one micro-batch (see `BatchSplit.h`): its arguments are the inputs' rows
    of the micro-batch, in declaration order, and it returns the loss summed
    over its examples, then the model's other results. When the micro-batch
    size m does not divide the rank's batch B, it also builds the model of
    the last, smaller micro-batch (B mod m examples). The step refers to
    them as `micro_model` and `last_micro_model` (from the model as
    `gacc-mixed-precision` and `gacc-zero` left it): `gacc-autodiff` and
    `gacc-remat` then act on one micro-batch, and `gacc-accumulate` builds
    the loop over them. Ops whose result
    depends on how the batch is split are rejected with a located error,
    but for `gacc.batch_norm`, which takes its statistics over each
    micro-batch (as PyTorch's accumulation loop does): the step is then not
    equal to one over the whole batch, and a warning at the batch norm says
    so (every model without batch norm keeps the equality).

    ```mlir
    gacc.train_step @train model @mlp batch_size 64 micro_batch_size 16 ...
    // becomes
    func.func @mlp_micro16(%image: tensor<16x784xf32>, %label: tensor<16xi32>)
        -> tensor<f32> { ... gacc.cross_entropy sum ... }
    gacc.train_step @train model @mlp batch_size 64 micro_batch_size 16 ...
        micro_model @mlp_micro16
    ```
  }];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
}

def FuseAttention : GaccPass<"gacc-fuse-attention", "ModuleOp"> {
  let consumes = "models with attention written as matmul, scale, mask, softmax, matmul";
  let produces = "`gacc.attention` in their place";
  let summary = "Scaled dot-product attention as one op, before autodiff";
  let description = [{
    Replaces, in every function,
    `matmul(softmax(select(causal_mask, matmul(q, k, transpose_rhs) · scale
    [+ key_bias], -inf), axis = 3), v)` by `gacc.attention`: the scale, the
    key bias (`[B, 1, 1, S]`, one value per key, reshaped to `[B, S]` in
    the compute type),
    the causal mask and casts between any of them (autocast's f32 softmax)
    are optional, and every intermediate must have no other use. A bias
    computed from a trainable parameter is left alone (the fused gradient
    gives the bias none), as is a mask that is not the scores' `[T, S]`.
    Run before
    `gacc-autodiff`, so that the backward is `gacc.attention_grad`, which
    reads the forward's log-sum-exp instead of the T x S probabilities: the
    saved activations of attention become linear in T. The scores and
    their softmax are then in f32 even where autocast rounded them to bf16.

    Every target's pipeline runs it. The CPU lowers every `gacc.attention`
    (gacc-cpu-attention-to-call); the CUDA targets' pipeline runs it with
    `cuda-kernels-only`: only attention that `gacc-cuda-flash-attention`
    lowers is fused (f16 or bf16, a head size that is a multiple of 16 up
    to 64, lengths that are multiples of 64, T = S under the causal mask).

    ```mlir
    %s = gacc.matmul %q, %k transpose_rhs : ... -> tensor<2x4x64x64xbf16>
    %t = gacc.mul %s, %scale : tensor<2x4x64x64xbf16>, tensor<bf16>
    %u = gacc.select %mask, %t, %ninf : tensor<64x64xi1>, ...
    %p = gacc.softmax %u axis = 3 : tensor<2x4x64x64xbf16>
    %o = gacc.matmul %p, %v : ... -> tensor<2x4x64x32xbf16>
    // becomes
    %o, %lse = gacc.attention %q, %k, %v into %e0, %e1
        scale = 1.767767e-01 causal : ...
    ```
  }];
  let dependentDialects = ["::mlir::gacc::GaccDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"cudaKernelsOnly", "cuda-kernels-only", "bool", /*default=*/"false",
           "Fuse only what the CUDA target's attention kernels take">
  ];
  let statistics = [
    Statistic<"numFused", "fused", "Attentions fused">
  ];
}

def Autodiff : GaccPass<"gacc-autodiff", "ModuleOp"> {
  let consumes = "the step's `model`, or its `micro_model`s";
  let produces = "gradient functions (`gacc.gradients`): the step's `gradient` or `micro_gradient`s";
  let summary = "Reverse-mode automatic differentiation of model functions";
  let description = [{
    For every `gacc.train_step`, builds the gradient function of the
    function it trains: its model (the step's `gradient`), or the models of
    its micro-batches from `gacc-split-batch` (`micro_gradient` and
    `last_micro_gradient`). A gradient function `<fn>_grad` returns the
    function's results followed by the gradient of the loss (result 0)
    with respect to every trainable `gacc.param` (not `frozen`), in
    declaration order; the `gacc.gradients` attribute lists the parameters.
    The backward pass calls each op's `VJPOpInterface` rule in reverse
    order, for the ops whose results are computed from a trainable
    parameter (nothing is built for what only frozen parameters, inputs and
    constants compute); a rule takes the gradient of the op's first result
    (the loss must not depend on the others, such as batch norm's running
    statistics). Gradients of values used several times are summed, and
    parameters the loss does not depend on get zeros. The gradients of
    slices side by side along one axis (`q, k, v = qkv.split(C, dim=2)`)
    are joined with `gacc.concat` instead: summed as zero pads, they cost
    GPT-2 three zero-filled tensors and two additions a layer. The
    forward's `gacc.assign` ops stay in the gradient function. An op on a
    path from a parameter to the loss that has no rule is an error. The
    backward starts from 1, from `gacc.loss_scale` when the step uses
    dynamic loss scaling (`f16`), so the gradients come out scaled, or, for
    a micro-batch, from a trailing scalar argument (the loss scale over the
    global batch's count, which `gacc-accumulate` passes in).

    ```mlir
    func.func @m() -> tensor<f32> {
      %w = gacc.load @w : tensor<3xf32>
      %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    // becomes, beside @m:
    func.func @m_grad() -> (tensor<f32>, tensor<3xf32>)
        attributes {gacc.gradients = [@w]} {
      ...
      %g = gacc.broadcast %dl : tensor<1xf32> -> tensor<3xf32>
      return %l, %g : tensor<f32>, tensor<3xf32>
    }
    gacc.train_step @train model @m ... gradient @m_grad
    ```
  }];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
  let statistics = [
    Statistic<"numRules", "derivative-rules", "Derivative rules applied">
  ];
}

def Remat : GaccPass<"gacc-remat", "ModuleOp"> {
  let consumes = "the step's gradient functions and `remat` policy";
  let produces = "the same functions, recomputing the forward values the policy does not save";
  let summary = "Rematerialization: recompute forward values in the backward";
  let description = [{
    For every `gacc.train_step` whose `remat` policy is not `none` (or all
    of them, with the `policy` option), rewrites the gradient functions of
    `gacc-autodiff` it refers to (`gradient`, or those of its micro-batches:
    `micro_gradient`, `last_micro_gradient`) so that each backward reads
    only the forward values the policy saves; every other forward value it
    needs is recomputed, just before its first use in the backward, from
    saved values, parameters, inputs and constants. The forward ops are
    those the function's leading results (the model's) and its
    `gacc.assign`s are computed from, and the assigns, which are never
    recomputed (the running statistics are updated once); the backward
    follows them. Saved values reach the recomputation through
    a `gacc.optimization_barrier`, so that CSE cannot fold it back into the
    forward pass.

    * `blocks`: saves the `gacc.checkpoint` values (block inputs) and
      whatever else crosses a block boundary; recomputes each block, as
      `torch.utils.checkpoint` around every block.
    * `sqrt`: Chen et al. 2016: cuts the forward into ~√n segments of equal
      activation bytes and saves what crosses a segment boundary.
    * `matmuls`: saves only matmul, convolution and fused attention results
      (JAX's `dots_saveable`, PyTorch's selective checkpointing of
      matmuls and SDPA); the cheap elementwise work, softmax and
      normalizations are recomputed.

    * `budget`: the segment boundaries with the least recompute whose kept
      activations fit the step's `gacc.remat_activation_budget` (alone,
      the pass reads the policy's budget as that). A dynamic program,
      exact within its model, over the forward op chain: a non-last segment costs the
      estimated time of recomputing what its backward reads (and their
      ancestors in
      it), keeps the values it defines that a later segment uses, and
      needs its recomputed values at once during its backward; a schedule
      needs Σ kept + the last segment's + max recomputed bytes. Labels
      (time, Σ kept, max recomputed) per boundary, pruned to their Pareto
      front, make the search exact within this model: O(n²) segments for
      n forward ops, times the labels at their start. Bytes count in units
      of about 1/128 of what no remat keeps (a power of two), each
      segment's rounded up (the model
      overstates memory slightly, never understates it): with exact bytes
      the fronts grew to thousands of labels at GPT-2-small width.
      `gacc-configure-step`
      (the `remat=budget remat-budget=...` options of every entry point)
      derives the activation budget from the peak budget with the memory
      planner, keeps the cheapest schedule whose planned peak fits, and
      names the least feasible peak when none does.

    In the segment policies the last segment is kept: its backward comes
    first, while its activations are still alive. An op's `gacc.remat =
    "save"` or `"recompute"` attribute overrides the policy for its result
    (JAX's `checkpoint_name`, PyTorch's selective checkpointing); on a
    `gacc.checkpoint` it applies to the whole block that follows, up to the
    next checkpoint (ops of the block may override it again). Recomputation
    clones the forward op, so random ops (dropout) replay the same bits:
    gradients are bitwise those of `none`.

    ```mlir
    // forward:  %h = gacc.relu %a ...      backward: ... gacc.mul %dh, %h ...
    // becomes   backward:
    %s = gacc.optimization_barrier %a : tensor<64x256xf32>
    %h2 = gacc.relu %s : tensor<64x256xf32>
    ... gacc.mul %dh, %h2 ...
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"\"",
           "none, blocks, sqrt or matmuls for every step (default: each "
           "step's remat attribute, budget included)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark per gradient function: kept and saved bytes, "
           "recomputed ops and their estimated cost">
  ];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
  // Statistics need an LLVM built with them (Debian's is not): `report`
  // says the same as remarks.
  let statistics = [
    Statistic<"numRecomputed", "recomputed-ops",
              "Forward ops cloned into the backward">,
    Statistic<"activationBytes", "activation-bytes",
              "Bytes of forward values the backward read before">,
    Statistic<"savedBytes", "saved-bytes",
              "Bytes of forward values the backward reads after">,
    Statistic<"recomputePercent", "recompute-percent",
              "Estimated recompute time, percent of the forward's">
  ];
}

def Accumulate : GaccPass<"gacc-accumulate", "ModuleOp"> {
  let consumes = "the step's `micro_gradient`s";
  let produces = "the step's `gradient`: a loop over the micro-batches, normalized by the global count";
  let summary = "Micro-batched gradient accumulation equal to the full batch";
  let description = [{
    For a `gacc.train_step` whose ranks run micro-batches (its
    `micro_gradient` and `last_micro_gradient`, from `gacc-split-batch`,
    `gacc-autodiff` and, when asked, `gacc-remat`), builds its `gradient`:
    a loop over the ceil(B/m) micro-batches of m examples of the rank's B,
    an `scf.for` over the B/m full micro-batches, with the loss sum, one
    accumulator per gradient (in the parameters' type) and each further
    model output as iteration values, then the smaller last micro-batch if
    m does not divide B. Each micro-batch runs its gradient function inlined
    on its rows of the inputs (the frozen parameters it assigns, such as
    batch norm's running statistics, carried from one micro-batch to the
    next as iteration values and assigned once after the last: micro-batch
    k reads what k-1 wrote, as in PyTorch's accumulation loop; on several
    ranks rank 0's values, as DistributedDataParallel broadcasts buffers),
    with the loss reduced by `sum` and the
    backward seeded by (loss scale or 1) / count, so that the accumulated
    gradients come out normalized by the global count of the whole batch:
    the examples (`mean`), the non-ignored targets (`token_mean`, counted
    on the full batch before the loop) or the elements (`mse_loss mean`);
    the loss sum is divided once. So the result equals the full-batch step,
    not the average of per-micro-batch means (the Hugging Face Trainer bug
    fixed in transformers #34191). On several ZeRO ranks it runs even for
    one micro-batch, over the rank's examples, with the count of the global
    batch (the ranks' target counts all-reduced for `token_mean`); in
    stages 2 and 3 each micro-batch's gradients are reduce-scattered into
    sharded accumulators, so the gradient function returns this rank's
    shards (their type says so). Dropout draws an independent mask per
    micro-batch. With several micro-batches it also builds the step's
    `eval_model`, the same loop over the micro-batch models, forward only
    (no assigns): the loss summed and divided by the rank's count, the
    outputs placed in their rows. `gacc_eval` runs it, so that evaluation
    needs no more memory than a training micro-batch (at the full batch its
    activations could exceed the budget the micro-batch was chosen for) and
    reuses the step's loop nests. The micro-batch functions are then erased.

    ```mlir
    %loss, %gw = scf.for %k = %c0 to %c4 step %c1
        iter_args(%sum = %zero, %acc = %zeros) -> (tensor<f32>, tensor<10x784xf32>) {
      %x = tensor.extract_slice %image[%offset, 0] [16, 784] [1, 1] ...
      ...  // the micro-batch model and its backward pass
      scf.yield %sum2, %acc2 : tensor<f32>, tensor<10x784xf32>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::gacc::GaccDialect"
  ];
}

def Decompose : GaccPass<"gacc-decompose"> {
  let consumes = "composite gacc ops (softmax, layer norm, losses, ...)";
  let produces = "primitive gacc ops";
  let summary = "Rewrite composite gacc ops into primitive ones";
  let description = [{
    Expands the ops that have a formula in terms of others, so that the
    lowering to linalg handles primitives only: softmax and log-softmax
    (max-subtracted, numerically stable), layer norm, batch norm (the
    batch's statistics and the running ones' update in training, the
    running statistics with `inference`), GELU (both forms),
    sigmoid, the mean reduction, cross-entropy (log-softmax, one-hot, and a
    division by the reduction's count) and MSE. Run it after `gacc-autodiff`,
    whose rules use the composite ops.

    ```mlir
    %p = gacc.softmax %x axis = 1 : tensor<4x10xf32>
    // becomes
    %m = gacc.reduce_max %x axes = [1] keepdims : tensor<4x10xf32> -> tensor<4x1xf32>
    %z = gacc.sub %x, %m : tensor<4x10xf32>, tensor<4x1xf32>
    %e = gacc.exp %z : tensor<4x10xf32>
    %s = gacc.reduce_sum %e axes = [1] keepdims : tensor<4x10xf32> -> tensor<4x1xf32>
    %p = gacc.div %e, %s : tensor<4x10xf32>, tensor<4x1xf32>
    ```
  }];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
}

def BuildStep : GaccPass<"gacc-build-step", "ModuleOp"> {
  let consumes = "the step's `gradient`, `model`, optimizer and parameters";
  let produces = "the entry points `gacc_step` and `gacc_eval` over the four arenas (`gacc.arena`)";
  let summary = "Build the compiled entry points of a training step";
  let description = [{
    Replaces the model, the step's `gradient` (from `gacc-autodiff`, or
    `gacc-accumulate` with micro-batches; its types are checked), the
    declarations and the `gacc.train_step` by two functions over the byte
    arenas the runtime owns (see `StepLayout.h`):

    * `gacc_step(state, batch, io, workspace)`: the gradient function
      inlined (forward and backward), the gradients unscaled (loss
      scaling), reduced over the ranks, their global norm (a zero-padded
      gradient's squares taken over what the pad surrounds: a convolution's
      taps that read only padding) and clipping, the
      optimizer's update of each parameter written back in place as fused
      elementwise updates (a 16-bit parameter's f32 master weights are
      updated and rounded into it), and the loss scale's update; each
      `gacc.assign` writes its value into the frozen parameter's slot after
      the forward and backward passes (frozen parameters have no gradient
      slot and no update);
    * `gacc_eval(state, batch, io, workspace)`: the forward pass only,
      without assigns, dropout skipped, batch norm with its running
      statistics (`inference`).

    Each argument carries its role as `gacc.arena`. The workspace arena is
    unused here: `gacc-plan-buffers` places the bufferized step's
    temporaries in it.

    The update is the optimizer class's of the step's optimizer attribute
    (passes/optimizers/: SGD with momentum, dampening, nesterov and weight
    decay; AdamW with decoupled weight decay), with its state slots keeping
    torch.optim's names. Its per-step scalars (the scheduled learning rate,
    bias corrections) are read from io slots `hyper.<name>`, which the
    runtime fills by name each step from the step counter, as torch.optim
    computes them. Both functions have C interfaces.

    With `#gacc.zero`, the collectives of `gacc-zero` (ZeroCollectives.h)
    are placed here as the step is built, not by a pass of their own: they
    change the types inside it. A ZeRO-3 parameter is gathered from its
    shard in place of each read inside the inlined model (`gacc.load` has
    the whole parameter's type); each gradient is reduced after it is
    unscaled and before the norm, and stage 1 keeps the rank's own whole
    gradient in its slot while the update runs on shards. A pass before
    this one would reduce before unscaling (other numbers); a pass after
    would find the step ill-typed without them.

    ```mlir
    func.func @gacc_step(%state: memref<?xi8> {gacc.arena = "state"},
                         %batch: memref<?xi8> {gacc.arena = "batch"},
                         %io: memref<?xi8> {gacc.arena = "io"},
                         %workspace: memref<?xi8> {gacc.arena = "workspace"})
        attributes {llvm.emit_c_interface} {
      %c0 = arith.constant 0 : index
      %v = memref.view %state[%c0][] : memref<?xi8> to memref<4x3xf32>
      %w = bufferization.to_tensor %v restrict writable : ...
      ...
      bufferization.materialize_in_destination %w_new in restrict writable %v
      return
    }
    ```
  }];
  let options = [
    Option<"stepName", "step", "std::string", /*default=*/"",
           "The gacc.train_step to build (default: the only one)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect",
    "::mlir::gacc::GaccDialect"
  ];
}

def WriteInPlace : GaccPass<"gacc-write-in-place", "func::FuncOp"> {
  let consumes = "bufferized entry points copying temporaries into arena slots";
  let produces = "the values computed in their slots (`memref.view`s of the arenas)";
  let summary = "Compute arena slots in place instead of copying into them";
  let description = [{
    After one-shot bufferization, the entry points of `gacc-build-step`
    compute new parameters, optimizer state and gradients into temporary
    buffers and then copy them into their slots of the state arena
    (`bufferization.materialize_in_destination` on a memref). This pass
    makes the temporary the slot itself: for `memref.copy %tmp, %slot`
    where `%tmp` is a `memref.alloc` of the same bytes (or a reshape of
    one: a gradient reduced into `1x1xN` and flattened) and `%slot` a
    `memref.view` of a function argument at a constant offset, every use
    of `%tmp` reads or writes the slot's bytes instead (a view of them
    with the temporary's shape) and the copy disappears, provided that

    * nothing between the allocation and the copy touches the slot's
      bytes, except an all-parallel `linalg.generic` that reads the slot
      at the same indices it writes `%tmp` (the update `p = f(p, g)`)
      before anything else touches `%tmp`, and
    * nothing between the copy and the last use of `%tmp` writes them or
      `%tmp`.

    When `%tmp` holds several values in turn (bufferization reuses a dead
    operand's buffer: an optimizer's clipped gradient, then the new second
    moment, then the new parameter) and the copy saves one of them, the op
    that wrote that value (all of `%tmp`, an all-parallel `linalg.generic`
    not reading `%tmp`'s old value through its output) writes the slot
    instead, and the ops that read the value, up to the next such
    overwrite of `%tmp`, read the slot; `%tmp` keeps its other values.
    This needs nothing else to touch the slot between that write and the
    copy, nothing to write it after the copy before the value's last read,
    and `%tmp` to be a direct operand of ops of the copy's block only.

    Memory accesses come from `MemoryEffectOpInterface`; a buffer whose
    origin is unknown may be the slot. This saves a pass over every
    parameter, gradient and optimizer slot per step and takes the
    gradients out of the workspace.

    ```mlir
    %tmp = memref.alloc() : memref<256xf32>
    linalg.generic ins(%p, %g : ...) outs(%tmp : memref<256xf32>) {...}
    memref.copy %tmp, %p : memref<256xf32> to memref<256xf32>
    // becomes
    linalg.generic ins(%p, %g : ...) outs(%p : memref<256xf32>) {...}
    ```
  }];
  let statistics = [
    Statistic<"numElided", "elided-copies", "Copies into slots removed">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PlanBuffers : GaccPass<"gacc-plan-buffers", "func::FuncOp"> {
  let consumes = "bufferized entry points with `gacc.arena` arguments";
  let produces = "temporaries placed in the workspace arena; `gacc.workspace_bytes`, `gacc.unplanned_bytes`";
  let summary = "Place a bufferized step's temporaries in its workspace arena";
  let description = [{
    A static memory plan with buffer reuse. For a function with a
    `gacc.arena = "workspace"` argument (the entry points of
    `gacc-build-step`), after one-shot bufferization and before buffer
    deallocation:

    1. Liveness: every statically shaped `memref.alloc` lives from its
       position in program order to the last use of any value that may
       alias it (views, casts, reshapes, loop iteration arguments and
       results, `scf.if` results). A use inside a loop that does not
       contain the allocation keeps the buffer alive to the loop's end.
    2. Placement: greedy by size (largest first; as TensorFlow Lite's
       arena planner), each buffer at the lowest 64-byte aligned offset
       free of every buffer whose lifetime overlaps its own. Buffers
       allocated inside a loop body live within one iteration, so all
       iterations reuse the same bytes.
    3. Rewrite: each placed allocation becomes a `memref.view` of the
       workspace at its offset, and the function gets
       `gacc.workspace_bytes`, the arena size the runtime allocates. The
       `gacc.arena` argument attributes are dropped.

    Buffers the plan cannot place stay `memref.alloc` (freed by the
    deallocation pipeline): dynamic shapes, non-identity layouts, and
    buffers that outlive a loop iteration that allocated them (yielded
    to the next one). Their bytes are reported as
    `gacc.unplanned_bytes`, counted twice for loop-carried ones (the
    previous iteration's is alive while the next is computed).

    ```mlir
    %a = memref.alloc() : memref<64x256xf32>
    // becomes
    %c0 = arith.constant 0 : index
    %a = memref.view %workspace[%c0][] : memref<?xi8> to memref<64x256xf32>
    ```
  }];
  let statistics = [
    Statistic<"numPlanned", "planned-buffers", "Buffers placed in the arena">,
    Statistic<"numUnplanned", "unplanned-buffers",
              "Buffers left to the heap">,
    Statistic<"plannedBytes", "planned-bytes",
              "Bytes of the placed buffers, without reuse">,
    Statistic<"workspaceBytes", "workspace-bytes",
              "Bytes of the workspace arena, with reuse">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // GACC_PASSES_TD
