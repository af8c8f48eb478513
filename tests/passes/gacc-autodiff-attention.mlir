// RUN: gacc-opt %s -gacc-autodiff | FileCheck %s

// gacc.attention's rule: delta = rowsum(dO · O) in f32 (O and dO widened
// from bf16), then gacc.attention_grad from Q, K, V, dO, the forward's
// log-sum-exp (its second result) and delta, with its scale, causal mask
// and key bias; the key bias gets no gradient.
gacc.param @q : tensor<2x2x64x16xbf16> = #gacc.init<normal, scale = 1.0, seed = 1>
gacc.param @k : tensor<2x2x64x16xbf16> = #gacc.init<normal, scale = 1.0, seed = 2>
gacc.param @v : tensor<2x2x64x16xbf16> = #gacc.init<normal, scale = 1.0, seed = 3>
gacc.input @bias : tensor<2x64xf32> mask
func.func @m() -> tensor<bf16> {
  %q = gacc.load @q : tensor<2x2x64x16xbf16>
  %k = gacc.load @k : tensor<2x2x64x16xbf16>
  %v = gacc.load @v : tensor<2x2x64x16xbf16>
  %b = gacc.load @bias : tensor<2x64xf32>
  %o0 = tensor.empty() : tensor<2x2x64x16xbf16>
  %l0 = tensor.empty() : tensor<2x2x64xf32>
  %o, %l = gacc.attention %q, %k, %v key_bias %b into %o0, %l0 scale = 0.25 causal
      : tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x64xf32>
      into tensor<2x2x64x16xbf16>, tensor<2x2x64xf32> -> tensor<2x2x64x16xbf16>, tensor<2x2x64xf32>
  %s = gacc.reduce_sum %o axes = [0, 1, 2, 3] : tensor<2x2x64x16xbf16> -> tensor<bf16>
  return %s : tensor<bf16>
}
gacc.train_step @t model @m batch_size 2 optimizer #gacc.sgd<lr = 0.1>
// CHECK-LABEL: func.func @m_grad() -> (tensor<bf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>)
// CHECK: %[[Q:.*]] = gacc.load @q
// CHECK: %[[K:.*]] = gacc.load @k
// CHECK: %[[V:.*]] = gacc.load @v
// CHECK: %[[B:.*]] = gacc.load @bias
// CHECK: %[[A:.*]]:2 = gacc.attention %[[Q]], %[[K]], %[[V]] key_bias %[[B]]
// CHECK: %[[DO:.*]] = gacc.broadcast
// CHECK-DAG: %[[DO32:.*]] = gacc.cast %[[DO]] : tensor<2x2x64x16xbf16> to tensor<2x2x64x16xf32>
// CHECK-DAG: %[[O32:.*]] = gacc.cast %[[A]]#0 : tensor<2x2x64x16xbf16> to tensor<2x2x64x16xf32>
// CHECK: %[[P:.*]] = gacc.mul %[[DO32]], %[[O32]]
// CHECK: %[[DELTA:.*]] = gacc.reduce_sum %[[P]] axes = [3] : tensor<2x2x64x16xf32> -> tensor<2x2x64xf32>
// CHECK: %[[G:.*]]:3 = gacc.attention_grad %[[Q]], %[[K]], %[[V]], %[[DO]], %[[A]]#1, %[[DELTA]] key_bias %[[B]] into %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 causal
// CHECK: return %{{.*}}, %[[G]]#0, %[[G]]#1, %[[G]]#2
