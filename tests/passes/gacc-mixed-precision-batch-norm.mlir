// RUN: gacc-opt %s -split-input-file -gacc-mixed-precision | FileCheck %s
// RUN: gacc-opt %s -split-input-file -gacc-mixed-precision -gacc-autodiff -gacc-build-step | FileCheck %s --check-prefix=STATE

// Batch norm computes in f32 (its input cast up from the bf16 matmul), and
// the running statistics stay f32 parameters, assigned in f32, as under
// PyTorch's autocast.
gacc.param @w1 : tensor<6x4xf32> = #gacc.init<xavier_uniform, seed = 1>
gacc.param @bn.weight : tensor<6xf32> = #gacc.init<ones>
gacc.param @bn.bias : tensor<6xf32> = #gacc.init<zeros>
gacc.param @bn.running_mean : tensor<6xf32> = #gacc.init<zeros> frozen
gacc.param @bn.running_var : tensor<6xf32> = #gacc.init<ones> frozen
gacc.param @w2 : tensor<3x6xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w1 = gacc.load @w1 : tensor<6x4xf32>
  %h = gacc.matmul %x, %w1 transpose_rhs : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
  %w = gacc.load @bn.weight : tensor<6xf32>
  %b = gacc.load @bn.bias : tensor<6xf32>
  %rm = gacc.load @bn.running_mean : tensor<6xf32>
  %rv = gacc.load @bn.running_var : tensor<6xf32>
  %n, %nm, %nv = gacc.batch_norm %h, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05
      : tensor<8x6xf32>, tensor<6xf32>
  gacc.assign @bn.running_mean, %nm : tensor<6xf32>
  gacc.assign @bn.running_var, %nv : tensor<6xf32>
  %r = gacc.relu %n : tensor<8x6xf32>
  %w2 = gacc.load @w2 : tensor<3x6xf32>
  %logits = gacc.matmul %r, %w2 transpose_rhs : tensor<8x6xf32>, tensor<3x6xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1> precision bf16
// CHECK-LABEL: func.func @m()
// CHECK: %[[H:.*]] = gacc.matmul %{{.*}} -> tensor<8x6xbf16>
// CHECK-DAG: %[[RM:.*]] = gacc.load @bn.running_mean : tensor<6xf32>
// CHECK-DAG: %[[RV:.*]] = gacc.load @bn.running_var : tensor<6xf32>
// CHECK-DAG: %[[H32:.*]] = gacc.cast %[[H]] : tensor<8x6xbf16> to tensor<8x6xf32>
// CHECK: %{{.*}}, %[[NM:.*]], %[[NV:.*]] = gacc.batch_norm %[[H32]], %{{.*}}, %{{.*}}, %[[RM]], %[[RV]] {{.*}} : tensor<8x6xf32>, tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_mean, %[[NM]] : tensor<6xf32>
// CHECK-NEXT: gacc.assign @bn.running_var, %[[NV]] : tensor<6xf32>
// (w1 keeps bf16 weights at 0; bn.weight 64, bn.bias 128, bn.running_mean
// 192 and bn.running_var 256 stay f32.)
// STATE-LABEL: func.func @gacc_step
// STATE: memref.view %arg0[%c0{{.*}}][] : memref<?xi8> to memref<6x4xbf16>
// STATE: memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<6xf32>
// STATE: memref.view %arg0[%c256{{.*}}][] : memref<?xi8> to memref<6xf32>

// -----

// A frozen weight that only a bf16 matmul reads stays f32 in the state
// (slot 0), cast where it is used, without a master copy; the trainable one
// is kept in bf16 (slot 64) with its f32 master (192, after its bf16
// gradient at 128).
gacc.param @frozen : tensor<3x4xf32> = #gacc.init<normal, seed = 1> frozen
gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, seed = 2>
gacc.input @x : tensor<5x4xf32> features
gacc.input @y : tensor<5xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<5x4xf32>
  %y = gacc.load @y : tensor<5xi32>
  %f = gacc.load @frozen : tensor<3x4xf32>
  %w = gacc.load @w : tensor<3x4xf32>
  %a = gacc.matmul %x, %f transpose_rhs : tensor<5x4xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
  %b = gacc.matmul %x, %w transpose_rhs : tensor<5x4xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
  %l = gacc.add %a, %b : tensor<5x3xf32>, tensor<5x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<5x3xf32>, tensor<5xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 5 optimizer #gacc.sgd<lr = 0.1> precision bf16
// CHECK-LABEL: func.func @m()
// CHECK: %[[F:.*]] = gacc.load @frozen : tensor<3x4xf32>
// CHECK: gacc.cast %[[F]] : tensor<3x4xf32> to tensor<3x4xbf16>
// STATE-LABEL: func.func @gacc_step
// STATE: memref.view %arg0[%c0{{.*}}][] : memref<?xi8> to memref<3x4xf32>
// STATE: memref.view %arg0[%c64{{.*}}][] : memref<?xi8> to memref<3x4xbf16>
// STATE: memref.view %arg0[%c128{{.*}}][] : memref<?xi8> to memref<3x4xbf16>
// STATE: memref.view %arg0[%c192{{.*}}][] : memref<?xi8> to memref<3x4xf32>
// STATE-NOT: memref.view %arg0[%c256
// STATE-LABEL: func.func @gacc_eval
