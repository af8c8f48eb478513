// RUN: gacc-opt %s -split-input-file -gacc-autodiff -gacc-build-step -verify-diagnostics | FileCheck %s

gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 1>
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
gacc.train_step @t model @m batch_size 4 optimizer #gacc.adamw<lr = 0.001> grad_clip_norm 1.0

// Only the entry points remain: the model, declarations and step are gone.
// CHECK-NOT: gacc.param
// CHECK-LABEL: func.func @gacc_step
// CHECK-SAME: (%[[STATE:.*]]: memref<?xi8> {gacc.arena = "state"}, %[[BATCH:.*]]: memref<?xi8> {gacc.arena = "batch"}, %[[IO:.*]]: memref<?xi8> {gacc.arena = "io"}, %{{.*}}: memref<?xi8> {gacc.arena = "workspace"}) attributes {llvm.emit_c_interface}
// Inputs are read in place from the batch arena, parameters from the state
// arena, each through one tensor.
// CHECK-DAG: %[[X:.*]] = memref.view %[[BATCH]][%{{.*}}][] : memref<?xi8> to memref<4x2xf32>
// CHECK-DAG: bufferization.to_tensor %[[X]] restrict writable
// CHECK-DAG: %[[W:.*]] = memref.view %[[STATE]][%{{.*}}][] : memref<?xi8> to memref<3x2xf32>
// CHECK-DAG: bufferization.to_tensor %[[W]] restrict writable
// The gradient lands in its slot where the backward computes it; the loss
// and the global gradient norm go to the io arena.
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %{{.*}} : (tensor<3x2xf32>, memref<3x2xf32>) -> ()
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %{{.*}} : (tensor<f32>, memref<f32>) -> ()
// CHECK: gacc.sqrt
// Clipping: min(1, max_norm / (norm + 1e-6)).
// CHECK: gacc.compare lt
// AdamW keeps exp_avg and exp_avg_sq and writes the parameter back.
// CHECK-COUNT-3: bufferization.materialize_in_destination
// CHECK: return
// CHECK-LABEL: func.func @gacc_eval
// CHECK-NOT: gacc.sqrt
// CHECK: return
// CHECK-NOT: gacc.train_step

// -----

gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// Dynamic loss scaling (f16): the backward starts from the loss scale kept
// in the state arena after the gradients; the step unscales the gradients,
// skips the update when one of them is not finite, and backs off or grows
// the scale.
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1> precision f16 loss_scale #gacc.loss_scale<growth_interval = 3>
// CHECK-LABEL: func.func @gacc_step
// CHECK: %[[SCALE_VIEW:.*]] = memref.view %arg0[%c128{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK: %[[SCALE:.*]] = bufferization.to_tensor %[[SCALE_VIEW]]
// Unscaling multiplies each gradient where it is computed.
// CHECK: %[[INV:.*]] = gacc.div %{{.*}}, %[[SCALE]]
// CHECK: %[[SEED:.*]] = gacc.reshape %[[SCALE]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[SCALED:.*]] = gacc.broadcast %[[SEED]] : tensor<1xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[GRAD:.*]] = gacc.mul %[[SCALED]], %[[INV]]
// CHECK: %[[PROBE:.*]] = gacc.mul %[[GRAD]], %{{.*}}
// CHECK: %[[SUM:.*]] = gacc.reduce_sum %[[PROBE]]
// CHECK: %[[FINITE:.*]] = gacc.compare eq %{{.*}}, %{{.*}}
// CHECK: %[[UPDATED:.*]] = gacc.sub %[[W:.*]], %{{.*}}
// CHECK: %[[NEW:.*]] = gacc.select %[[FINITE]], %[[UPDATED]], %[[W]]
// CHECK: bufferization.materialize_in_destination %[[NEW]]
// CHECK: memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK: %[[GOOD:.*]] = gacc.add
// CHECK: %[[GROW:.*]] = gacc.compare ge %[[GOOD]], %{{.*}}
// CHECK: %[[GROWN:.*]] = gacc.mul %[[SCALE]], %{{.*}}
// CHECK: %[[BACKOFF:.*]] = gacc.mul %[[SCALE]], %{{.*}}
// CHECK: %[[KEPT:.*]] = gacc.select %[[GROW]], %[[GROWN]], %[[SCALE]]
// CHECK: %[[NEXT:.*]] = gacc.select %[[FINITE]], %[[KEPT]], %[[BACKOFF]]
// CHECK: memref.view %arg0[%c128{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NEXT]]
// CHECK: memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK-NEXT: bufferization.materialize_in_destination
// CHECK: %[[FOUND:.*]] = gacc.select %[[FINITE]]
// CHECK: bufferization.materialize_in_destination %[[FOUND]]
// CHECK: return

// -----

// Training draws dropout masks from the step counter in the io arena; the
// eval entry point skips dropout.
gacc.param @w : tensor<4xf32> = #gacc.init<ones>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4xf32>
  %d = gacc.dropout %w rate = 0.5 seed = 1 : tensor<4xf32>
  %l = gacc.reduce_sum %d axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @gacc_step
// CHECK: %[[STEP_VIEW:.*]] = memref.view %arg2[%{{.*}}][] : memref<?xi8> to memref<i64>
// CHECK: %[[STEP:.*]] = bufferization.to_tensor %[[STEP_VIEW]]
// CHECK: gacc.dropout %{{.*}} counter %[[STEP]] rate = 5.000000e-01 seed = 1
// The backward pass reuses the mask: same counter, rate and seed.
// CHECK: gacc.dropout %{{.*}} counter %[[STEP]] rate = 5.000000e-01 seed = 1
// CHECK-LABEL: func.func @gacc_eval
// CHECK-NOT: gacc.dropout
// CHECK: return


// -----

// The optimizer's per-step scalars are io slots of their own, packed into
// the first cache line and filled by the runtime by name: SGD with momentum
// reads "lr", "momentum_coefficient" and "gradient_coefficient"
// (hyper.<name>); its state is the momentum buffer after the gradient.
gacc.param @w : tensor<3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<3xf32>
  %l = gacc.reduce_sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1, momentum = 0.9>
// CHECK-LABEL: func.func @gacc_step
// CHECK: %[[W:.*]] = bufferization.to_tensor
// CHECK: %[[GRAD:.*]] = gacc.broadcast
// CHECK: memref.view %arg2[%c0{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK-NEXT: %[[LR:.*]] = bufferization.to_tensor
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: memref.view %arg2[%[[C4]]][] : memref<?xi8> to memref<f32>
// CHECK-NEXT: %[[MOMENTUM:.*]] = bufferization.to_tensor
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: memref.view %arg2[%[[C8]]][] : memref<?xi8> to memref<f32>
// CHECK-NEXT: %[[DAMPENED:.*]] = bufferization.to_tensor
// The loss stays at 64, grad_norm at 128.
// CHECK: memref.view %arg2[%c128{{.*}}][] : memref<?xi8> to memref<f32>
// CHECK: memref.view %arg0[%c128{{.*}}][] : memref<?xi8> to memref<3xf32>
// CHECK-NEXT: %[[OLD:.*]] = bufferization.to_tensor
// CHECK-NEXT: %[[G:.*]] = gacc.mul %[[GRAD]], %[[DAMPENED]]
// CHECK-NEXT: %[[B:.*]] = gacc.mul %[[OLD]], %[[MOMENTUM]]
// CHECK-NEXT: %[[BUFFER:.*]] = gacc.add %[[B]], %[[G]]
// The new momentum buffer is written after the weight that reads it (so
// that code generation can compute both in one pass).
// CHECK: %[[STEP:.*]] = gacc.mul %[[BUFFER]], %[[LR]]
// CHECK-NEXT: %[[NEW:.*]] = gacc.sub %[[W]], %[[STEP]]
// CHECK: bufferization.materialize_in_destination %[[NEW]]
// CHECK: bufferization.materialize_in_destination %[[BUFFER]]
// CHECK: return

// -----

// A parameter group's own weight decay (gacc.weight_decay): none for @b,
// whose update has no decay factor; Adam adds its L2 penalty to the
// gradient.
gacc.param @w : tensor<3x2xf32> = #gacc.init<normal, seed = 1>
gacc.param @b : tensor<3xf32> = #gacc.init<zeros> {gacc.weight_decay = 0.0 : f64}
gacc.input @x : tensor<4x2xf32> features
gacc.input @y : tensor<4xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<4x2xf32>
  %y = gacc.load @y : tensor<4xi32>
  %w = gacc.load @w : tensor<3x2xf32>
  %b = gacc.load @b : tensor<3xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x3xf32>
  %lb = gacc.add %l, %b : tensor<4x3xf32>, tensor<3xf32>
  %loss = gacc.cross_entropy mean %lb, %y : tensor<4x3xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 4 optimizer #gacc.adam<lr = 0.001, weight_decay = 0.5>
// CHECK-LABEL: func.func @gacc_step
// @w: its gradient plus 0.5·w.
// CHECK: %[[HALF:.*]] = gacc.constant dense<5.000000e-01> : tensor<f32>
// CHECK: gacc.mul %{{.*}}, %[[HALF]] : tensor<3x2xf32>, tensor<f32>
// @b: no penalty.
// CHECK-NOT: gacc.mul %{{.*}}, %[[HALF]] : tensor<3xf32>, tensor<f32>
// CHECK-LABEL: func.func @gacc_eval

// -----

// A parameter read through a slice has a zero-padded gradient: its sum of
// squares (the gradient norm) reads the slice's gradient, not the zeros.
gacc.param @w : tensor<4x3xf32> = #gacc.init<zeros>
func.func @m() -> tensor<f32> {
  %w = gacc.load @w : tensor<4x3xf32>
  %s = gacc.slice %w offsets = [1, 1] sizes = [2, 1] : tensor<4x3xf32> -> tensor<2x1xf32>
  %l = gacc.reduce_sum %s axes = [0, 1] : tensor<2x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
gacc.train_step @t model @m batch_size 1 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @gacc_step
// CHECK: %[[G:.*]] = gacc.broadcast %{{.*}} -> tensor<2x1xf32>
// CHECK: %[[PADDED:.*]] = gacc.pad %[[G]] low = [1, 1] high = [1, 1] : tensor<2x1xf32> -> tensor<4x3xf32>
// CHECK: %[[SQUARES:.*]] = gacc.mul %[[G]], %[[G]] : tensor<2x1xf32>, tensor<2x1xf32>
// CHECK: gacc.reduce_sum %[[SQUARES]]
// CHECK: gacc.sqrt
