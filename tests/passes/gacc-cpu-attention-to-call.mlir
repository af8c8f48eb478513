// RUN: gacc-opt %s -gacc-cpu-attention-to-call -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-DAG: func.func private @gacc_cpu_attention_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64, i32, i32)
// CHECK-DAG: func.func private @gacc_cpu_attention_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, f64, i32, i32)
// CHECK-LABEL: func.func @causal
func.func @causal(%q: memref<2x4x64x32xf32>, %k: memref<2x4x64x32xf32>,
                  %v: memref<2x4x64x32xf32>, %o: memref<2x4x64x32xf32>,
                  %lse: memref<2x4x64xf32>, %do: memref<2x4x64x32xf32>,
                  %delta: memref<2x4x64xf32>, %dq: memref<2x4x64x32xf32>,
                  %dk: memref<2x4x64x32xf32>, %dv: memref<2x4x64x32xf32>) {
  // Without a key bias, the log-sum-exp takes its place, unread.
  // CHECK-DAG: %[[Q:.*]] = memref.cast %arg0 : memref<2x4x64x32xf32> to memref<*xf32>
  // CHECK-DAG: %[[O:.*]] = memref.cast %arg3 : memref<2x4x64x32xf32> to memref<*xf32>
  // CHECK-DAG: %[[LSE:.*]] = memref.cast %arg4 : memref<2x4x64xf32> to memref<*xf32>
  // CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f64
  // CHECK-DAG: %[[CAUSAL:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[NO_BIAS:.*]] = arith.constant 0 : i32
  // CHECK: call @gacc_cpu_attention_f32(%[[Q]], %{{.*}}, %{{.*}}, %[[LSE]], %[[O]], %[[LSE]], %[[SCALE]], %[[CAUSAL]], %[[NO_BIAS]])
  // CHECK-NOT: gacc.attention
  gacc.attention %q, %k, %v into %o, %lse scale = 1.250000e-01 causal
      : memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>
      into memref<2x4x64x32xf32>, memref<2x4x64xf32>
  // CHECK: %[[DELTA:.*]] = memref.cast %arg6 : memref<2x4x64xf32> to memref<*xf32>
  // CHECK: call @gacc_cpu_attention_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DELTA]], %[[DELTA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
  // CHECK-NOT: gacc.attention_grad
  gacc.attention_grad %q, %k, %v, %do, %lse, %delta into %dq, %dk, %dv
      scale = 1.250000e-01 causal
      : memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>,
        memref<2x4x64x32xf32>, memref<2x4x64xf32>, memref<2x4x64xf32>
      into memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>
  return
}

// -----

// A key bias is passed with the flag set; f64 operands (gradient checks)
// compute in f64, 16-bit ones have their own kernels.
// CHECK-LABEL: func.func @key_bias
func.func @key_bias(%q: memref<2x4x8x16xf64>, %k: memref<2x4x10x16xf64>,
                    %bias: memref<2x10xf64>, %o: memref<2x4x8x16xf64>,
                    %lse: memref<2x4x8xf64>, %qb: memref<2x4x8x16xbf16>,
                    %kb: memref<2x4x10x16xbf16>, %ob: memref<2x4x8x16xbf16>,
                    %lseb: memref<2x4x8xf32>) {
  // CHECK-DAG: %[[BIAS:.*]] = memref.cast %arg2 : memref<2x10xf64> to memref<*xf64>
  // CHECK-DAG: %[[HAS_BIAS:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[NOT_CAUSAL:.*]] = arith.constant 0 : i32
  // CHECK: call @gacc_cpu_attention_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[BIAS]], %{{.*}}, %{{.*}}, %{{.*}}, %[[NOT_CAUSAL]], %[[HAS_BIAS]])
  gacc.attention %q, %k, %k key_bias %bias into %o, %lse scale = 2.500000e-01
      : memref<2x4x8x16xf64>, memref<2x4x10x16xf64>, memref<2x4x10x16xf64>,
        memref<2x10xf64> into memref<2x4x8x16xf64>, memref<2x4x8xf64>
  // CHECK: call @gacc_cpu_attention_bf16(
  gacc.attention %qb, %kb, %kb into %ob, %lseb scale = 2.500000e-01
      : memref<2x4x8x16xbf16>, memref<2x4x10x16xbf16>, memref<2x4x10x16xbf16>
        into memref<2x4x8x16xbf16>, memref<2x4x8xf32>
  return
}

// -----

func.func @no_kernel(%q: memref<1x1x8x16xf8E4M3FN>, %o: memref<1x1x8x16xf8E4M3FN>,
                     %lse: memref<1x1x8xf32>) {
  // expected-error @+1 {{has no CPU kernel for 'f8E4M3FN' operands}}
  gacc.attention %q, %q, %q into %o, %lse scale = 2.500000e-01
      : memref<1x1x8x16xf8E4M3FN>, memref<1x1x8x16xf8E4M3FN>,
        memref<1x1x8x16xf8E4M3FN> into memref<1x1x8x16xf8E4M3FN>,
        memref<1x1x8xf32>
  return
}

// -----

func.func @tensors(%q: tensor<1x1x8x16xf32>, %o: tensor<1x1x8x16xf32>,
                   %lse: tensor<1x1x8xf32>) -> tensor<1x1x8x16xf32> {
  // expected-error @+1 {{must be bufferized before gacc-cpu-attention-to-call}}
  %r:2 = gacc.attention %q, %q, %q into %o, %lse scale = 2.500000e-01
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>
        into tensor<1x1x8x16xf32>, tensor<1x1x8xf32>
      -> tensor<1x1x8x16xf32>, tensor<1x1x8xf32>
  return %r#0 : tensor<1x1x8x16xf32>
}
