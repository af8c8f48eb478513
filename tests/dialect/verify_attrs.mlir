// Every attribute verifier rule, one case each.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'zeros' initializer takes no scale}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros, scale = 2.0>

// -----
// expected-error @+1 {{initializer scale must be positive, got -1.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<normal, scale = -1.0>

// -----
// expected-error @+1 {{learning rate must be positive, got 0.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.0>}

// -----
// expected-error @+1 {{momentum must be non-negative, got -0.5}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.1, momentum = -0.5>}

// -----
// expected-error @+1 {{dampening must be in [0, 1], got 2.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.1, dampening = 2.0>}

// -----
// expected-error @+1 {{weight decay must be non-negative, got -1.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.1, weight_decay = -1.0>}

// -----
// expected-error @+1 {{nesterov momentum requires a positive momentum and zero dampening}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.1, nesterov = true>}

// -----
// expected-error @+1 {{nesterov momentum requires a positive momentum and zero dampening}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.sgd<lr = 0.1, momentum = 0.9, dampening = 0.1, nesterov = true>}

// -----
// expected-error @+1 {{learning rate must be positive, got -0.001}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw<lr = -0.001>}

// -----
// expected-error @+1 {{betas must be in [0, 1), got (0.9, 1.0)}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw<lr = 0.001, beta2 = 1.0>}

// -----
// expected-error @+1 {{eps must be positive, got 0.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw<lr = 0.001, eps = 0.0>}

// -----
// expected-error @+1 {{weight decay must be non-negative, got -0.1}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw<lr = 0.001, weight_decay = -0.1>}

// -----
// expected-error @+1 {{betas must be in [0, 1), got (1.5, 0.999)}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adam<lr = 0.001, beta1 = 1.5>}

// -----
// expected-error @+1 {{block_size must be positive}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw8bit<lr = 0.001, block_size = 0>}

// -----
// expected-error @+1 {{betas must be in [0, 1), got (0.9, 1.0)}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adamw8bit<lr = 0.001, beta2 = 1.0>}

// -----
// expected-error @+1 {{lr (0.001) and relative_step cannot be combined: the relative step is the learning rate}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<lr = 0.001>}

// -----
// expected-error @+1 {{without relative_step the learning rate must be positive, got 0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<relative_step = false>}

// -----
// expected-error @+1 {{warmup_init needs relative_step}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<lr = 0.01, relative_step = false, warmup_init = true>}

// -----
// expected-error @+1 {{decay_rate must be negative, got 0.8}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<decay_rate = 0.8>}

// -----
// expected-error @+1 {{beta1 must be in [0, 1), got 1}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<beta1 = 1.0>}

// -----
// expected-error @+1 {{clip_threshold must be positive, got 0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.adafactor<clip_threshold = 0.0>}

// -----
// expected-error @+1 {{attribute 'gacc.weight_decay' must be a non-negative f64 on a gacc.param}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {gacc.weight_decay = -1.0 : f64}

// -----
// expected-error @+1 {{attribute 'gacc.initial_values' must be a file name on a builtin.module}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {gacc.initial_values = "w.safetensors"}

// -----
// expected-error @+1 {{attribute 'gacc.initial_values' must be a file name on a builtin.module}}
module attributes {gacc.initial_values = ""} {}

// -----
// expected-error @+1 {{total_steps must be positive}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.warmup_cosine<warmup_steps = 0, total_steps = 0>}

// -----
// expected-error @+1 {{warmup_steps (20) exceeds total_steps (10)}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.warmup_cosine<warmup_steps = 20, total_steps = 10>}

// -----
// expected-error @+1 {{min_lr must be non-negative, got -1.0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.warmup_cosine<warmup_steps = 1, total_steps = 10, min_lr = -1.0>}

// -----
// expected-error @+1 {{the 'budget' policy needs a positive budget in bytes}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.remat<budget>}

// -----
// expected-error @+1 {{a budget applies only to the 'budget' policy}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.remat<sqrt, budget = 100>}

// -----
// expected-error @+1 {{ZeRO stage must be 0, 1, 2 or 3, got 4}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.zero<stage = 4, ranks = 2>}

// -----
// expected-error @+1 {{ZeRO needs at least one rank}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.zero<stage = 1, ranks = 0>}

// -----
// expected-error @+2 {{expected valid keyword}}
// expected-error @+1 {{failed to parse Gacc_InitAttr parameter 'kind'}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<>

// -----
// expected-error @+2 {{expected ::mlir::gacc::InitKind to be one of: zeros, ones, normal, uniform, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal}}
// expected-error @+1 {{failed to parse Gacc_InitAttr parameter 'kind'}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<orthogonal>

// -----
// expected-error @+1 {{the initial loss scale must be positive and finite, got 0}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.loss_scale<init = 0.0>}

// -----
// expected-error @+1 {{growth_factor must be above 1, got 1}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.loss_scale<growth_factor = 1.0>}

// -----
// expected-error @+1 {{backoff_factor must be in (0, 1), got 1.5}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.loss_scale<backoff_factor = 1.5>}

// -----
// expected-error @+1 {{growth_interval must be positive}}
gacc.param @w : tensor<2x2xf32> = #gacc.init<zeros> {x = #gacc.loss_scale<growth_interval = 0>}

// -----

// The attributes passes leave for each other are declared and checked.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
// expected-error @+1 {{'func.func' op attribute 'gacc.gradients' must be an array of parameter symbols on a func.func, no longer than its results}}
func.func @g() -> tensor<f32> attributes {gacc.gradients = [@w, @w]} {
  %c = gacc.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'gacc.relu' op attribute 'gacc.remat' must be "save" or "recompute" on an op of a function}}
  %r = gacc.relu %a {gacc.remat = "keep"} : tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// expected-error @+1 {{'func.func' op attribute 'gacc.autocast' must be "low" or "f32" on an op of a function}}
func.func @f() attributes {gacc.autocast = "low"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op attribute 'gacc.workspace_bytes' must be a non-negative byte count on a function}}
func.func @f() attributes {gacc.workspace_bytes = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op attribute 'gacc.remat_activation_budget' must be a non-negative byte count on a gacc.train_step}}
func.func @f() attributes {gacc.remat_activation_budget = 8 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has an unknown gacc attribute 'gacc.forward_ops'}}
func.func @f() attributes {gacc.forward_ops = 3 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'gacc.arena' belongs on a function argument}}
func.func @f() attributes {gacc.arena = "state"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: 'gacc.arena' must be "state", "batch", "io" or "workspace"}}
func.func @f(%a: memref<?xi8> {gacc.arena = "scratch"}) {
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'gacc.exp' op attribute 'gacc.embedding_gradient' must be a unit attribute on a gacc.matmul or the contraction it lowers to}}
  %y = gacc.exp %x {gacc.embedding_gradient} : tensor<4xf32>
  return %y : tensor<4xf32>
}
