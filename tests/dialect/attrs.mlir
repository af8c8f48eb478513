// Round-trip of every gacc attribute and enum value.
// RUN: gacc-opt %s | gacc-opt | FileCheck %s
// RUN: gacc-opt %s --mlir-print-op-generic | gacc-opt | FileCheck %s

// CHECK: gacc.param @i0 : tensor<2x2xf32> = #gacc.init<zeros>
gacc.param @i0 : tensor<2x2xf32> = #gacc.init<zeros>
// CHECK: gacc.param @i1 : tensor<2x2xf32> = #gacc.init<ones>
gacc.param @i1 : tensor<2x2xf32> = #gacc.init<ones>
// CHECK: gacc.param @i2 : tensor<2x2xf32> = #gacc.init<normal, scale = 0.02, seed = 11>
gacc.param @i2 : tensor<2x2xf32> = #gacc.init<normal, scale = 0.02, seed = 11>
// CHECK: gacc.param @i3 : tensor<2x2xf32> = #gacc.init<uniform, scale = 0.5>
gacc.param @i3 : tensor<2x2xf32> = #gacc.init<uniform, scale = 0.5>
// CHECK: gacc.param @i4 : tensor<2x2xf32> = #gacc.init<xavier_uniform>
gacc.param @i4 : tensor<2x2xf32> = #gacc.init<xavier_uniform>
// CHECK: gacc.param @i5 : tensor<2x2xf32> = #gacc.init<xavier_normal, scale = 2.0>
gacc.param @i5 : tensor<2x2xf32> = #gacc.init<xavier_normal, scale = 2.0>
// CHECK: gacc.param @i6 : tensor<2x2xf32> = #gacc.init<kaiming_uniform, seed = 1>
gacc.param @i6 : tensor<2x2xf32> = #gacc.init<kaiming_uniform, seed = 1>
// CHECK: gacc.param @i7 : tensor<2x2x3xf16> = #gacc.init<kaiming_normal, seed = 18446744073709551615>
gacc.param @i7 : tensor<2x2x3xf16> = #gacc.init<kaiming_normal, seed = 18446744073709551615>
// CHECK: gacc.param @i8 : tensor<2x2xf64> = #gacc.init<ones>
gacc.param @i8 : tensor<2x2xf64> = #gacc.init<ones>

gacc.input @x : tensor<4x2xf32> features
gacc.input @f : tensor<4x2xf16> mask

func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %w = gacc.load @i0 : tensor<2x2xf32>
  %y = gacc.matmul %x, %w : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  %l = gacc.mse_loss mean %y, %x : tensor<4x2xf32>
  return %l : tensor<f32>
}

// CHECK: optimizer #gacc.sgd<lr = 0.01, momentum = 0.9, weight_decay = 0.0001, nesterov = true>
gacc.train_step @s0 model @m batch_size 4 optimizer #gacc.sgd<lr = 0.01, momentum = 0.9, weight_decay = 1.0e-4, nesterov = true>
// CHECK: optimizer #gacc.sgd<lr = 0.01, momentum = 0.9, dampening = 0.1>
gacc.train_step @s1 model @m batch_size 4 optimizer #gacc.sgd<lr = 0.01, momentum = 0.9, dampening = 0.1>
// CHECK: optimizer #gacc.adamw<lr = 0.0003> schedule #gacc.constant_lr precision f16 remat #gacc.remat<none>
gacc.train_step @a0 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> schedule #gacc.constant_lr precision f16 remat #gacc.remat<none>
// CHECK: optimizer #gacc.adam<lr = 0.001, weight_decay = 0.0001>
gacc.train_step @adam model @m batch_size 4 optimizer #gacc.adam<lr = 1.0e-3, weight_decay = 1.0e-4>
// CHECK: optimizer #gacc.adamw8bit<lr = 0.001>{{$}}
gacc.train_step @adamw8bit model @m batch_size 4 optimizer #gacc.adamw8bit<lr = 1.0e-3>
// CHECK: optimizer #gacc.adamw8bit<lr = 0.001, weight_decay = 0.0, block_size = 256, min_8bit_size = 0>{{$}}
gacc.train_step @adamw8bit_small model @m batch_size 4 optimizer #gacc.adamw8bit<lr = 1.0e-3, weight_decay = 0.0, block_size = 256, min_8bit_size = 0>
// CHECK: optimizer #gacc.adafactor<>{{$}}
gacc.train_step @adafactor model @m batch_size 4 optimizer #gacc.adafactor<>
// CHECK: optimizer #gacc.adafactor<lr = 0.001, beta1 = 0.9, weight_decay = 0.01, scale_parameter = false, relative_step = false>{{$}}
gacc.train_step @adafactor_lr model @m batch_size 4 optimizer #gacc.adafactor<lr = 1.0e-3, beta1 = 0.9, weight_decay = 0.01, scale_parameter = false, relative_step = false>
// CHECK: precision f32 remat #gacc.remat<blocks> zero #gacc.zero<stage = 0, ranks = 4>
gacc.train_step @a1 model @m batch_size 16 optimizer #gacc.adamw<lr = 3.0e-4> precision f32 remat #gacc.remat<blocks> zero #gacc.zero<stage = 0, ranks = 4>
// CHECK: precision f16 loss_scale #gacc.loss_scale<>
gacc.train_step @l0 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> precision f16 loss_scale #gacc.loss_scale<>
// CHECK: precision bf16 loss_scale #gacc.loss_scale<init = 1024.0, growth_factor = 4.0, backoff_factor = 0.25, growth_interval = 10>
gacc.train_step @l1 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> precision bf16 loss_scale #gacc.loss_scale<init = 1024.0, growth_factor = 4.0, backoff_factor = 0.25, growth_interval = 10>
// CHECK: remat #gacc.remat<matmuls> zero #gacc.zero<stage = 1, ranks = 2>
gacc.train_step @a2 model @m batch_size 8 optimizer #gacc.adamw<lr = 3.0e-4> remat #gacc.remat<matmuls> zero #gacc.zero<stage = 1, ranks = 2>
// CHECK: remat #gacc.remat<budget, budget = 1073741824>
gacc.train_step @a3 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> remat #gacc.remat<budget, budget = 1073741824>
// CHECK: schedule #gacc.warmup_polynomial<warmup_steps = 10, total_steps = 100>{{$}}
gacc.train_step @p0 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> schedule #gacc.warmup_polynomial<warmup_steps = 10, total_steps = 100>
// CHECK: schedule #gacc.warmup_polynomial<warmup_steps = 0, total_steps = 100, min_lr = 1.0e-07, power = 2.0>{{$}}
gacc.train_step @p1 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> schedule #gacc.warmup_polynomial<warmup_steps = 0, total_steps = 100, min_lr = 1.0e-7, power = 2.0>
// CHECK: schedule #gacc.warmup_cosine<warmup_steps = 0, total_steps = 1>
gacc.train_step @a4 model @m batch_size 4 optimizer #gacc.adamw<lr = 3.0e-4> schedule #gacc.warmup_cosine<warmup_steps = 0, total_steps = 1>
