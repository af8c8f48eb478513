// RUN: gacc-opt %s --gacc-cpu-approximate-math | FileCheck %s

// f32 exp, log, tanh, erf and expm1 become arithmetic (polynomials, with
// fused multiply-adds); f64 keeps libm's, and so do sin and cos.
// CHECK-LABEL: func.func @f32(
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: return
func.func @f32(%x: f32) -> (f32, f32, f32, f32, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  %m = math.expm1 %x : f32
  return %e, %l, %t, %r, %m : f32, f32, f32, f32, f32
}

// 16-bit floats are computed in f32, approximated.
// CHECK-LABEL: func.func @half(
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @half(%x: bf16) -> bf16 {
  %t = math.tanh %x : bf16
  return %t : bf16
}

// CHECK-LABEL: func.func @kept(
// CHECK: math.exp {{.*}} : f64
// CHECK: math.tanh {{.*}} : f64
// CHECK: math.sin {{.*}} : f32
// CHECK: math.cos {{.*}} : f32
func.func @kept(%x: f64, %y: f32) -> (f64, f64, f32, f32) {
  %e = math.exp %x : f64
  %t = math.tanh %x : f64
  %s = math.sin %y : f32
  %c = math.cos %y : f32
  return %e, %t, %s, %c : f64, f64, f32, f32
}
