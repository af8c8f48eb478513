// Round-trip of every gacc op: custom form, then through the generic form.
// RUN: gacc-opt %s | gacc-opt | FileCheck %s
// RUN: gacc-opt %s --mlir-print-op-generic | gacc-opt | FileCheck %s

// CHECK-LABEL: gacc.param @w : tensor<8x4xf32> = #gacc.init<xavier_uniform, seed = 3>
gacc.param @w : tensor<8x4xf32> = #gacc.init<xavier_uniform, seed = 3>
// CHECK: gacc.param @b : tensor<8xbf16> = #gacc.init<zeros>
gacc.param @b : tensor<8xbf16> = #gacc.init<zeros>
// CHECK: gacc.input @x : tensor<2x4xf32> features
gacc.input @x : tensor<2x4xf32> features
// CHECK: gacc.input @y : tensor<2xi64> labels
gacc.input @y : tensor<2xi64> labels
// CHECK: gacc.input @ids : tensor<2x3xi32> tokens
gacc.input @ids : tensor<2x3xi32> tokens
// CHECK: gacc.input @m : tensor<2x3xi1> mask
gacc.input @m : tensor<2x3xi1> mask

// CHECK-LABEL: func.func @quantization
func.func @quantization(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  // CHECK: gacc.quantize_dynamic %{{.*}} signed : tensor<2x16xf32> -> tensor<2x16xi8>
  %c = gacc.quantize_dynamic %x signed : tensor<2x16xf32> -> tensor<2x16xi8>
  // CHECK: gacc.dequantize_dynamic %{{.*}} signed : tensor<2x16xi8> -> tensor<2x16xf32>
  %y = gacc.dequantize_dynamic %c signed : tensor<2x16xi8> -> tensor<2x16xf32>
  // CHECK: gacc.quantize_dynamic %{{.*}} : tensor<2x16xf32> -> tensor<2x16xi8>
  %u = gacc.quantize_dynamic %y : tensor<2x16xf32> -> tensor<2x16xi8>
  %z = gacc.dequantize_dynamic %u : tensor<2x16xi8> -> tensor<2x16xf32>
  return %z : tensor<2x16xf32>
}

// CHECK-LABEL: func.func @declarations
func.func @declarations() -> (tensor<8x4xf32>, tensor<2x4xf32>) {
  // CHECK: gacc.load @w : tensor<8x4xf32>
  %w = gacc.load @w : tensor<8x4xf32>
  // CHECK: gacc.load @x : tensor<2x4xf32>
  %x = gacc.load @x : tensor<2x4xf32>
  return %w, %x : tensor<8x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x4xf32>, %b: tensor<4xf32>, %s: tensor<f32>) -> tensor<2x4xf32> {
  // CHECK: gacc.constant dense<5.000000e-01> : tensor<f32>
  %c = gacc.constant dense<0.5> : tensor<f32>
  // CHECK: gacc.add %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4xf32>
  %0 = gacc.add %a, %b : tensor<2x4xf32>, tensor<4xf32>
  // CHECK: gacc.sub %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x4xf32>
  %1 = gacc.sub %b, %0 : tensor<4xf32>, tensor<2x4xf32>
  // CHECK: gacc.mul %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<f32>
  %2 = gacc.mul %1, %c : tensor<2x4xf32>, tensor<f32>
  // CHECK: gacc.div %{{.*}}, %{{.*}} : tensor<f32>, tensor<2x4xf32>
  %3 = gacc.div %s, %2 : tensor<f32>, tensor<2x4xf32>
  // CHECK: gacc.neg %{{.*}} : tensor<2x4xf32>
  %4 = gacc.neg %3 : tensor<2x4xf32>
  // CHECK: gacc.exp
  %5 = gacc.exp %4 : tensor<2x4xf32>
  // CHECK: gacc.log
  %6 = gacc.log %5 : tensor<2x4xf32>
  // CHECK: gacc.sqrt
  %7 = gacc.sqrt %6 : tensor<2x4xf32>
  // CHECK: gacc.rsqrt
  %8 = gacc.rsqrt %7 : tensor<2x4xf32>
  // CHECK: gacc.tanh
  %9 = gacc.tanh %8 : tensor<2x4xf32>
  // CHECK: gacc.sigmoid
  %10 = gacc.sigmoid %9 : tensor<2x4xf32>
  // CHECK: gacc.relu
  %11 = gacc.relu %10 : tensor<2x4xf32>
  // CHECK: gacc.erf %{{.*}} : tensor<2x4xf32>
  %e = gacc.erf %11 : tensor<2x4xf32>
  // CHECK: gacc.compare ge %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<f32>
  %cmp = gacc.compare ge %e, %s : tensor<2x4xf32>, tensor<f32>
  // CHECK: gacc.compare ne %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<2x4xf32>
  %cmp2 = gacc.compare ne %b, %e : tensor<4xf32>, tensor<2x4xf32>
  // CHECK: gacc.compare lt %{{.*}}, %{{.*}} : tensor<2x4xi32>, tensor<i32>
  %ids = gacc.constant dense<3> : tensor<2x4xi32>
  %classes = gacc.constant dense<5> : tensor<i32>
  %cmp3 = gacc.compare lt %ids, %classes : tensor<2x4xi32>, tensor<i32>
  // CHECK: gacc.gelu %{{.*}} : tensor<2x4xf32>
  %12 = gacc.gelu %11 : tensor<2x4xf32>
  // CHECK: gacc.gelu %{{.*}} approximation = tanh : tensor<2x4xf32>
  %13 = gacc.gelu %12 approximation = tanh : tensor<2x4xf32>
  // CHECK: gacc.dropout %{{.*}} rate = 1.000000e-01 seed = 7 : tensor<2x4xf32>
  %14 = gacc.dropout %13 rate = 0.1 seed = 7 : tensor<2x4xf32>
  return %14 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%a: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %v: tensor<4xf32>) {
  // CHECK: gacc.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<2x3x4xf32>, tensor<5x4xf32> -> tensor<2x3x5xf32>
  %0 = gacc.matmul %a, %w transpose_rhs : tensor<2x3x4xf32>, tensor<5x4xf32> -> tensor<2x3x5xf32>
  // CHECK: gacc.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x4x4xf32>
  %1 = gacc.matmul %a, %a transpose_lhs : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x4x4xf32>
  // CHECK: gacc.matmul %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : tensor<4x5xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
  %t = gacc.transpose %w perm = [1, 0] : tensor<5x4xf32> -> tensor<4x5xf32>
  %m = gacc.slice %a offsets = [0, 0, 0] sizes = [1, 3, 4] : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
  %m2 = gacc.reshape %m : tensor<1x3x4xf32> -> tensor<3x4xf32>
  %2 = gacc.matmul %t, %m2 transpose_lhs transpose_rhs : tensor<4x5xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
  // CHECK: gacc.broadcast %{{.*}} : tensor<4xf32> -> tensor<2x3x4xf32>
  %3 = gacc.broadcast %v : tensor<4xf32> -> tensor<2x3x4xf32>
  // CHECK: gacc.reduce_sum %{{.*}} axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %4 = gacc.reduce_sum %a axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK: gacc.reduce_mean %{{.*}} axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %5 = gacc.reduce_mean %a axes = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // CHECK: gacc.reduce_max %{{.*}} axes = [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %6 = gacc.reduce_max %a axes = [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
  // CHECK: gacc.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x2x2xf32>
  %7 = gacc.reshape %a : tensor<2x3x4xf32> -> tensor<6x2x2xf32>
  // CHECK: gacc.transpose %{{.*}} perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %8 = gacc.transpose %a perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: gacc.slice %{{.*}} offsets = [1, 0, 2] sizes = [1, 3, 2] : tensor<2x3x4xf32> -> tensor<1x3x2xf32>
  %9 = gacc.slice %a offsets = [1, 0, 2] sizes = [1, 3, 2] : tensor<2x3x4xf32> -> tensor<1x3x2xf32>
  // CHECK: gacc.pad %{{.*}} low = [0, 1, 0] high = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x4x6xf32>
  %p = gacc.pad %a low = [0, 1, 0] high = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x4x6xf32>
  // CHECK: gacc.concat %{{.*}}, %{{.*}} axis = 2 : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  %10 = gacc.concat %a, %a axis = 2 : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  return
}

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
              %table: tensor<10x4xf32>, %ids: tensor<2x3xi32>) {
  // CHECK: gacc.softmax %{{.*}} axis = 2 : tensor<2x3x4xf32>
  %0 = gacc.softmax %x axis = 2 : tensor<2x3x4xf32>
  // CHECK: gacc.log_softmax %{{.*}} axis = 0 : tensor<2x3x4xf32>
  %1 = gacc.log_softmax %x axis = 0 : tensor<2x3x4xf32>
  // CHECK: gacc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<4xf32>
  %2 = gacc.layer_norm %x, %g, %b : tensor<2x3x4xf32>, tensor<4xf32>
  // CHECK: gacc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
  %3 = gacc.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
  // CHECK: gacc.embedding %{{.*}}, %{{.*}} : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %4 = gacc.embedding %table, %ids : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  // CHECK: gacc.one_hot %{{.*}} : tensor<2x3xi32> -> tensor<2x3x10xf32>
  %oh = gacc.one_hot %ids : tensor<2x3xi32> -> tensor<2x3x10xf32>
  // CHECK: gacc.causal_mask : tensor<3x3xi1>
  %mask = gacc.causal_mask : tensor<3x3xi1>
  %ninf = gacc.constant dense<0xFF800000> : tensor<f32>
  // CHECK: gacc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x3xi1>, tensor<2x3x3xf32>, tensor<f32>
  %s = gacc.slice %x offsets = [0, 0, 0] sizes = [2, 3, 3] : tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  %5 = gacc.select %mask, %s, %ninf : tensor<3x3xi1>, tensor<2x3x3xf32>, tensor<f32>
  // CHECK: gacc.checkpoint %{{.*}} : tensor<2x3x4xf32>
  %6 = gacc.checkpoint %x : tensor<2x3x4xf32>
  // CHECK: gacc.optimization_barrier %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x3xi32>
  %7:2 = gacc.optimization_barrier %x, %ids : tensor<2x3x4xf32>, tensor<2x3xi32>
  // CHECK: gacc.cast %{{.*}} : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
  %8 = gacc.cast %x : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
  // CHECK: gacc.cast %{{.*}} : tensor<2x3x4xbf16> to tensor<2x3x4xf16>
  %9 = gacc.cast %8 : tensor<2x3x4xbf16> to tensor<2x3x4xf16>
  // CHECK: gacc.loss_scale : tensor<f32>
  %10 = gacc.loss_scale : tensor<f32>
  // CHECK: gacc.all_reduce sum %{{.*}} ranks = 4 : tensor<2x3x4xf32>
  %11 = gacc.all_reduce sum %x ranks = 4 : tensor<2x3x4xf32>
  // CHECK: gacc.all_reduce mean %{{.*}} ranks = 2 : tensor<2x3x4xf32>
  %12 = gacc.all_reduce mean %x ranks = 2 : tensor<2x3x4xf32>
  // CHECK: gacc.reduce_scatter sum %{{.*}} dim = 2 ranks = 2 : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %13 = gacc.reduce_scatter sum %x dim = 2 ranks = 2 : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  // CHECK: gacc.all_gather %{{.*}} dim = 0 ranks = 3 : tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  %14 = gacc.all_gather %x dim = 0 ranks = 3 : tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  // CHECK: gacc.collective_broadcast %{{.*}} root = 1 ranks = 2 : tensor<2x3xi32>
  %15 = gacc.collective_broadcast %ids root = 1 ranks = 2 : tensor<2x3xi32>
  return
}

// CHECK-LABEL: func.func @losses
func.func @losses(%logits: tensor<2x3x5xf32>, %t: tensor<2x3xi64>, %p: tensor<2x1xf64>, %q: tensor<2x1xf64>) {
  // CHECK: gacc.cross_entropy sum %{{.*}}, %{{.*}} : tensor<2x3x5xf32>, tensor<2x3xi64>
  %0 = gacc.cross_entropy sum %logits, %t : tensor<2x3x5xf32>, tensor<2x3xi64>
  // CHECK: gacc.cross_entropy mean %{{.*}}, %{{.*}} : tensor<2x3x5xf32>, tensor<2x3xi64>
  %1 = gacc.cross_entropy mean %logits, %t : tensor<2x3x5xf32>, tensor<2x3xi64>
  // CHECK: gacc.cross_entropy token_mean %{{.*}}, %{{.*}} ignore_index = -100 : tensor<2x3x5xf32>, tensor<2x3xi64>
  %2 = gacc.cross_entropy token_mean %logits, %t ignore_index = -100 : tensor<2x3x5xf32>, tensor<2x3xi64>
  // CHECK: gacc.mse_loss mean %{{.*}}, %{{.*}} : tensor<2x1xf64>
  %3 = gacc.mse_loss mean %p, %q : tensor<2x1xf64>
  // CHECK: gacc.mse_loss sum %{{.*}}, %{{.*}} : tensor<2x1xf64>
  %4 = gacc.mse_loss sum %p, %q : tensor<2x1xf64>
  return
}

func.func @model() -> tensor<f32> {
  %x = gacc.load @x : tensor<2x4xf32>
  %y = gacc.load @y : tensor<2xi64>
  %w = gacc.load @w : tensor<8x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<2x8xf32>, tensor<2xi64>
  return %loss : tensor<f32>
}

// CHECK-LABEL: gacc.train_step @minimal model @model batch_size 2 optimizer #gacc.sgd<lr = 0.1>{{$}}
gacc.train_step @minimal model @model batch_size 2 optimizer #gacc.sgd<lr = 0.1>

// CHECK: gacc.train_step @full model @model batch_size 4 micro_batch_size 1
// CHECK-SAME: optimizer #gacc.adamw<lr = 0.001, beta1 = 0.8, beta2 = 0.99, eps = 1.0e-06, weight_decay = 0.0>
// CHECK-SAME: schedule #gacc.warmup_cosine<warmup_steps = 10, total_steps = 100, min_lr = 1.0e-05>
// CHECK-SAME: grad_clip_norm 1.000000e+00 precision bf16 remat #gacc.remat<sqrt> zero #gacc.zero<stage = 3, ranks = 2>
gacc.train_step @full model @model batch_size 4 micro_batch_size 1
    optimizer #gacc.adamw<lr = 1.0e-3, beta1 = 0.8, beta2 = 0.99, eps = 1.0e-6, weight_decay = 0.0>
    schedule #gacc.warmup_cosine<warmup_steps = 10, total_steps = 100, min_lr = 1.0e-5>
    grad_clip_norm 1.0 precision bf16 remat #gacc.remat<sqrt> zero #gacc.zero<stage = 3, ranks = 2>

// The functions the training pipeline derives, linked by symbol references.
func.func @model_micro1(%x: tensor<1x4xf32>, %y: tensor<1xi64>) -> tensor<f32> {
  %w = gacc.load @w : tensor<8x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<1x4xf32>, tensor<8x4xf32> -> tensor<1x8xf32>
  %loss = gacc.cross_entropy sum %l, %y : tensor<1x8xf32>, tensor<1xi64>
  return %loss : tensor<f32>
}
func.func @model_grad() -> (tensor<f32>, tensor<8x4xf32>) attributes {gacc.gradients = [@w]} {
  %l = gacc.constant dense<0.0> : tensor<f32>
  %g = gacc.constant dense<0.0> : tensor<8x4xf32>
  return %l, %g : tensor<f32>, tensor<8x4xf32>
}
// CHECK: gacc.train_step @linked model @model batch_size 2 micro_batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-SAME: micro_model @model_micro1 micro_gradient @model_grad gradient @model_grad{{$}}
gacc.train_step @linked model @model batch_size 2 micro_batch_size 1
    optimizer #gacc.sgd<lr = 0.1> micro_model @model_micro1
    micro_gradient @model_grad gradient @model_grad

// CHECK-LABEL: func.func @dropout_counter
func.func @dropout_counter(%x: tensor<4xf32>, %c: tensor<i64>) -> tensor<4xf32> {
  // CHECK: gacc.dropout %{{.*}} counter %{{.*}} rate = 5.000000e-01 seed = 2 : tensor<4xf32>
  %y = gacc.dropout %x counter %c rate = 0.5 seed = 2 : tensor<4xf32>
  return %y : tensor<4xf32>
}

// Model state and batch normalization.
// CHECK-LABEL: gacc.param @bn.running_mean : tensor<3xf32> = #gacc.init<zeros> frozen
gacc.param @bn.running_mean : tensor<3xf32> = #gacc.init<zeros> frozen
// CHECK: gacc.param @bn.running_var : tensor<3xf32> = #gacc.init<ones> frozen
gacc.param @bn.running_var : tensor<3xf32> = #gacc.init<ones> frozen

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %v: tensor<2x3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3xf32>) {
  %rm = gacc.load @bn.running_mean : tensor<3xf32>
  %rv = gacc.load @bn.running_var : tensor<3xf32>
  // CHECK: gacc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} momentum = 1.000000e-01 epsilon = 1.000000e-05 : tensor<2x3x4x4xf32>, tensor<3xf32>
  %y, %nm, %nv = gacc.batch_norm %x, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05
      : tensor<2x3x4x4xf32>, tensor<3xf32>
  // CHECK: gacc.assign @bn.running_mean, %{{.*}} : tensor<3xf32>
  gacc.assign @bn.running_mean, %nm : tensor<3xf32>
  // CHECK: gacc.assign @bn.running_var, %{{.*}} : tensor<3xf32>
  gacc.assign @bn.running_var, %nv : tensor<3xf32>
  // CHECK: gacc.batch_norm %{{.*}} momentum = 0.000000e+00 epsilon = 1.000000e-03 inference : tensor<2x3xf32>, tensor<3xf32>
  %e, %em, %ev = gacc.batch_norm %v, %w, %b, %rm, %rv momentum = 0.0 epsilon = 1.0e-3 inference
      : tensor<2x3xf32>, tensor<3xf32>
  return %y, %e : tensor<2x3x4x4xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %c: tensor<2x4x9x16xf32>) {
  // CHECK: gacc.conv2d %{{.*}}, %{{.*}} stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  %y = gacc.conv2d %x, %w stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  // CHECK: gacc.max_pool2d %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %m = gacc.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: gacc.avg_pool2d %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %a = gacc.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  // CHECK: gacc.im2col %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] {padding_value = 0xFFF0000000000000 : f64} : tensor<2x4x8x8xf32> -> tensor<2x4x9x16xf32>
  %i = gacc.im2col %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] {padding_value = 0xFFF0000000000000 : f64} : tensor<2x4x8x8xf32> -> tensor<2x4x9x16xf32>
  // CHECK: gacc.col2im %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x16xf32> -> tensor<2x4x8x8xf32>
  %o = gacc.col2im %c kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<2x4x9x16xf32> -> tensor<2x4x8x8xf32>
  return
}

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x128x32xbf16>, %b: tensor<2x128xf32>,
                     %mq: memref<2x4x64x32xbf16>, %ml: memref<2x4x64xf32>) {
  %o0 = tensor.empty() : tensor<2x4x64x32xbf16>
  %l0 = tensor.empty() : tensor<2x4x64xf32>
  // CHECK: %[[A:.*]]:2 = gacc.attention %{{.*}}, %{{.*}}, %{{.*}} key_bias %{{.*}} into %{{.*}}, %{{.*}} scale = 1.250000e-01 : tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x128xf32> into tensor<2x4x64x32xbf16>, tensor<2x4x64xf32> -> tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
  %o, %l = gacc.attention %q, %k, %k key_bias %b into %o0, %l0 scale = 0.125
      : tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x128xf32>
      into tensor<2x4x64x32xbf16>, tensor<2x4x64xf32> -> tensor<2x4x64x32xbf16>, tensor<2x4x64xf32>
  %k0 = tensor.empty() : tensor<2x4x128x32xbf16>
  // CHECK: gacc.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[A]]#0, %[[A]]#1, %[[A]]#1 into %{{.*}}, %{{.*}}, %{{.*}} scale = 1.250000e-01 causal :
  %g:3 = gacc.attention_grad %q, %k, %k, %o, %l, %l into %o0, %k0, %k0 scale = 0.125 causal
      : tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x64x32xbf16>,
        tensor<2x4x64xf32>, tensor<2x4x64xf32> into tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>,
        tensor<2x4x128x32xbf16> -> tensor<2x4x64x32xbf16>, tensor<2x4x128x32xbf16>, tensor<2x4x128x32xbf16>
  // On buffers, without results.
  // CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} scale = 1.000000e+00 causal : memref<2x4x64x32xbf16>, memref<2x4x64x32xbf16>, memref<2x4x64x32xbf16> into memref<2x4x64x32xbf16>, memref<2x4x64xf32>{{$}}
  gacc.attention %mq, %mq, %mq into %mq, %ml scale = 1.0 causal
      : memref<2x4x64x32xbf16>, memref<2x4x64x32xbf16>, memref<2x4x64x32xbf16> into memref<2x4x64x32xbf16>, memref<2x4x64xf32>
  return
}
