//===- Passes.td - gacc compiler passes ---------------------*- tablegen -*-===//

#ifndef GACC_COMPILER_PASSES_TD
#define GACC_COMPILER_PASSES_TD

include "passes/PassBase.td"

def ConfigureStep : GaccPass<"gacc-configure-step", "ModuleOp"> {
  let consumes = "a model, its `gacc.train_step` and the pipeline's options";
  let produces = "the step configured: batch, micro-batch, precision, remat, ZeRO, optimizer overrides";
  let summary = "Apply the training pipeline's options to a gacc.train_step";
  let description = [{
    The first pass of `gacc-training-pipeline`: sets what the options give
    on the `gacc.train_step` named `step` (or the only one), as the `gacc`
    flags of the same names do, and leaves everything else as the model
    says. Its options are the pipeline's (`TrainingPipelineOptions` in
    `compiler/Pipelines.h`, declared once for both):

    | option | what it sets |
    |---|---|
    | `precision=f32\|f16\|bf16` | `precision` |
    | `ranks=N`, `zero-stage=S` | `zero`, with the model and inputs rebuilt for each rank's share of the batch |
    | `remat=none\|blocks\|sqrt\|matmuls\|budget`, `remat-budget=BYTES` | `remat` |
    | `batch=N` | `batch_size`, with the model and inputs rebuilt for N examples |
    | `micro-batch=M`, `accumulation-steps=K`, `memory-budget=BYTES` | `micro_batch_size` (one of the three) |
    | `lr=X`, `weight-decay=X` | the optimizer's `lr`, `weight_decay` |
    | `grad-clip=X` | `grad_clip_norm` |

    `target` and `seed` are read by the entry points (code generation, a
    trainer's initialization), not by this pass. A bad value is an error at
    the step, worded as the `gacc` CLI words it (`--precision: unknown type
    'f8' (f32, f16 or bf16)`), and so is a step the new values make invalid
    (its verifier's diagnostics).

    `memory-budget` and `remat=budget` ask the memory planner
    (`compiler/plan/MemoryPlan.h`) which micro-batch, or which
    rematerialization schedule, fits in the budget, and set that; a remark
    at the step says what was chosen. The planner compiles scratch copies
    of the module, up to its memory plan, and reads sizes off them: an
    analysis whose answer is a number, on IR this pass does not hand on,
    so the rule that no pass runs another's pipeline on the IR it
    transforms holds. The budget is an input that only that analysis turns
    into the attribute every later pass reads, so it is resolved here,
    once, before them. (The copies carry the micro-batch or schedule being
    tried, so their own gacc-configure-step has nothing to plan.)

    ```mlir
    // gacc-opt --gacc-configure-step="micro-batch=16 remat=sqrt precision=bf16"
    gacc.train_step @train model @mlp batch_size 64
        optimizer #gacc.adamw<lr = 1.0e-03>
    // becomes
    gacc.train_step @train model @mlp batch_size 64 micro_batch_size 16
        optimizer #gacc.adamw<lr = 1.0e-03> precision bf16
        remat #gacc.remat<sqrt>
    ```
  }];
  let dependentDialects = ["::mlir::gacc::GaccDialect"];
}

#endif // GACC_COMPILER_PASSES_TD
