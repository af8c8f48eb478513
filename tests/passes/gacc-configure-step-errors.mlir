// A bad option value is an error at the step, worded as the `gacc` flag's;
// so is a step the values make invalid.
// RUN: gacc-opt --gacc-configure-step="precision=f8" -verify-diagnostics %s
// RUN: not gacc-opt --gacc-configure-step="remat=often" %s 2>&1 | FileCheck %s --check-prefix=REMAT
// REMAT: gacc-configure-step-errors.mlir:[[# @LINE + 54]]:1: error: --remat: unknown policy 'often' (none, blocks, sqrt, matmuls or budget)
// RUN: not gacc-opt --gacc-configure-step="memory-budget=lots" %s 2>&1 | FileCheck %s --check-prefix=BYTES
// BYTES: error: --memory-budget: 'lots' is not a byte size (such as 8GiB, 512MiB or 1e9)
// RUN: not gacc-opt --gacc-configure-step="remat=budget remat-budget=1GiB memory-budget=1GiB" %s 2>&1 | FileCheck %s --check-prefix=BUDGETS
// BUDGETS: error: give --memory-budget or the remat budget policy, not both
// RUN: not gacc-opt --gacc-configure-step="remat=sqrt remat-activation-budget=4096" %s 2>&1 | FileCheck %s --check-prefix=ACTIVATIONS
// ACTIVATIONS: error: remat-activation-budget is a schedule of the budget policy (remat=budget); the policy is sqrt
// RUN: not gacc-opt --gacc-configure-step="remat=budget remat-budget=1GiB remat-activation-budget=0" %s 2>&1 | FileCheck %s --check-prefix=ACTIVATIONS-ZERO
// ACTIVATIONS-ZERO: error: remat-activation-budget must be a positive number of bytes, got 0
// RUN: not gacc-opt --gacc-configure-step="remat=sqrt remat-budget=1GiB" %s 2>&1 | FileCheck %s --check-prefix=REMAT-BUDGET
// REMAT-BUDGET: error: --remat-budget is the budget policy's peak (--remat budget); the policy is sqrt
// RUN: not gacc-opt --gacc-configure-step="micro-batch=2 accumulation-steps=2" %s 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: give one of --micro-batch, --accumulation-steps and --memory-budget
// RUN: not gacc-opt --gacc-configure-step="accumulation-steps=0" %s 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: error: --accumulation-steps must be positive, got 0
// RUN: not gacc-opt --gacc-configure-step="micro-batch=0" %s 2>&1 | FileCheck %s --check-prefix=MICRO
// MICRO: error: 'gacc.train_step' op micro_batch_size must be positive, got 0
// RUN: not gacc-opt --gacc-configure-step="batch=0" %s 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: the batch size must be positive, got 0
// RUN: not gacc-opt --gacc-configure-step="ranks=3" %s 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: 'gacc.train_step' op batch_size (4) must divide evenly over 3 ranks
// RUN: not gacc-opt --gacc-configure-step="lr=-1" %s 2>&1 | FileCheck %s --check-prefix=LR
// LR: error: learning rate must be positive, got -1
// RUN: not gacc-opt --gacc-configure-step="optimizer=lion" %s 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: error: unknown optimizer 'lion': expected one of sgd, adamw, adam, adamw8bit, adafactor
// RUN: not gacc-opt --gacc-configure-step="lr-schedule=step" %s 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: error: --lr-schedule: unknown schedule 'step' (constant, cosine, linear or polynomial)
// RUN: not gacc-opt --gacc-configure-step="lr-schedule=linear" %s 2>&1 | FileCheck %s --check-prefix=TOTAL
// TOTAL: error: --lr-schedule: linear needs total=N, the step its decay ends at
// RUN: not gacc-opt --gacc-configure-step="lr-schedule={linear,total=9,power=2}" %s 2>&1 | FileCheck %s --check-prefix=POWER
// POWER: error: --lr-schedule: 'power=2' is not one of warmup=N, total=N, min_lr=X
// RUN: not gacc-opt --gacc-configure-step="lr-schedule={polynomial,total=9,power=0}" %s 2>&1 | FileCheck %s --check-prefix=POSITIVE
// POSITIVE: error: --lr-schedule: power must be positive, got 0
// RUN: not gacc-opt --gacc-configure-step="lr-schedule={cosine,total=9,min_lr=1}" %s 2>&1 | FileCheck %s --check-prefix=MIN-LR
// MIN-LR: error: 'gacc.train_step' op schedule min_lr (1.0) exceeds the optimizer's lr (0.1)
// RUN: not gacc-opt --gacc-configure-step="grad-clip=0" %s 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: 'gacc.train_step' op grad_clip_norm must be positive
// RUN: not gacc-opt --gacc-configure-step="step=nope" %s 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: error: {{.*}}nope
// RUN: not gacc-opt --gacc-configure-step="micro-batch=eight" %s 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: for the --micro-batch option: 'eight' value invalid

gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 4>
gacc.input @x : tensor<4x2xf32> features
gacc.input @y : tensor<4xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %y = gacc.load @y : tensor<4xi32>
  %w = gacc.load @w : tensor<3x2xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<4x3xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}
// expected-error@+1 {{--precision: unknown type 'f8' (f32, f16 or bf16)}}
gacc.train_step @train model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>
