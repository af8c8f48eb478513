// RUN: gacc-opt %s -gacc-cpu-matmul-to-call | FileCheck %s

#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-DAG: func.func private @gacc_cpu_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i32, i32, i32)
// CHECK-DAG: func.func private @gacc_cpu_matmul_f16_f32(memref<*xf16>, memref<*xf16>, memref<*xf32>, i32, i32, i32)
// CHECK-LABEL: func.func @marked
func.func @marked(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  // CHECK-DAG: %[[A:.*]] = memref.cast %arg0 : memref<4x3xf32> to memref<*xf32>
  // CHECK-DAG: %[[B:.*]] = memref.cast %arg1 : memref<5x3xf32> to memref<*xf32>
  // CHECK-DAG: %[[C:.*]] = memref.cast %arg2 : memref<4x5xf32> to memref<*xf32>
  // CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[ACCUMULATE:.*]] = arith.constant 1 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%[[A]], %[[B]], %[[C]], %[[NO]], %[[YES]], %[[ACCUMULATE]])
  // CHECK-NOT: linalg.contract
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  return
}

// Any named contraction laid out as a matmul: linalg.matmul too.
// CHECK-LABEL: func.func @named_matmul
func.func @named_matmul(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  // CHECK: %[[NO:.*]] = arith.constant 0 : i32
  // CHECK: %[[NO2:.*]] = arith.constant 0 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[NO]], %[[NO2]],
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// A zero fill of C that is the last write before the product: dropped, and
// the call overwrites C (accumulate = 0). Views between do not count; a
// fill of another value, or a write between, keeps the fill.
// CHECK-LABEL: func.func @overwrite
func.func @overwrite(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %buf: memref<?xi8>, %d: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  // CHECK-NOT: linalg.fill
  // CHECK: arith.constant 0 : i32
  // CHECK: arith.constant 1 : i32
  // CHECK: %[[OVERWRITE:.*]] = arith.constant 0 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[OVERWRITE]])
  %c = memref.view %buf[%c0][] : memref<?xi8> to memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
  // CHECK: arith.constant 1 : i32
  // CHECK: %[[ACCUMULATE:.*]] = arith.constant 1 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACCUMULATE]])
  linalg.fill ins(%one : f32) outs(%d : memref<4x5xf32>)
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%d : memref<4x5xf32>)
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
  // CHECK: memref.copy
  // CHECK: arith.constant 1 : i32
  // CHECK: %[[ACCUMULATE2:.*]] = arith.constant 1 : i32
  // CHECK: call @gacc_cpu_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACCUMULATE2]])
  linalg.fill ins(%zero : f32) outs(%d : memref<4x5xf32>)
  memref.copy %c, %d : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%d : memref<4x5xf32>)
  return
}

// f16 operands accumulating into f32 (the contraction's cast widens them).
// CHECK-LABEL: func.func @mixed
func.func @mixed(%a: memref<4x3xf16>, %b: memref<5x3xf16>, %c: memref<4x5xf32>) {
  // CHECK: call @gacc_cpu_matmul_f16_f32
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf16>, memref<5x3xf16>) outs(%c : memref<4x5xf32>)
  return
}

// Batch loops (b0, b1): the lhs reads b0 only, so it gets a unit dimension
// for b1 (the runtime aligns batch dimensions from the end, as NumPy
// does); the rhs reads b1 only, already aligned.
// CHECK-LABEL: func.func @broadcast
func.func @broadcast(%a: memref<2x4x3xf32>, %b: memref<6x3x5xf32>, %c: memref<2x6x4x5xf32>) {
  // CHECK: %[[X:.*]] = memref.expand_shape %arg0 {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 4, 3] : memref<2x4x3xf32> into memref<2x1x4x3xf32>
  // CHECK: %[[A:.*]] = memref.cast %[[X]] : memref<2x1x4x3xf32> to memref<*xf32>
  // CHECK: %[[B:.*]] = memref.cast %arg1 : memref<6x3x5xf32> to memref<*xf32>
  // CHECK: call @gacc_cpu_matmul_f32(%[[A]], %[[B]],
  linalg.contract indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>]
      ins(%a, %b : memref<2x4x3xf32>, memref<6x3x5xf32>) outs(%c : memref<2x6x4x5xf32>)
  return
}

// Other element types keep the contraction.
// CHECK-LABEL: func.func @half
func.func @half(%a: memref<4x3xf16>, %b: memref<5x3xf16>, %c: memref<4x5xf16>) {
  // CHECK: linalg.contract
  linalg.contract indexing_maps = [#lhs, #rhs, #out]
      ins(%a, %b : memref<4x3xf16>, memref<5x3xf16>) outs(%c : memref<4x5xf16>)
  return
}

// A linalg.generic is not a named contraction, whatever its body computes:
// it stays a loop (matmuls are recognized by op, never by body).
// CHECK-LABEL: func.func @generic
func.func @generic(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  // CHECK: linalg.generic
  // CHECK-NOT: call
  linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A contraction whose C is not laid out (batch..., m, n) keeps its loops.
// CHECK-LABEL: func.func @transposed_result
func.func @transposed_result(%a: memref<4x3xf32>, %b: memref<5x3xf32>, %c: memref<5x4xf32>) {
  // CHECK: linalg.contract
  linalg.contract indexing_maps = [#lhs, #rhs, affine_map<(d0, d1, d2) -> (d1, d0)>]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>) outs(%c : memref<5x4xf32>)
  return
}

// An embedding's gradient (gacc.embedding_gradient: one_hot(ids)ᵀ · dy, the
// ids read from the batch arena): the rows of dy added at their ids by the
// runtime, overwriting C after a zero fill; the one-hot and the product go.
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#hot = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#hotT = affine_map<(d0, d1, d2) -> (d2, d0)>
#dy = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @embedding_gradient
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[IDS:.*]] = memref.cast %{{.*}} : memref<2x3xi32> to memref<*xi32>
// CHECK-DAG: %[[DY:.*]] = memref.cast %arg2 : memref<6x4xf32> to memref<*xf32>
// CHECK-DAG: %[[C:.*]] = memref.cast %arg3 : memref<5x4xf32> to memref<*xf32>
// CHECK-DAG: %[[OVERWRITE:.*]] = arith.constant 0 : i32
// CHECK: call @gacc_cpu_embedding_gradient_f32_i32(%[[IDS]], %[[DY]], %[[C]], %[[OVERWRITE]])
// CHECK-NOT: linalg.contract
// CHECK: return
func.func @embedding_gradient(%batch: memref<?xi8> {gacc.arena = "batch"}, %hot: memref<2x3x5xf32>, %dy: memref<6x4xf32>, %c: memref<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %ids = memref.view %batch[%c0][] : memref<?xi8> to memref<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#ids, #hot], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : memref<2x3xi32>) outs(%hot : memref<2x3x5xf32>) {
  ^bb0(%id: i32, %o: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i32
    %hit = arith.cmpi eq, %id, %vi : i32
    %x = arith.select %hit, %one, %zero : f32
    linalg.yield %x : f32
  }
  %flat = memref.collapse_shape %hot [[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x4xf32>)
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xf32>, memref<6x4xf32>) outs(%c : memref<5x4xf32>)
      {gacc.embedding_gradient}
  return
}

// When something else reads the one-hot (an unmarked product here), it
// stays; a product without the mark, or whose lhs was last written by
// anything but a one-hot of ids, stays a product; so does one whose ids are
// not the batch's (computed by the step: the product may come after their
// buffer's last planned use).
// CHECK-LABEL: func.func @one_hot_read_elsewhere
// CHECK: linalg.generic
// CHECK: call @gacc_cpu_embedding_gradient_f32_i32
// CHECK: call @gacc_cpu_matmul_f32
// CHECK: linalg.fill
// CHECK: call @gacc_cpu_matmul_f32
// CHECK: linalg.generic
// CHECK-NOT: gacc_cpu_embedding_gradient
// CHECK: call @gacc_cpu_matmul_f32
// CHECK: return
func.func @one_hot_read_elsewhere(%batch: memref<?xi8> {gacc.arena = "batch"}, %hot: memref<2x3x5xf32>, %dy: memref<6x4xf32>, %c: memref<5x4xf32>, %d: memref<5x4xf32>, %computed: memref<2x3xi32>) {
  %c0 = arith.constant 0 : index
  %ids = memref.view %batch[%c0][] : memref<?xi8> to memref<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#ids, #hot], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : memref<2x3xi32>) outs(%hot : memref<2x3x5xf32>) {
  ^bb0(%id: i32, %o: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i32
    %hit = arith.cmpi eq, %id, %vi : i32
    %x = arith.select %hit, %one, %zero : f32
    linalg.yield %x : f32
  }
  %flat = memref.collapse_shape %hot [[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xf32>, memref<6x4xf32>) outs(%c : memref<5x4xf32>)
      {gacc.embedding_gradient}
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xf32>, memref<6x4xf32>) outs(%d : memref<5x4xf32>)
  // The one-hot's bytes rewritten: not a one-hot of ids any more.
  linalg.fill ins(%one : f32) outs(%hot : memref<2x3x5xf32>)
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xf32>, memref<6x4xf32>) outs(%d : memref<5x4xf32>)
      {gacc.embedding_gradient}
  linalg.generic {indexing_maps = [#ids, #hot], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%computed : memref<2x3xi32>) outs(%hot : memref<2x3x5xf32>) {
  ^bb0(%id: i32, %o: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i32
    %hit = arith.cmpi eq, %id, %vi : i32
    %x = arith.select %hit, %one, %zero : f32
    linalg.yield %x : f32
  }
  linalg.contract indexing_maps = [#hotT, #dy, #c]
      ins(%flat, %dy : memref<6x5xf32>, memref<6x4xf32>) outs(%d : memref<5x4xf32>)
      {gacc.embedding_gradient}
  return
}
