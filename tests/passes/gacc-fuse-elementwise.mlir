// RUN: gacc-opt %s --gacc-fuse-elementwise --split-input-file | FileCheck %s

// An elementwise chain after a contraction (a bias add and a ReLU) becomes
// one loop; neither the chain nor the producer of an operand (a square)
// fuses into the contraction, which stays named.
// CHECK-LABEL: func.func @chain
// CHECK: %[[SQ:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: %[[H:.*]] = linalg.contract {{.*}} ins(%[[SQ]], %arg1 : tensor<4x8xf32>, tensor<8x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]], %arg2 : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @chain(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%s, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = arith.maximumf %p, %zero : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Reshapes do not fold into a contraction by expanding its loops: a
// consumer's expand_shape and an operand's collapse_shape (a stretched
// batch dimension) stay, and so does the contraction.
// CHECK-LABEL: func.func @reshaped
// CHECK: linalg.contract
// CHECK: tensor.expand_shape
// CHECK-LABEL: func.func @collapsed
// CHECK: tensor.collapse_shape
// CHECK: linalg.contract
// CHECK-NOT: linalg.generic
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @reshaped(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<2x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.contract indexing_maps = [#mk, #kn, #mn]
      ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = tensor.expand_shape %h [[0, 1], [2]] output_shape [2, 2, 3] : tensor<4x3xf32> into tensor<2x2x3xf32>
  return %r : tensor<2x2x3xf32>
}

func.func @collapsed(%x: tensor<2x1x4x8xf32>, %w: tensor<8x3xf32>) -> tensor<2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x1x4x8xf32> into tensor<2x4x8xf32>
  %e = tensor.empty() : tensor<2x4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %h = linalg.contract indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%c, %w : tensor<2x4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %h : tensor<2x4x3xf32>
}

// -----

// An optimizer's update: the new momentum is written to its slot and read
// by the weight's update, whose value goes to its own slot. One generic
// yields both, each written to its slot after it.
// CHECK-LABEL: func.func @shared_update
// CHECK: %[[BOTH:.*]]:2 = linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: bufferization.materialize_in_destination %[[BOTH]]#{{[01]}} in restrict writable %arg3
// CHECK: bufferization.materialize_in_destination %[[BOTH]]#{{[01]}} in restrict writable %arg4
#id1 = affine_map<(d0) -> (d0)>
func.func @shared_update(%w: tensor<16xf32>, %g: tensor<16xf32>, %buf: tensor<16xf32>, %wslot: memref<16xf32>, %bslot: memref<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %momentum = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%buf, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%b: f32, %d: f32, %o: f32):
    %c = arith.constant 0.9 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.addf %m, %d : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %momentum : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %new in restrict writable %wslot : (tensor<16xf32>, memref<16xf32>) -> ()
  bufferization.materialize_in_destination %momentum in restrict writable %bslot : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// Mixed precision's update: the new momentum, the f32 master weights and
// their bf16 rounding each go to a slot, every write after the rounding.
// One generic yields all three.
// CHECK-LABEL: func.func @shared_update_rounded
// CHECK: %[[ALL:.*]]:3 = linalg.generic
// CHECK: arith.truncf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: bufferization.materialize_in_destination %[[ALL]]#{{[012]}} in restrict writable %arg3
// CHECK: bufferization.materialize_in_destination %[[ALL]]#{{[012]}} in restrict writable %arg4
// CHECK: bufferization.materialize_in_destination %[[ALL]]#{{[012]}} in restrict writable %arg5
#idr = affine_map<(d0) -> (d0)>
func.func @shared_update_rounded(%w: tensor<16xf32>, %g: tensor<16xf32>, %buf: tensor<16xf32>, %w16slot: memref<16xbf16>, %wslot: memref<16xf32>, %bslot: memref<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %momentum = linalg.generic {indexing_maps = [#idr, #idr, #idr], iterator_types = ["parallel"]}
      ins(%buf, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%b: f32, %d: f32, %o: f32):
    %c = arith.constant 0.9 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.addf %m, %d : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#idr, #idr, #idr], iterator_types = ["parallel"]}
      ins(%w, %momentum : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e3 = tensor.empty() : tensor<16xbf16>
  %rounded = linalg.generic {indexing_maps = [#idr, #idr], iterator_types = ["parallel"]}
      ins(%new : tensor<16xf32>) outs(%e3 : tensor<16xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<16xbf16>
  bufferization.materialize_in_destination %rounded in restrict writable %w16slot : (tensor<16xbf16>, memref<16xbf16>) -> ()
  bufferization.materialize_in_destination %new in restrict writable %wslot : (tensor<16xf32>, memref<16xf32>) -> ()
  bufferization.materialize_in_destination %momentum in restrict writable %bslot : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// The same with the master weights written before their rounding (the
// order gacc-build-step used to emit): that write does not follow the
// rounding, so nothing fuses.
// CHECK-LABEL: func.func @shared_update_written_early
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
#ide = affine_map<(d0) -> (d0)>
func.func @shared_update_written_early(%w: tensor<16xf32>, %g: tensor<16xf32>, %buf: tensor<16xf32>, %w16slot: memref<16xbf16>, %wslot: memref<16xf32>, %bslot: memref<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %momentum = linalg.generic {indexing_maps = [#ide, #ide, #ide], iterator_types = ["parallel"]}
      ins(%buf, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%b: f32, %d: f32, %o: f32):
    %c = arith.constant 0.9 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.addf %m, %d : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#ide, #ide, #ide], iterator_types = ["parallel"]}
      ins(%w, %momentum : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.subf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %new in restrict writable %wslot : (tensor<16xf32>, memref<16xf32>) -> ()
  %e3 = tensor.empty() : tensor<16xbf16>
  %rounded = linalg.generic {indexing_maps = [#ide, #ide], iterator_types = ["parallel"]}
      ins(%new : tensor<16xf32>) outs(%e3 : tensor<16xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<16xbf16>
  bufferization.materialize_in_destination %rounded in restrict writable %w16slot : (tensor<16xbf16>, memref<16xbf16>) -> ()
  bufferization.materialize_in_destination %momentum in restrict writable %bslot : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// A shared value whose consumer's result is a temporary (not a slot) stays
// its own loop: fused, the temporary would live beside the producer's
// inputs.
// CHECK-LABEL: func.func @shared_into_temporary
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<16xf32>)
#id2 = affine_map<(d0) -> (d0)>
func.func @shared_into_temporary(%x: tensor<16xf32>, %slot: memref<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%p : tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %p in restrict writable %slot : (tensor<16xf32>, memref<16xf32>) -> ()
  return %c : tensor<16xf32>
}

// -----

// A 16-bit rounding (truncf then extf, between a bf16 step's f32 matmul
// result and its f32 consumers) read by several generics is repeated in
// each of them instead of written and read again; it disappears.
// CHECK-LABEL: func.func @rounding_into_every_user
// CHECK-NOT: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>) {
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]] : tensor<4x8xf32>)
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: arith.subf
// CHECK-NOT: linalg.generic
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#row3 = affine_map<(d0, d1) -> (d0)>
func.func @rounding_into_every_user(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %u = arith.extf %t : bf16 to f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%r, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %m, %d : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Read by a matmul too, the rounding stays one loop that every user reads.
// CHECK-LABEL: func.func @rounding_into_matmul
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: linalg.matmul ins(%[[R]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<4x8xf32>)
#id4 = affine_map<(d0, d1) -> (d0, d1)>
func.func @rounding_into_matmul(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.truncf %a : f32 to bf16
    %u = arith.extf %t : bf16 to f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  %p = linalg.matmul ins(%r, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %p, %n : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// A narrowing alone (its users would read the wider input instead) and a
// transpose (its users would read across rows) stay single loops that
// their users read.
// CHECK-LABEL: func.func @narrowing_and_transpose_stay
// CHECK: %[[N:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[N]], %[[T]] : tensor<4x8xbf16>, tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[N]], %[[T]] : tensor<4x8xbf16>, tensor<4x8xf32>)
#id5 = affine_map<(d0, d1) -> (d0, d1)>
#tr5 = affine_map<(d0, d1) -> (d1, d0)>
func.func @narrowing_and_transpose_stay(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xbf16>
  %n = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#tr5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x4xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%n, %t : tensor<4x8xbf16>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %b: f32, %o: f32):
    %w = arith.extf %a : bf16 to f32
    %s = arith.addf %w, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %v = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%n, %t : tensor<4x8xbf16>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %b: f32, %o: f32):
    %w = arith.extf %a : bf16 to f32
    %s = arith.mulf %w, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %u, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A gather (col2im's tensor.extract) reads through the transpose and the
// reshapes that put a GEMM's [C·K, N·L] result in [N, C, K, L] order: the
// transpose is no pass of its own; the indices become multiply-adds.
// CHECK-LABEL: func.func @gather_through_transpose
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK: %[[C:.*]] = linalg.index 1
// CHECK: arith.muli %[[C]], %c3
// CHECK: arith.muli %[[N]], %c4
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<6x8xf32>
// CHECK-NOT: linalg.generic
func.func @gather_through_transpose(%gemm: tensor<6x8xf32>) -> tensor<2x2x4xf32> {
  %e = tensor.expand_shape %gemm [[0, 1], [2, 3]] output_shape [2, 3, 2, 4] : tensor<6x8xf32> into tensor<2x3x2x4xf32>
  %init = tensor.empty() : tensor<2x2x3x4xf32>
  %t = linalg.transpose ins(%e : tensor<2x3x2x4xf32>) outs(%init : tensor<2x2x3x4xf32>) permutation = [2, 0, 1, 3]
  %out = tensor.empty() : tensor<2x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, l) -> (n, c, l)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%out : tensor<2x2x4xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %l = linalg.index 2 : index
    %c1 = arith.constant 1 : index
    %v = tensor.extract %t[%n, %c, %c1, %l] : tensor<2x2x3x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x2x4xf32>
  return %r : tensor<2x2x4xf32>
}

// -----

// A sum over the classes of a one-hot term (cross-entropy's picked
// log-probability) reads the picked class alone: the class loop is gone,
// an elementwise producer (the shifted logits) is computed for that element
// only, and a target outside the classes adds 0.
// CHECK-LABEL: func.func @one_hot_sum_reads_the_target
// CHECK: %[[SHIFTED:.*]] = linalg.generic {{.*}} ins(%arg1, %arg2 : tensor<4x64xf32>, tensor<4x1xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["reduction"]} ins(%arg0, %arg3 : tensor<4xi64>, tensor<4x1xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[T:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[T]], %c64
// CHECK: %[[ABOVE:.*]] = arith.cmpi sge, %[[T]], %c0
// CHECK: %[[VALID:.*]] = arith.andi %[[ABOVE]], %[[BELOW]]
// CHECK: %[[ROW:.*]] = linalg.index 0
// CHECK: %[[CLASS:.*]] = arith.select %[[VALID]], %[[T]], %c0
// CHECK: %[[LOGIT:.*]] = tensor.extract %arg1[%[[ROW]], %[[CLASS]]] : tensor<4x64xf32>
// CHECK: %[[MAX:.*]] = tensor.extract %arg2[%[[ROW]], %c0] : tensor<4x1xf32>
// CHECK: arith.subf %[[LOGIT]], %[[MAX]]
// CHECK: %[[PICKED:.*]] = arith.mulf
// CHECK: %[[KEPT:.*]] = arith.select %[[VALID]], %[[PICKED]], %cst
// CHECK: arith.addf %[[KEPT]], %{{.*}}
// CHECK-NOT: math.log
#row = affine_map<(r, c) -> (r)>
#rc = affine_map<(r, c) -> (r, c)>
#r0 = affine_map<(r, c) -> (r, 0)>
#all = affine_map<(r, c) -> ()>
func.func @one_hot_sum_reads_the_target(%t: tensor<4xi64>, %logits: tensor<4x64xf32>, %max: tensor<4x1xf32>, %lse: tensor<4x1xf32>) -> (tensor<f32>, tensor<4x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %shifted = linalg.generic {indexing_maps = [#rc, #r0, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %max : tensor<4x64xf32>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %exp = linalg.generic {indexing_maps = [#rc, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%shifted : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<4x64xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#row, #rc, #r0, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t, %shifted, %lse : tensor<4xi64>, tensor<4x64xf32>, tensor<4x1xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%id: i64, %x: f32, %l: f32, %o: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %id, %ci : i64
    %h = arith.select %eq, %one, %zero : f32
    %lp = arith.subf %x, %l : f32
    %p = arith.mulf %h, %lp : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum, %exp : tensor<f32>, tensor<4x64xf32>
}

// -----

// A one-hot whose id varies along the summed loop, or a loop that is not
// summed, keeps its loop.
// CHECK-LABEL: func.func @one_hot_not_summed
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: tensor.extract
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: tensor.extract
#ids2 = affine_map<(r, c) -> (r, c)>
#out1 = affine_map<(r, c) -> (r)>
func.func @one_hot_not_summed(%t: tensor<4x64xi64>, %x: tensor<4x64xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %sum = linalg.generic {indexing_maps = [#ids2, #ids2, #out1], iterator_types = ["parallel", "reduction"]}
      ins(%t, %x : tensor<4x64xi64>, tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%id: i64, %v: f32, %o: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %id, %ci : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %kept = linalg.generic {indexing_maps = [#ids2, #ids2, #ids2, #ids2], iterator_types = ["parallel", "parallel"]}
      ins(%t, %x, %x : tensor<4x64xi64>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%id: i64, %v: f32, %w: f32, %o: f32):
    %c = linalg.index 0 : index
    %ci = arith.index_cast %c : index to i64
    %eq = arith.cmpi eq, %id, %ci : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %w : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  return %sum, %kept : tensor<4xf32>, tensor<4x64xf32>
}
