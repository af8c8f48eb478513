//===- GaccAttrs.td - gacc enums and attributes ------------*- tablegen -*-===//
//
// Initializers, optimizers, learning-rate schedules and the transform
// configuration (precision, rematerialization, ZeRO) of a training step.
//
//===----------------------------------------------------------------------===//

#ifndef GACC_ATTRS_TD
#define GACC_ATTRS_TD

include "dialects/gacc/GaccBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Gacc_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"normal", 2>, I32EnumAttrCase<"uniform", 3>,
    I32EnumAttrCase<"xavier_uniform", 4>, I32EnumAttrCase<"xavier_normal", 5>,
    I32EnumAttrCase<"kaiming_uniform", 6>, I32EnumAttrCase<"kaiming_normal", 7>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}

def Gacc_InputKind : I32EnumAttr<"InputKind", "role of a batch input", [
    I32EnumAttrCase<"features", 0>, I32EnumAttrCase<"labels", 1>,
    I32EnumAttrCase<"tokens", 2>, I32EnumAttrCase<"mask", 3>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_InputKindAttr : EnumAttr<Gacc_Dialect, Gacc_InputKind, "input_kind"> {
  let summary = "The role of a batch input";
  let description = [{
    Used by `gacc.input`: `features`, `labels`, `tokens` or `mask`.

    ```mlir
    gacc.input @label : tensor<64xi32> labels
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_LossReduction : I32EnumAttr<"LossReduction", "loss reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"token_mean", 2>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_CollectiveReduction : I32EnumAttr<"CollectiveReduction",
    "how a collective combines the ranks' tensors", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_CollectiveReductionAttr
    : EnumAttr<Gacc_Dialect, Gacc_CollectiveReduction, "collective_reduction"> {
  let summary = "How a collective combines the ranks' tensors";
  let description = [{
    Used by `gacc.all_reduce` and `gacc.reduce_scatter`: `sum` or `mean`
    (the sum divided by the number of ranks).

    ```mlir
    %g = gacc.all_reduce mean %x ranks = 4 : tensor<8xf32>
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_LossReductionAttr
    : EnumAttr<Gacc_Dialect, Gacc_LossReduction, "reduction"> {
  let summary = "How a loss reduces over positions";
  let description = [{
    Used by `gacc.cross_entropy` and `gacc.mse_loss`: `sum`, `mean` or `token_mean`.

    ```mlir
    %l = gacc.cross_entropy token_mean %logits, %t : tensor<4x8x96xf32>, tensor<4x8xi32>
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula", [I32EnumAttrCase<"erf", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_GeluApproximationAttr
    : EnumAttr<Gacc_Dialect, Gacc_GeluApproximation, "gelu_approximation"> {
  let summary = "The GELU formula";
  let description = [{
    Used by `gacc.gelu`: the exact `erf` form or the `tanh` approximation.

    ```mlir
    %y = gacc.gelu %x approximation = tanh : tensor<4x512xf32>
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_Precision : I32EnumAttr<"Precision", "compute precision", [
    I32EnumAttrCase<"f32", 0>, I32EnumAttrCase<"f16", 1>,
    I32EnumAttrCase<"bf16", 2>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}
def Gacc_PrecisionAttr : EnumAttr<Gacc_Dialect, Gacc_Precision, "precision"> {
  let summary = "The compute precision of a training step";
  let description = [{
    Used by `gacc.train_step`: `f32`, `f16` or `bf16`.

    ```mlir
    gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1> precision bf16
    ```
  }];
  let assemblyFormat = "$value";
}

def Gacc_RematPolicy : I32EnumAttr<"RematPolicy",
    "which forward values the backward pass recomputes", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"blocks", 1>,
    I32EnumAttrCase<"sqrt", 2>, I32EnumAttrCase<"budget", 3>,
    I32EnumAttrCase<"matmuls", 4>
  ]> {
  let cppNamespace = "::mlir::gacc";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// A double-precision parameter, printed in the shortest form that parses back
// to the same value (0.999, 1e-08).
class Gacc_F64Parameter<string desc, string default = "">
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
      double value;
      if ($_parser.parseFloat(value))
        return ::mlir::failure();
      return ::llvm::APFloat(value);
    }() }];
  let printer = "$_printer << ::mlir::gacc::formatShortest($_self)";
  let defaultValue = default;
}

def Gacc_InitAttr : Gacc_Attr<"Init", "init"> {
  let summary = "How a parameter is initialized";
  let description = [{
    `kind` follows `torch.nn.init`. `scale` is the standard deviation of
    `normal`, the bound `a` of `uniform` (values in [-a, a]) and the gain of
    the xavier and kaiming initializers. Fans are computed as `torch.nn.init`
    does for a weight of shape `[out, in, k...]` (the `torch.nn.Linear`
    layout): fan-in `in·∏k`, fan-out `out·∏k`; kaiming uses fan-in. With a
    gain of `sqrt(1/3)`, `kaiming_uniform` is PyTorch's default `Linear`
    weight initializer. `zeros` and `ones` take no scale. `seed` makes every
    initializer reproducible: the runtime mixes it with the run's seed into
    the key of a Philox4x32-10 stream, in which element `i` of the parameter
    depends on `i` alone (docs/artifact.md gives the mapping), so a
    parameter has the same values however many threads fill it, on any
    machine.

    ```mlir
    #gacc.init<zeros>
    #gacc.init<normal, scale = 2.000000e-02, seed = 7>
    #gacc.init<kaiming_uniform, seed = 1>
    ```
  }];
  let parameters = (ins
    EnumParameter<Gacc_InitKind>:$kind,
    Gacc_F64Parameter<"scale or gain", "::llvm::APFloat(1.0)">:$scale,
    DefaultValuedParameter<"uint64_t", "0", "random seed">:$seed
  );
  let assemblyFormat = "`<` $kind (`,` struct($scale, $seed)^)? `>`";
  let genVerifyDecl = 1;
}

def Gacc_SGDAttr : Gacc_Attr<"SGD", "sgd"> {
  let summary = "Stochastic gradient descent, as torch.optim.SGD";
  let description = [{
    With momentum μ, dampening τ and weight decay λ:
    `g += λ·θ; b = μ·b + (1-τ)·g; g = nesterov ? g + μ·b : b; θ -= lr·g`.
    Nesterov needs a positive momentum and zero dampening.

    ```mlir
    #gacc.sgd<lr = 1.000000e-01, momentum = 9.000000e-01, nesterov = true>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"learning rate">:$lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$momentum,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$dampening,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$weight_decay,
    DefaultValuedParameter<"bool", "false">:$nesterov
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_AdamWAttr : Gacc_Attr<"AdamW", "adamw"> {
  let summary = "Adam with decoupled weight decay, as torch.optim.AdamW";
  let description = [{
    Bias-corrected first and second moments; the weight decay multiplies the
    parameter by `1 - lr·weight_decay` before the Adam update. Defaults are
    PyTorch's.

    ```mlir
    #gacc.adamw<lr = 1.000000e-03, weight_decay = 1.000000e-01>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"learning rate">:$lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.9)">:$beta1,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.999)">:$beta2,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0e-8)">:$eps,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.01)">:$weight_decay
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_AdamAttr : Gacc_Attr<"Adam", "adam"> {
  let summary = "Adam with an L2 penalty, as torch.optim.Adam";
  let description = [{
    Bias-corrected first and second moments of the gradient plus
    `weight_decay·θ` (coupled, unlike `#gacc.adamw`). Defaults are
    PyTorch's.

    ```mlir
    #gacc.adam<lr = 1.000000e-03, weight_decay = 1.000000e-04>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"learning rate">:$lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.9)">:$beta1,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.999)">:$beta2,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0e-8)">:$eps,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$weight_decay
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_AdamW8bitAttr : Gacc_Attr<"AdamW8bit", "adamw8bit"> {
  let summary = "AdamW with 8-bit moments, as bitsandbytes' AdamW8bit";
  let description = [{
    `#gacc.adamw`'s update, with both moments stored as bitsandbytes' 8-bit
    optimizers store them (Dettmers et al. 2022): in blocks of
    `block_size` elements of each parameter, one f32 absolute maximum per
    block (`exp_avg_absmax`, `exp_avg_sq_absmax`) and one byte per element
    (`exp_avg`, `exp_avg_sq`), the index of the nearest value of the
    dynamic map (signed for the first moment, unsigned for the second) to
    the element over its block's maximum: about 2 bytes of state per
    parameter instead of 8. Each step dequantizes, updates in f32 and
    quantizes again, fused into the update. Parameters with fewer than
    `min_8bit_size` elements keep f32 moments, as in bitsandbytes.

    ```mlir
    #gacc.adamw8bit<lr = 1.000000e-03, weight_decay = 1.000000e-01>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"learning rate">:$lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.9)">:$beta1,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.999)">:$beta2,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0e-8)">:$eps,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.01)">:$weight_decay,
    DefaultValuedParameter<"uint64_t", "2048">:$block_size,
    DefaultValuedParameter<"uint64_t", "4096">:$min_8bit_size
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_AdafactorAttr : Gacc_Attr<"Adafactor", "adafactor"> {
  let summary = "Adafactor (Shazeer & Stern 2018), as transformers' Adafactor";
  let description = [{
    Second moments of `g² + eps1` with decay `1 - t^decay_rate` at step t
    (counted from 1); a parameter of rank ≥ 2 keeps them factored, as a
    mean over its last dimension (`exp_avg_sq_row`) and over the one
    before (`exp_avg_sq_col`): O(n + m) state for an n×m matrix. The update
    `g / sqrt(v̂)` is divided by `max(1, RMS(update) / clip_threshold)`,
    then multiplied by the step size: `min(1e-2, 1/sqrt(t))` with
    `relative_step` (`min(1e-6·t, 1/sqrt(t))` with `warmup_init`), else the
    scheduled `lr`; with `scale_parameter` also by `max(eps2, RMS(θ))`. A
    positive `beta1` keeps a first moment of the updates (`exp_avg`); 0
    keeps none (transformers' `beta1=None`: the same numbers). Weight decay
    is `θ -= weight_decay·step·θ`. Defaults are transformers'; `lr` must
    be 0 (unset) with `relative_step` and positive without it, as there.

    ```mlir
    #gacc.adafactor<>
    #gacc.adafactor<lr = 1.000000e-03, scale_parameter = false, relative_step = false>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"learning rate without relative_step",
                      "::llvm::APFloat(0.0)">:$lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0e-30)">:$eps1,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0e-3)">:$eps2,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0)">:$clip_threshold,
    Gacc_F64Parameter<"", "::llvm::APFloat(-0.8)">:$decay_rate,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$beta1,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$weight_decay,
    DefaultValuedParameter<"bool", "true">:$scale_parameter,
    DefaultValuedParameter<"bool", "true">:$relative_step,
    DefaultValuedParameter<"bool", "false">:$warmup_init
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_LoraAttr : Gacc_Attr<"Lora", "lora"> {
  let summary = "The low-rank adapter of a frozen weight (gacc-lora)";
  let description = [{
    On a frozen `gacc.param` W (as its `gacc.lora` attribute): the model
    reads it as `W + scale·B·A`, with the trainable `a` ([r, in]) and `b`
    ([out, r]), without ever forming that sum (see `gacc-lora`).
    `transposed` when W is stored [in, out] (read by matmuls without
    `transpose_rhs`, as GPT-2's Conv1D) rather than [out, in]. Merging the
    adapter writes `W + scale·(B·A)` (transposed to W's layout).

    ```mlir
    gacc.param @q.weight : tensor<64x64xf32> = #gacc.init<normal> frozen {gacc.lora = #gacc.lora<a = @q.weight.lora_A, b = @q.weight.lora_B, scale = 2.0>}
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$a,
    "::mlir::FlatSymbolRefAttr":$b,
    Gacc_F64Parameter<"alpha / rank">:$scale,
    DefaultValuedParameter<"bool", "false">:$transposed
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Gacc_ConstantScheduleAttr : Gacc_Attr<"ConstantSchedule", "constant_lr"> {
  let summary = "A constant learning rate";
  let description = [{
    The optimizer's `lr` at every step.

    ```mlir
    #gacc.constant_lr
    ```
  }];
}

def Gacc_WarmupCosineScheduleAttr
    : Gacc_Attr<"WarmupCosineSchedule", "warmup_cosine"> {
  let summary = "Linear warmup, then cosine decay";
  let description = [{
    For step s (counted from 0): `lr·(s+1)/warmup_steps` while
    `s < warmup_steps`; then cosine decay from `lr` to `min_lr` over the
    remaining steps up to `total_steps`, and `min_lr` after that.

    ```mlir
    #gacc.warmup_cosine<warmup_steps = 100, total_steps = 5000, min_lr = 1.000000e-05>
    ```
  }];
  let parameters = (ins
    "uint64_t":$warmup_steps,
    "uint64_t":$total_steps,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$min_lr
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_WarmupPolynomialScheduleAttr
    : Gacc_Attr<"WarmupPolynomialSchedule", "warmup_polynomial"> {
  let summary = "Linear warmup, then polynomial decay (linear by default)";
  let description = [{
    For step s (counted from 0): `lr·(s+1)/warmup_steps` while
    `s < warmup_steps` (as `#gacc.warmup_cosine`); then
    `(lr - min_lr)·(1 - p)^power + min_lr` with p the fraction of the
    steps from `warmup_steps` to `total_steps` done, and `min_lr` after
    them. `power = 1`, `min_lr = 0` (the defaults) is transformers'
    default linear schedule (`get_linear_schedule_with_warmup`, whose
    warmup starts from 0 instead of `lr/warmup_steps`); other powers and
    end rates are its `get_polynomial_decay_schedule_with_warmup`.

    ```mlir
    #gacc.warmup_polynomial<warmup_steps = 100, total_steps = 5000>
    #gacc.warmup_polynomial<warmup_steps = 0, total_steps = 5000, min_lr = 1.000000e-07, power = 2.000000e+00>
    ```
  }];
  let parameters = (ins
    "uint64_t":$warmup_steps,
    "uint64_t":$total_steps,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.0)">:$min_lr,
    Gacc_F64Parameter<"", "::llvm::APFloat(1.0)">:$power
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_RematAttr : Gacc_Attr<"Remat", "remat"> {
  let summary = "Rematerialization (activation checkpointing) policy";
  let description = [{
    `none` keeps every activation the backward pass needs; `blocks` keeps only
    block inputs; `sqrt` keeps √n evenly spaced segment inputs; `matmuls` keeps
    only matmul, convolution and fused attention outputs; `budget` recomputes as little as possible so that the
    planned peak stays within `budget` bytes (required for, and only for, that
    policy).

    ```mlir
    #gacc.remat<sqrt>
    #gacc.remat<budget, budget = 1073741824>
    ```
  }];
  let parameters = (ins
    EnumParameter<Gacc_RematPolicy>:$policy,
    DefaultValuedParameter<"uint64_t", "0", "bytes">:$budget
  );
  let assemblyFormat = "`<` $policy (`,` struct($budget)^)? `>`";
  let genVerifyDecl = 1;
}

def Gacc_LossScaleAttr : Gacc_Attr<"LossScale", "loss_scale"> {
  let summary = "Dynamic loss scaling, as torch.amp.GradScaler";
  let description = [{
    The backward pass starts from `loss · scale` so that small f16
    gradients do not flush to zero; the step divides the gradients by the
    scale again. A step whose gradients hold an infinity or NaN is skipped
    (parameters and optimizer state unchanged) and multiplies the scale by
    `backoff_factor`; after `growth_interval` good steps in a row the scale
    grows by `growth_factor`. Defaults are GradScaler's.

    ```mlir
    #gacc.loss_scale<>
    #gacc.loss_scale<init = 1.024000e+03, growth_interval = 100>
    ```
  }];
  let parameters = (ins
    Gacc_F64Parameter<"", "::llvm::APFloat(65536.0)">:$init,
    Gacc_F64Parameter<"", "::llvm::APFloat(2.0)">:$growth_factor,
    Gacc_F64Parameter<"", "::llvm::APFloat(0.5)">:$backoff_factor,
    DefaultValuedParameter<"uint64_t", "2000">:$growth_interval
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_ZeroAttr : Gacc_Attr<"Zero", "zero"> {
  let summary = "ZeRO data-parallel sharding";
  let description = [{
    Stage 0 is plain data parallelism (gradients all-reduced); stage 1 shards
    the optimizer state, stage 2 the gradients too, stage 3 the parameters too,
    over `ranks` ranks.

    ```mlir
    #gacc.zero<stage = 2, ranks = 8>
    ```
  }];
  let parameters = (ins "uint64_t":$stage, "uint64_t":$ranks);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Gacc_OptimizerAttr
    : AnyAttrOf<[Gacc_SGDAttr, Gacc_AdamWAttr, Gacc_AdamAttr,
                 Gacc_AdamW8bitAttr, Gacc_AdafactorAttr]>;
def Gacc_ScheduleAttr
    : AnyAttrOf<[Gacc_ConstantScheduleAttr, Gacc_WarmupCosineScheduleAttr,
                 Gacc_WarmupPolynomialScheduleAttr]>;

#endif // GACC_ATTRS_TD
