// RUN: gacc-opt %s --gacc-fuse-elementwise=recompute-producers=1 --split-input-file | FileCheck %s
// RUN: gacc-opt %s --gacc-fuse-elementwise --split-input-file | FileCheck %s --check-prefix=STORED

// GELU's tanh approximation shares x², and tanh(...) with its derivative
// (autodiff and CSE leave them to both): each of the forward and the
// backward computes them again from x, which the backward reads anyway,
// and neither is stored. Without recompute-producers they are.
// CHECK-LABEL: func.func @gelu_like
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[DY:.*]]: tensor<4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xbf16>)
// CHECK: math.tanh
// CHECK: linalg.generic {{.*}} ins(%[[DY]], %[[X]] : tensor<4x8xbf16>, tensor<4x8xbf16>)
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// STORED-LABEL: func.func @gelu_like
// STORED-COUNT-4: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu_like(%x: tensor<4x8xbf16>, %dy: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %k = arith.constant 4.467770e-02 : bf16
  %e = tensor.empty() : tensor<4x8xbf16>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %a : bf16
    linalg.yield %m : bf16
  } -> tensor<4x8xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: bf16, %s: bf16, %o: bf16):
    %c = arith.mulf %s, %a : bf16
    %w = arith.mulf %c, %k : bf16
    %i = arith.addf %a, %w : bf16
    %h = math.tanh %i : bf16
    linalg.yield %h : bf16
  } -> tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %t : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%a: bf16, %h: bf16, %o: bf16):
    %p = arith.addf %h, %a : bf16
    %m = arith.mulf %p, %a : bf16
    linalg.yield %m : bf16
  } -> tensor<4x8xbf16>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %sq, %t : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%g: bf16, %s: bf16, %h: bf16, %o: bf16):
    %p = arith.mulf %s, %h : bf16
    %m = arith.mulf %p, %g : bf16
    linalg.yield %m : bf16
  } -> tensor<4x8xbf16>
  return %y, %dx : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// -----

// A row's value minus its maximum, read by the sum of its exponentials and
// by the backward: both read x and the maximum (a row's worth) instead.
// CHECK-LABEL: func.func @shifted_rows
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X:.*]], %[[MAX:.*]] : tensor<4x64xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MAX]], %{{.*}} : tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>)
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @shifted_rows(%x: tensor<4x64xf32>, %max: tensor<4xf32>, %init: tensor<4xf32>, %dy: tensor<4x64xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x2 = math.exp %a : f32
    %t = arith.addf %x2, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %dy : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %sum, %g : tensor<4xf32>, tensor<4x64xf32>
}

// -----

// Stored, and read by both users: a value of two large inputs (computing
// it again would keep both alive instead of one), and a value a loop reads
// (it would be computed at every iteration).
// CHECK-LABEL: func.func @two_large_inputs
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[S]] :
// CHECK: linalg.generic {{.*}} ins(%[[S]] :
#id3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_large_inputs(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %n, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @read_in_a_loop
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[S]] :
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%[[S]], %{{.*}} :
func.func @read_in_a_loop(%x: tensor<4x8xf32>, %n: index) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4x8xf32>) {
    %u = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel"]}
        ins(%s, %acc : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32>
    scf.yield %u : tensor<4x8xf32>
  }
  return %m, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A one-hot of ids (a row of ids, much smaller) is computed in each user
// that reads the classes from another input too; its sum over the classes
// alone cannot (no input would give that loop its size), so it stays. A
// value made of much smaller inputs only is computed again without
// recompute-producers too (the CPU's cross-entropy: its one-hot is never
// stored).
// CHECK-LABEL: func.func @one_hot
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4xi32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]] : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>)
// (Its sum over the classes then reads the picked class alone.)
// CHECK-LABEL: func.func @one_hot_recomputed
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[IDS:.*]] : tensor<4xi32>)
// CHECK: tensor.extract %[[P:.*]][%{{.*}}, %{{.*}}] : tensor<4x64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[IDS]], %[[P]] : tensor<4xi32>, tensor<4x64xf32>)
// CHECK-NOT: linalg.generic
// STORED-LABEL: func.func @one_hot_recomputed
// STORED-NOT: ins(%{{.*}} : tensor<4xi32>) outs(%{{.*}} : tensor<4x64xf32>)
// STORED: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[IDS:.*]] : tensor<4xi32>)
// STORED: tensor.extract %[[P:.*]][%{{.*}}, %{{.*}}] : tensor<4x64xf32>
// STORED: linalg.generic {{.*}} ins(%[[IDS]], %[[P]] : tensor<4xi32>, tensor<4x64xf32>)
#id4 = affine_map<(d0, d1) -> (d0, d1)>
#row4 = affine_map<(d0, d1) -> (d0)>
func.func @one_hot(%ids: tensor<4xi32>, %p: tensor<4x64xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %h = linalg.generic {indexing_maps = [#row4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%id: i32, %o: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i32
    %eq = arith.cmpi eq, %id, %ci : i32
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %count = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%h, %p : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %b, %a : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %count, %d : tensor<4xf32>, tensor<4x64xf32>
}

func.func @one_hot_recomputed(%ids: tensor<4xi32>, %p: tensor<4x64xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %h = linalg.generic {indexing_maps = [#row4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%id: i32, %o: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i32
    %eq = arith.cmpi eq, %id, %ci : i32
    %v = arith.select %eq, %one, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %picked = linalg.generic {indexing_maps = [#id4, #id4, #row4], iterator_types = ["parallel", "reduction"]}
      ins(%h, %p : tensor<4x64xf32>, tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%h, %p : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %b, %a : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %picked, %d : tensor<4xf32>, tensor<4x64xf32>
}

// -----

// Also stored: a transpose (its users would read across rows), a row's
// value that its users broadcast (computed again for every column), and a
// value of 4 elements from a scalar (its inputs are not much smaller).
// CHECK-LABEL: func.func @transposed
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[T]] :
// CHECK: linalg.generic {{.*}} ins(%[[T]] :
#id6 = affine_map<(d0, d1) -> (d0, d1)>
#tr6 = affine_map<(d0, d1) -> (d1, d0)>
#row6 = affine_map<(d0, d1) -> (d0)>
func.func @transposed(%y: tensor<64x4xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %t = linalg.generic {indexing_maps = [#tr6, #id6], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<64x4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x64xf32>
  %u = linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  %v = linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.tanh %a : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  return %u, %v : tensor<4x64xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @broadcast_by_users
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[R]] : tensor<4x64xf32>, tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[R]] : tensor<4x64xf32>, tensor<4xf32>)
func.func @broadcast_by_users(%var: tensor<4xf32>, %x: tensor<4x64xf32>, %dy: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %e1 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%var : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.rsqrt %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x64xf32>
  %y = linalg.generic {indexing_maps = [#id6, #row6, #id6], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  %g = linalg.generic {indexing_maps = [#id6, #row6, #id6], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %r : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  return %y, %g : tensor<4x64xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @from_a_scalar
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>)
func.func @from_a_scalar(%s: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : f32) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.tanh %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %u, %v : tensor<4xf32>, tensor<4xf32>
}
