// RUN: gacc-opt %s -gacc-decompose | FileCheck %s

// Training: the batch's mean and biased variance over every dimension but
// the channels (36 values per channel); the running variance takes the
// unbiased one (momentum · 36/35 = 0.102857143).
// CHECK-LABEL: func.func @train
// CHECK-DAG: %[[EPS:.*]] = gacc.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-DAG: %[[MV:.*]] = gacc.constant dense<0.102857143> : tensor<f32>
// CHECK-DAG: %[[KEEP:.*]] = gacc.constant dense<0.899999976> : tensor<f32>
// CHECK-DAG: %[[M:.*]] = gacc.constant dense<1.000000e-01> : tensor<f32>
// CHECK-DAG: %[[N:.*]] = gacc.constant dense<3.600000e+01> : tensor<f32>
// CHECK: %[[S:.*]] = gacc.reduce_sum %arg0 axes = [0, 2, 3] keepdims : tensor<4x2x3x3xf32> -> tensor<1x2x1x1xf32>
// CHECK: %[[MEAN:.*]] = gacc.div %[[S]], %[[N]]
// CHECK: %[[C:.*]] = gacc.sub %arg0, %[[MEAN]]
// CHECK: %[[SQ:.*]] = gacc.mul %[[C]], %[[C]]
// CHECK: %[[VS:.*]] = gacc.reduce_sum %[[SQ]] axes = [0, 2, 3] keepdims
// CHECK: %[[VAR:.*]] = gacc.div %[[VS]], %[[N]]
// CHECK: %[[MEAN1:.*]] = gacc.reshape %[[MEAN]] : tensor<1x2x1x1xf32> -> tensor<2xf32>
// CHECK: %[[A:.*]] = gacc.mul %[[M]], %[[MEAN1]]
// CHECK: %[[B:.*]] = gacc.mul %[[KEEP]], %arg3
// CHECK: %[[NM:.*]] = gacc.add %[[B]], %[[A]]
// CHECK: %[[VAR1:.*]] = gacc.reshape %[[VAR]] : tensor<1x2x1x1xf32> -> tensor<2xf32>
// CHECK: %[[A2:.*]] = gacc.mul %[[MV]], %[[VAR1]]
// CHECK: %[[B2:.*]] = gacc.mul %[[KEEP]], %arg4
// CHECK: %[[NV:.*]] = gacc.add %[[B2]], %[[A2]]
// CHECK: %[[R:.*]] = gacc.rsqrt
// CHECK: %[[Y:.*]] = gacc.add
// CHECK: return %[[Y]], %[[NM]], %[[NV]]

// Inference: the running statistics normalize, and come back unchanged.
// CHECK-LABEL: func.func @inference
// CHECK: %[[RM:.*]] = gacc.reshape %arg3 : tensor<2xf32> -> tensor<1x2xf32>
// CHECK: gacc.sub %arg0, %[[RM]]
// CHECK: %[[RV:.*]] = gacc.reshape %arg4 : tensor<2xf32> -> tensor<1x2xf32>
// CHECK: gacc.add %[[RV]]
// CHECK-NOT: gacc.reduce_sum
// CHECK: return %{{.*}}, %arg3, %arg4
func.func @train(%x: tensor<4x2x3x3xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>, %rm: tensor<2xf32>, %rv: tensor<2xf32>) -> (tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %y, %nm, %nv = gacc.batch_norm %x, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05 : tensor<4x2x3x3xf32>, tensor<2xf32>
  return %y, %nm, %nv : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @inference(%x: tensor<4x2xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>, %rm: tensor<2xf32>, %rv: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %y, %nm, %nv = gacc.batch_norm %x, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05 inference : tensor<4x2xf32>, tensor<2xf32>
  return %y, %nm, %nv : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
}
