// gacc-configure-step sets what its options (the training pipeline's, named
// as the `gacc` flags) give on the step they name, and nothing else.
// RUN: gacc-opt --gacc-configure-step="step=adamw micro-batch=2 remat=sqrt precision=bf16" %s | FileCheck %s
// CHECK: gacc.train_step @sgd model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>{{$}}
// CHECK: gacc.train_step @adamw model @m batch_size 8 micro_batch_size 2 optimizer #gacc.adamw<lr = 0.001> precision bf16 remat #gacc.remat<sqrt>{{$}}

// batch rebuilds the model and its inputs; accumulation-steps splits it.
// RUN: gacc-opt --gacc-configure-step="step=sgd batch=4 accumulation-steps=2" %s | FileCheck %s --check-prefix=BATCH
// BATCH: gacc.input @x : tensor<4x2xf32> features
// BATCH: gacc.train_step @sgd model @m batch_size 4 micro_batch_size 2 optimizer

// ZeRO: each rank's share of the batch.
// RUN: gacc-opt --gacc-configure-step="step=sgd ranks=2 zero-stage=2" %s | FileCheck %s --check-prefix=ZERO
// ZERO: gacc.input @x : tensor<4x2xf32> features
// ZERO: gacc.train_step @sgd model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9> zero #gacc.zero<stage = 2, ranks = 2>

// The optimizer's hyperparameters and gradient clipping.
// RUN: gacc-opt --gacc-configure-step="step=adamw lr=0.5 weight-decay=0.25 grad-clip=1.5" %s | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: gacc.train_step @sgd model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>{{$}}
// OPTIMIZER: gacc.train_step @adamw model @m batch_size 8 micro_batch_size 3 optimizer #gacc.adamw<lr = 0.5, weight_decay = 0.25> grad_clip_norm 1.500000e+00{{$}}

// optimizer replaces the optimizer, keeping its learning rate and weight
// decay unless given; adafactor as transformers' --optim adafactor.
// RUN: gacc-opt --gacc-configure-step="step=sgd optimizer=adamw" %s | FileCheck %s --check-prefix=SWITCH
// SWITCH: gacc.train_step @sgd model @m batch_size 8 optimizer #gacc.adamw<lr = 0.1, weight_decay = 0.0>{{$}}
// RUN: gacc-opt --gacc-configure-step="step=adamw optimizer=adafactor weight-decay=0.5" %s | FileCheck %s --check-prefix=ADAFACTOR
// ADAFACTOR: optimizer #gacc.adafactor<lr = 0.001, weight_decay = 0.5, scale_parameter = false, relative_step = false>{{$}}
// RUN: gacc-opt --gacc-configure-step="step=adamw optimizer=sgd" %s | FileCheck %s --check-prefix=SGD
// SGD: optimizer #gacc.sgd<lr = 0.001, weight_decay = 0.01>{{$}}
// RUN: gacc-opt --gacc-configure-step="step=sgd optimizer=sgd lr=0.5" %s | FileCheck %s --check-prefix=SAME
// SAME: optimizer #gacc.sgd<lr = 0.5, momentum = 0.9>{{$}}

// lr-schedule: cosine, linear and polynomial decay after a linear warmup.
// RUN: gacc-opt --gacc-configure-step="step=sgd lr-schedule=linear,warmup=10,total=100" %s | FileCheck %s --check-prefix=LINEAR
// LINEAR: optimizer #gacc.sgd<lr = 0.1, momentum = 0.9> schedule #gacc.warmup_polynomial<warmup_steps = 10, total_steps = 100>{{$}}
// RUN: gacc-opt --gacc-configure-step="step=sgd lr-schedule={polynomial,total=50,min_lr=1e-7,power=2}" %s | FileCheck %s --check-prefix=POLY
// POLY: schedule #gacc.warmup_polynomial<warmup_steps = 0, total_steps = 50, min_lr = 1.0e-07, power = 2.0>{{$}}
// RUN: gacc-opt --gacc-configure-step="step=sgd lr-schedule={cosine,warmup=5,total=50,min_lr=0.01}" %s | FileCheck %s --check-prefix=COSINE
// COSINE: schedule #gacc.warmup_cosine<warmup_steps = 5, total_steps = 50, min_lr = 0.01>{{$}}

// A memory budget picks the micro-batch and says which.
// RUN: gacc-opt --gacc-configure-step="step=sgd memory-budget=1GiB" %s 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: gacc-configure-step.mlir:[[# @LINE + 30]]:1: remark: memory budget 1.0 GiB: micro-batch 8 (1 accumulation step), planned peak
// BUDGET: gacc.train_step @sgd model @m batch_size 8 micro_batch_size 8 optimizer

// The budget policy searches its schedule and says which; given the
// activation budget of one it chose before (gacc tune writes it), it does
// not search again.
// RUN: gacc-opt --gacc-configure-step="step=sgd remat=budget remat-budget=1GiB" %s 2>&1 | FileCheck %s --check-prefix=SEARCH
// SEARCH: remark: remat budget 1.0 GiB: keeps 100 B of 100 B activations
// SEARCH: remat #gacc.remat<budget, budget = 1073741824> {gacc.remat_activation_budget = 4611686018427387903 : i64}
// RUN: gacc-opt --gacc-configure-step="step=sgd remat=budget remat-budget=1GiB remat-activation-budget=4096" %s 2>&1 | FileCheck %s --check-prefix=CHOSEN
// CHOSEN-NOT: remark
// CHOSEN: remat #gacc.remat<budget, budget = 1073741824> {gacc.remat_activation_budget = 4096 : i64}

// Without options the module is unchanged; the printed pass reads back.
// RUN: gacc-opt %s > %t.mlir
// RUN: gacc-opt --gacc-configure-step=step=sgd %s | diff %t.mlir -
// RUN: gacc-opt --gacc-configure-step="micro-batch=4 step=sgd" --dump-pass-pipeline %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: gacc-configure-step{accumulation-steps=None batch=None grad-clip=None lora= lr=None lr-schedule= memory-budget= micro-batch=4 optimizer= precision= ranks=None remat= remat-activation-budget=None remat-budget= seed=0 step=sgd target=cpu weight-decay=None zero-stage=None}

gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 4>
gacc.input @x : tensor<8x2xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x2xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w = gacc.load @w : tensor<3x2xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<8x2xf32>, tensor<3x2xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @sgd model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>
gacc.train_step @adamw model @m batch_size 8 micro_batch_size 3 optimizer #gacc.adamw<lr = 0.001>
