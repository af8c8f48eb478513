// Verifier rules of gacc.train_step.
// RUN: gacc-opt %s -split-input-file -verify-diagnostics

gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op batch_size must be positive, got 0}}
gacc.train_step @t model @m batch_size 0 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op batch_size must be positive, got -4}}
gacc.train_step @t model @m batch_size -4 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op micro_batch_size must be positive, got 0}}
gacc.train_step @t model @m batch_size 4 micro_batch_size 0 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op micro_batch_size (8) exceeds batch_size (4)}}
gacc.train_step @t model @m batch_size 4 micro_batch_size 8 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op grad_clip_norm must be positive}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> grad_clip_norm 0.0

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op schedule min_lr (0.5) exceeds the optimizer's lr (0.1)}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> schedule #gacc.warmup_cosine<warmup_steps = 1, total_steps = 5, min_lr = 0.5>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op batch_size (4) must divide evenly over 3 ZeRO ranks}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> zero #gacc.zero<stage = 2, ranks = 3>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op batch_size (2) differs from dimension 0 of input 'x' (4)}}
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op model 'missing' is not a func.func}}
gacc.train_step @t model @missing batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op model 'w' is not a func.func}}
gacc.train_step @t model @w batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op attribute 'optimizer' failed to satisfy constraint}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.zero<stage = 0, ranks = 1>

// -----
gacc.param @w : tensor<3x2xf32> = #gacc.init<zeros>
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

// expected-error @+1 {{'gacc.train_step' op attribute 'schedule' failed to satisfy constraint}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1> schedule #gacc.remat<none>
// -----
gacc.param @w : tensor<2xf32> = #gacc.init<zeros>
func.func @m(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op model 'm' must take no arguments: it reads parameters and inputs with gacc.load}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.param @w : tensor<2xf32> = #gacc.init<zeros>
func.func @m() -> tensor<2xf32> {
  %w = gacc.load @w : tensor<2xf32>
  return %w : tensor<2xf32>
}
// expected-error @+1 {{'gacc.train_step' op model 'm' must return the scalar float loss first}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
func.func @m() {
  return
}
// expected-error @+1 {{'gacc.train_step' op model 'm' must return the scalar float loss first}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
gacc.input @x : tensor<4x2xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %l = gacc.mse_loss mean %x, %x : tensor<4x2xf32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op model 'm' reads no gacc.param: nothing to train}}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.sgd<lr = 0.1>

// -----
func.func @f() {
  // expected-error @+1 {{'gacc.train_step' op expects parent op 'builtin.module'}}
  "gacc.train_step"() <{sym_name = "t", model = @f, batch_size = 4 : i64, optimizer = #gacc.sgd<lr = 0.1>}> : () -> ()
  return
}

// -----

// The functions the pipeline derives are linked by symbol references.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op gradient 'nowhere' is not a func.func}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> gradient @nowhere

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op eval_model 'nowhere' is not a func.func}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> eval_model @nowhere

// -----

// The evaluation computes what the model does: its type is the model's.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @e() -> tensor<3xf32> {
  %w = gacc.load @w : tensor<3xf32>
  return %w : tensor<3xf32>
}
// expected-error @+1 {{'gacc.train_step' op eval_model 'e' must have the type of model 'm', '() -> tensor<f32>', got '() -> tensor<3xf32>'}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> eval_model @e

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @g() -> (tensor<f32>, tensor<3xf32>) {
  %c = gacc.constant dense<0.0> : tensor<f32>
  %z = gacc.constant dense<0.0> : tensor<3xf32>
  return %c, %z : tensor<f32>, tensor<3xf32>
}
// expected-error @+1 {{'gacc.train_step' op gradient 'g' has no 'gacc.gradients': not a gradient function}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> gradient @g

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @g() -> (tensor<f32>, tensor<3xf32>) attributes {gacc.gradients = [@m]} {
  %c = gacc.constant dense<0.0> : tensor<f32>
  %z = gacc.constant dense<0.0> : tensor<3xf32>
  return %c, %z : tensor<f32>, tensor<3xf32>
}
// expected-error @+1 {{'gacc.train_step' op gradient 'g' lists the gradient of 'm', not a gacc.param}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> gradient @g

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op has a last_micro_model but no micro_model}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> last_micro_model @m

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op has a last_micro_gradient but no micro_gradient}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> last_micro_gradient @m

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op refers to micro-batch functions, but runs no micro-batches}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> micro_model @m

// -----

// A micro_model left from another micro-batch size is refused.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
gacc.input @x : tensor<8x3xf32> features
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x3xf32>
  %w = gacc.load @w : tensor<3xf32>
  %y = gacc.mul %x, %w : tensor<8x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<8x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @m_micro2(%x: tensor<2x3xf32>) -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %y = gacc.mul %x, %w : tensor<2x3xf32>, tensor<3xf32>
  %l = gacc.reduce_sum %y axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{'gacc.train_step' op micro_model 'm_micro2' must take the 4 rows of a micro-batch of every input, got 'tensor<2x3xf32>'}}
gacc.train_step @t model @m batch_size 8 micro_batch_size 4 optimizer #gacc.sgd<lr = 0.1> micro_model @m_micro2

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
gacc.param @s : tensor<3xf32> = #gacc.init<zeros> frozen
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @g() -> (tensor<f32>, tensor<3xf32>) attributes {gacc.gradients = [@s]} {
  %c = gacc.constant dense<0.0> : tensor<f32>
  %z = gacc.constant dense<0.0> : tensor<3xf32>
  return %c, %z : tensor<f32>, tensor<3xf32>
}
// expected-error @+1 {{'gacc.train_step' op gradient 'g' lists the gradient of 's', a frozen gacc.param}}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> gradient @g
