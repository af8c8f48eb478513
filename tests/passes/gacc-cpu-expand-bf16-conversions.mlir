// RUN: gacc-opt %s -gacc-cpu-expand-bf16-conversions | FileCheck %s

// Rounding to bf16: round to nearest even on the bits (0x7fff plus the
// lowest kept bit), a NaN selected apart as 0x7fc0; no truncf is left.
// CHECK-LABEL: func.func @round
// CHECK-DAG: arith.constant dense<32767> : vector<16xi32>
// CHECK-DAG: arith.constant dense<32704> : vector<16xi16>
// CHECK: %[[ISNAN:.*]] = arith.cmpf une, %arg0, %arg0 : vector<16xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : vector<16xf32> to vector<16xi32>
// CHECK: arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[HALF:.*]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: %[[SEL:.*]] = arith.select %[[ISNAN]], %{{.*}}, %[[HALF]] : vector<16xi1>, vector<16xi16>
// CHECK: arith.bitcast %[[SEL]] : vector<16xi16> to vector<16xbf16>
// CHECK-NOT: arith.truncf
func.func @round(%x: vector<16xf32>) -> vector<16xbf16> {
  %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %h : vector<16xbf16>
}

// Widening is a shift of the bits; f16 keeps its conversions.
// CHECK-LABEL: func.func @widen
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %{{.*}} : i32
// CHECK: arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @widen(%h: bf16, %x: f32) -> (f32, f16) {
  %w = arith.extf %h : bf16 to f32
  %y = arith.truncf %x : f32 to f16
  return %w, %y : f32, f16
}
