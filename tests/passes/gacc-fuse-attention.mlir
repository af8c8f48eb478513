// RUN: gacc-opt %s -split-input-file --gacc-fuse-attention | FileCheck %s
// RUN: gacc-opt %s -split-input-file --gacc-fuse-attention="cuda-kernels-only" | FileCheck %s --check-prefix=CUDA

// A causal head of GPT after autocast: bf16 scores, the scale and -inf cast
// from f32 constants, the softmax in f32 between two casts. All of it
// becomes one gacc.attention (the casts, the mask and the constants only
// it used are gone); its log-sum-exp is f32 per query.
// CHECK-LABEL: func.func @causal_bf16
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x64x32xbf16>, %[[K:.*]]: tensor<2x4x64x32xbf16>, %[[V:.*]]: tensor<2x4x64x32xbf16>)
// CHECK-DAG: %[[O0:.*]] = tensor.empty() : tensor<2x4x64x32xbf16>
// CHECK-DAG: %[[L0:.*]] = tensor.empty() : tensor<2x4x64xf32>
// CHECK: %[[A:.*]]:2 = gacc.attention %[[Q]], %[[K]], %[[V]] into %[[O0]], %[[L0]] scale = 1.250000e-01 causal
// CHECK-NOT: gacc.softmax
// CHECK-NOT: gacc.matmul
// CHECK: return %[[A]]#0
// CUDA-LABEL: func.func @causal_bf16
// CUDA: gacc.attention
func.func @causal_bf16(%q: tensor<2x4x64x32xbf16>, %k: tensor<2x4x64x32xbf16>,
                       %v: tensor<2x4x64x32xbf16>) -> tensor<2x4x64x32xbf16> {
  %scale32 = gacc.constant dense<0.125> : tensor<f32>
  %ninf32 = gacc.constant dense<0xFF800000> : tensor<f32>
  %mask = gacc.causal_mask : tensor<64x64xi1>
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x4x64x32xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x64xbf16>
  %scale = gacc.cast %scale32 : tensor<f32> to tensor<bf16>
  %t = gacc.mul %s, %scale : tensor<2x4x64x64xbf16>, tensor<bf16>
  %ninf = gacc.cast %ninf32 : tensor<f32> to tensor<bf16>
  %u = gacc.select %mask, %t, %ninf : tensor<64x64xi1>, tensor<2x4x64x64xbf16>, tensor<bf16>
  %w = gacc.cast %u : tensor<2x4x64x64xbf16> to tensor<2x4x64x64xf32>
  %p = gacc.softmax %w axis = 3 : tensor<2x4x64x64xf32>
  %pb = gacc.cast %p : tensor<2x4x64x64xf32> to tensor<2x4x64x64xbf16>
  %o = gacc.matmul %pb, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x32xbf16> -> tensor<2x4x64x32xbf16>
  return %o : tensor<2x4x64x32xbf16>
}

// -----

// An encoder's head in f32 with a key-padding bias ([B, 1, 1, S], added
// after the scale, the constant on the left): not causal; the bias becomes
// [B, S]. The CUDA kernels take 16-bit operands only: nothing changes there.
// CHECK-LABEL: func.func @padded_f32
// CHECK-SAME: %[[BIAS:[^:]*]]: tensor<2x1x1x128xf32>
// CHECK: %[[B:.*]] = gacc.reshape %[[BIAS]] : tensor<2x1x1x128xf32> -> tensor<2x128xf32>
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} key_bias %[[B]] into %{{.*}}, %{{.*}} scale = 2.500000e-01 :
// CHECK-NOT: causal
// CHECK-SAME: -> tensor<2x2x64x16xf32>, tensor<2x2x64xf32>
// CUDA-LABEL: func.func @padded_f32
// CUDA-NOT: gacc.attention
// CUDA: gacc.softmax
func.func @padded_f32(%q: tensor<2x2x64x16xf32>, %k: tensor<2x2x128x16xf32>,
                      %v: tensor<2x2x128x16xf32>, %bias: tensor<2x1x1x128xf32>)
    -> tensor<2x2x64x16xf32> {
  %scale = gacc.constant dense<0.25> : tensor<f32>
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf32>, tensor<2x2x128x16xf32> -> tensor<2x2x64x128xf32>
  %t = gacc.mul %scale, %s : tensor<f32>, tensor<2x2x64x128xf32>
  %u = gacc.add %t, %bias : tensor<2x2x64x128xf32>, tensor<2x1x1x128xf32>
  %p = gacc.softmax %u axis = 3 : tensor<2x2x64x128xf32>
  %o = gacc.matmul %p, %v : tensor<2x2x64x128xf32>, tensor<2x2x128x16xf32> -> tensor<2x2x64x16xf32>
  return %o : tensor<2x2x64x16xf32>
}

// -----

// f64 (gradient checks) computes in f64: the key bias and the log-sum-exp
// are f64.
// CHECK-LABEL: func.func @padded_f64
// CHECK: %[[B:.*]] = gacc.reshape %{{.*}} : tensor<2x1x1x8xf64> -> tensor<2x8xf64>
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} key_bias %[[B]] into
// CHECK-SAME: -> tensor<2x2x8x4xf64>, tensor<2x2x8xf64>
func.func @padded_f64(%q: tensor<2x2x8x4xf64>, %k: tensor<2x2x8x4xf64>,
                      %v: tensor<2x2x8x4xf64>, %bias: tensor<2x1x1x8xf64>)
    -> tensor<2x2x8x4xf64> {
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x8x4xf64>, tensor<2x2x8x4xf64> -> tensor<2x2x8x8xf64>
  %u = gacc.add %s, %bias : tensor<2x2x8x8xf64>, tensor<2x1x1x8xf64>
  %p = gacc.softmax %u axis = 3 : tensor<2x2x8x8xf64>
  %o = gacc.matmul %p, %v : tensor<2x2x8x8xf64>, tensor<2x2x8x4xf64> -> tensor<2x2x8x4xf64>
  return %o : tensor<2x2x8x4xf64>
}

// -----

// Not fused: the probabilities are also returned (they would have to be
// stored), the softmax is over another axis, the mask fills 0 instead of
// -inf.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: gacc.attention
// CHECK: return
func.func @not_attention(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>,
                         %v: tensor<1x1x64x16xf32>)
    -> (tensor<1x1x64x16xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32>,
        tensor<1x1x64x16xf32>) {
  %s = gacc.matmul %q, %k transpose_rhs : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x64xf32>
  %p = gacc.softmax %s axis = 3 : tensor<1x1x64x64xf32>
  %o = gacc.matmul %p, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %s2 = gacc.matmul %q, %k transpose_rhs : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x64xf32>
  %p2 = gacc.softmax %s2 axis = 2 : tensor<1x1x64x64xf32>
  %o2 = gacc.matmul %p2, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %zero = gacc.constant dense<0.0> : tensor<f32>
  %mask = gacc.causal_mask : tensor<64x64xi1>
  %s3 = gacc.matmul %q, %k transpose_rhs : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x64xf32>
  %u3 = gacc.select %mask, %s3, %zero : tensor<64x64xi1>, tensor<1x1x64x64xf32>, tensor<f32>
  %p3 = gacc.softmax %u3 axis = 3 : tensor<1x1x64x64xf32>
  %o3 = gacc.matmul %p3, %v : tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o, %p, %o2, %o3 : tensor<1x1x64x16xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>
}

// -----

// Autocast with a key-padding bias: the scaled bf16 scores are cast to f32
// before the f32 bias is added. The bias, used by another head too, stays.
// CHECK-LABEL: func.func @padded_bf16
// CHECK: gacc.attention %{{.*}}, %{{.*}}, %{{.*}} key_bias %{{.*}} into %{{.*}}, %{{.*}} scale = 1.250000e-01 causal
// CHECK-NOT: gacc.softmax
// CHECK: return %{{.*}}, %arg3
func.func @padded_bf16(%q: tensor<2x2x64x16xbf16>, %k: tensor<2x2x64x16xbf16>,
                       %v: tensor<2x2x64x16xbf16>, %bias: tensor<2x1x1x64xf32>)
    -> (tensor<2x2x64x16xbf16>, tensor<2x1x1x64xf32>) {
  %scale32 = gacc.constant dense<0.125> : tensor<f32>
  %ninf = gacc.constant dense<0xFF800000> : tensor<f32>
  %mask = gacc.causal_mask : tensor<64x64xi1>
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16> -> tensor<2x2x64x64xbf16>
  %scale = gacc.cast %scale32 : tensor<f32> to tensor<bf16>
  %t = gacc.mul %s, %scale : tensor<2x2x64x64xbf16>, tensor<bf16>
  %t32 = gacc.cast %t : tensor<2x2x64x64xbf16> to tensor<2x2x64x64xf32>
  %u = gacc.add %t32, %bias : tensor<2x2x64x64xf32>, tensor<2x1x1x64xf32>
  %w = gacc.select %mask, %u, %ninf : tensor<64x64xi1>, tensor<2x2x64x64xf32>, tensor<f32>
  %p = gacc.softmax %w axis = 3 : tensor<2x2x64x64xf32>
  %pb = gacc.cast %p : tensor<2x2x64x64xf32> to tensor<2x2x64x64xbf16>
  %o = gacc.matmul %pb, %v : tensor<2x2x64x64xbf16>, tensor<2x2x64x16xbf16> -> tensor<2x2x64x16xbf16>
  return %o, %bias : tensor<2x2x64x16xbf16>, tensor<2x1x1x64xf32>
}

// -----

// One attention's output is the next one's query: both fused.
// CHECK-LABEL: func.func @stacked
// CHECK: %[[A:.*]]:2 = gacc.attention %arg0, %arg1, %arg2
// CHECK: %[[B:.*]]:2 = gacc.attention %[[A]]#0, %arg1, %arg2
// CHECK: return %[[B]]#0
func.func @stacked(%q: tensor<2x2x64x16xf16>, %k: tensor<2x2x64x16xf16>,
                   %v: tensor<2x2x64x16xf16>) -> tensor<2x2x64x16xf16> {
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %p = gacc.softmax %s axis = 3 : tensor<2x2x64x64xf16>
  %o = gacc.matmul %p, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  %s2 = gacc.matmul %o, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %p2 = gacc.softmax %s2 axis = 3 : tensor<2x2x64x64xf16>
  %o2 = gacc.matmul %p2, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  return %o2 : tensor<2x2x64x16xf16>
}

// -----

// Not fused: a bias that is a trainable parameter (gacc.attention_grad
// gives the bias no gradient), one value for every key ([B, 1, 1, 1]), a
// causal mask that broadcasts ([1, 64]: no key hidden).
gacc.param @bias : tensor<2x1x1x64xf32> = #gacc.init<zeros>
gacc.param @frozen_bias : tensor<2x1x1x64xf32> = #gacc.init<zeros> frozen
// CHECK-LABEL: func.func @biases
// CHECK-COUNT-1: gacc.attention
// CHECK-NOT: gacc.attention
func.func @biases(%q: tensor<2x2x64x16xf16>, %k: tensor<2x2x64x16xf16>,
                  %v: tensor<2x2x64x16xf16>, %one: tensor<2x1x1x1xf16>)
    -> (tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>,
        tensor<2x2x64x16xf16>) {
  %b = gacc.load @bias : tensor<2x1x1x64xf32>
  %bh = gacc.cast %b : tensor<2x1x1x64xf32> to tensor<2x1x1x64xf16>
  %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %t = gacc.add %s, %bh : tensor<2x2x64x64xf16>, tensor<2x1x1x64xf16>
  %p = gacc.softmax %t axis = 3 : tensor<2x2x64x64xf16>
  %o = gacc.matmul %p, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  %s2 = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %t2 = gacc.add %s2, %one : tensor<2x2x64x64xf16>, tensor<2x1x1x1xf16>
  %p2 = gacc.softmax %t2 axis = 3 : tensor<2x2x64x64xf16>
  %o2 = gacc.matmul %p2, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  %ninf = gacc.constant dense<0xFC00> : tensor<f16>
  %mask = gacc.causal_mask : tensor<1x64xi1>
  %s3 = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %t3 = gacc.select %mask, %s3, %ninf : tensor<1x64xi1>, tensor<2x2x64x64xf16>, tensor<f16>
  %p3 = gacc.softmax %t3 axis = 3 : tensor<2x2x64x64xf16>
  %o3 = gacc.matmul %p3, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  // A frozen parameter's bias is fused.
  %fb = gacc.load @frozen_bias : tensor<2x1x1x64xf32>
  %fbh = gacc.cast %fb : tensor<2x1x1x64xf32> to tensor<2x1x1x64xf16>
  %s4 = gacc.matmul %q, %k transpose_rhs : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x64xf16>
  %t4 = gacc.add %s4, %fbh : tensor<2x2x64x64xf16>, tensor<2x1x1x64xf16>
  %p4 = gacc.softmax %t4 axis = 3 : tensor<2x2x64x64xf16>
  %o4 = gacc.matmul %p4, %v : tensor<2x2x64x64xf16>, tensor<2x2x64x16xf16> -> tensor<2x2x64x16xf16>
  return %o, %o2, %o3, %o4 : tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>, tensor<2x2x64x16xf16>
}

// -----

// Causal with fewer queries than keys: fused, but not for the CUDA kernels
// (they take T = S under the mask).
// CHECK-LABEL: func.func @causal_cross
// CHECK: gacc.attention
// CUDA-LABEL: func.func @causal_cross
// CUDA-NOT: gacc.attention
func.func @causal_cross(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x128x16xf16>,
                        %v: tensor<1x1x128x16xf16>) -> tensor<1x1x64x16xf16> {
  %ninf = gacc.constant dense<0xFC00> : tensor<f16>
  %mask = gacc.causal_mask : tensor<64x128xi1>
  %s = gacc.matmul %q, %k transpose_rhs : tensor<1x1x64x16xf16>, tensor<1x1x128x16xf16> -> tensor<1x1x64x128xf16>
  %t = gacc.select %mask, %s, %ninf : tensor<64x128xi1>, tensor<1x1x64x128xf16>, tensor<f16>
  %p = gacc.softmax %t axis = 3 : tensor<1x1x64x128xf16>
  %o = gacc.matmul %p, %v : tensor<1x1x64x128xf16>, tensor<1x1x128x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}
