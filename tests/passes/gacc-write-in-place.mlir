// RUN: gacc-opt %s --pass-pipeline='builtin.module(func.func(gacc-write-in-place))' --split-input-file --allow-unregistered-dialect | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// The update p = p - g computed into a temporary and copied into p's slot
// is computed in the slot.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[STATE:.*]]: memref<?xi8>, %[[G:.*]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[P:.*]] = memref.view %[[STATE]][%c0{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK: %[[NEW:.*]] = memref.view %[[STATE]][%c0{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[G]] : memref<4xf32>, memref<4xf32>) outs(%[[NEW]] : memref<4xf32>)
func.func @update(%state: memref<?xi8>, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Not when the slot's old value is read after the temporary is written
// (the temporary would already have overwritten it), nor when the
// temporary changes after the copy.
// CHECK-LABEL: func.func @read_after_write
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func @written_after_copy
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @read_after_write(%state: memref<?xi8>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%tmp : memref<4xf32>)
  %old = memref.load %p[%c0] : memref<4xf32>
  memref.store %old, %out[] : memref<f32>
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}
func.func @written_after_copy(%state: memref<?xi8>) {
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %p = memref.view %state[%c64][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%tmp : memref<4xf32>)
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%two : f32) outs(%tmp : memref<4xf32>)
  return
}

// -----

// A write to overlapping bytes of the arena between the copy and the last
// use of the temporary keeps the copy; so does a buffer of unknown origin
// before the copy.
// CHECK-LABEL: func.func @overlap
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32>
// CHECK-LABEL: func.func @unknown
// CHECK: memref.copy
func.func @overlap(%state: memref<?xi8>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %q = memref.view %state[%c8][] : memref<?xi8> to memref<2xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%tmp : memref<4xf32>)
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%one : f32) outs(%q : memref<2xf32>)
  %v = memref.load %tmp[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}
func.func @unknown(%state: memref<?xi8>, %other: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  %x = "test.opaque"(%other) : (memref<4xf32>) -> memref<4xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<4xf32>)
  linalg.fill ins(%one : f32) outs(%tmp : memref<4xf32>)
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A gradient reduced into 1x1x4 and copied, reshaped, into its 4-element
// slot: the slot takes the temporary's shape (the same bytes in order),
// and the later read of the reshape reads the slot.
// CHECK-LABEL: func.func @reshaped
// CHECK-SAME: (%[[STATE:.*]]: memref<?xi8>, %[[G:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[SLOT:.*]] = memref.view %[[STATE]][%c16{{.*}}][] : memref<?xi8> to memref<1x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[SLOT]] : memref<1x4xf32>)
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[SLOT]]
// CHECK: memref.load %[[FLAT]]
func.func @reshaped(%state: memref<?xi8>, %g: memref<8x4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %slot = memref.view %state[%c16][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<1x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0, j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<8x4xf32>) outs(%tmp : memref<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %flat = memref.collapse_shape %tmp [[0, 1]] : memref<1x4xf32> into memref<4xf32>
  memref.copy %flat, %slot : memref<4xf32> to memref<4xf32>
  %v = memref.load %flat[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

// Not when the slot is written while the reshape is still to be read.
// CHECK-LABEL: func.func @reshape_read_after_slot_written
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @reshape_read_after_slot_written(%state: memref<?xi8>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %slot = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<1x4xf32>
  linalg.fill ins(%one : f32) outs(%tmp : memref<1x4xf32>)
  %flat = memref.collapse_shape %tmp [[0, 1]] : memref<1x4xf32> into memref<4xf32>
  memref.copy %flat, %slot : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%two : f32) outs(%slot : memref<4xf32>)
  %v = memref.load %flat[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// One buffer holding three values in turn, as bufferization leaves an
// optimizer's update: the clipped gradient, the new second moment (copied
// into its slot), the new parameter (copied into its). Each copied value
// is written into its slot where it is computed and read from there; the
// buffer keeps the gradient.
// CHECK-LABEL: func.func @reused_buffer
// CHECK-SAME: (%[[STATE:.*]]: memref<?xi8>, %[[G:.*]]: memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[G]] : memref<4xf32>) outs(%[[TMP]] : memref<4xf32>)
// CHECK: %[[V:.*]] = memref.view %[[STATE]][%c16{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[TMP]] : memref<4xf32>, memref<4xf32>) outs(%[[V]] : memref<4xf32>)
// CHECK: %[[P:.*]] = memref.view %[[STATE]][%c0{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[V]] : memref<4xf32>, memref<4xf32>) outs(%[[P]] : memref<4xf32>)
// CHECK-NOT: memref.copy
func.func @reused_buffer(%state: memref<?xi8>, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %half = arith.constant 0.5 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %v = memref.view %state[%c16][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.mulf %a, %half : f32
    linalg.yield %c : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%v, %tmp : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %sq = arith.mulf %b, %b : f32
    %n = arith.addf %a, %sq : f32
    linalg.yield %n : f32
  }
  memref.copy %tmp, %v : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %tmp : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.subf %a, %b : f32
    linalg.yield %n : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Not when the slot's old value is read between the write and the copy,
// nor when the slot is written after the copy while the buffer's value is
// still to be read, nor when the buffer is only partly overwritten (its
// old value read by the body) before a read.
// CHECK-LABEL: func.func @slot_read_before_copy
// CHECK: memref.copy
// CHECK-LABEL: func.func @slot_written_before_read
// CHECK: memref.copy
// CHECK-LABEL: func.func @partly_overwritten
// CHECK: memref.copy
func.func @slot_read_before_copy(%state: memref<?xi8>, %g: memref<4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %tmp : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.subf %a, %b : f32
    linalg.yield %n : f32
  }
  %old = memref.load %p[%c0] : memref<4xf32>
  memref.store %old, %out[] : memref<f32>
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}
func.func @slot_written_before_read(%state: memref<?xi8>, %g: memref<4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %tmp : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.subf %a, %b : f32
    linalg.yield %n : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%one : f32) outs(%p : memref<4xf32>)
  %v = memref.load %tmp[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}
func.func @partly_overwritten(%state: memref<?xi8>, %g: memref<4xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %tmp : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.subf %a, %b : f32
    linalg.yield %n : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%g : memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %o : f32
    linalg.yield %n : f32
  }
  %v = memref.load %tmp[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// What the analysis of arena views sees through. The update reads the slot
// through a view of the arena that a loop carries unchanged: the same bytes
// at the same indices, so it is computed in the slot. A write to a global
// is no write to the arena.
// CHECK-LABEL: func.func @through_carried_arena
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
memref.global "private" @counter : memref<f32> = dense<0.0>
func.func @through_carried_arena(%state: memref<?xi8>, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %carried = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %state) -> (memref<?xi8>) {
    scf.yield %a : memref<?xi8>
  }
  %old = memref.view %carried[%c16][] : memref<?xi8> to memref<4xf32>
  %p = memref.view %state[%c16][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %g : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  %count = memref.get_global @counter : memref<f32>
  memref.store %one, %count[] : memref<f32>
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Not when the loop yields another buffer (its views may be anything),
// nor when the update reads the slot's bytes at the same shift with
// another type, nor when a loop hands on the temporary and its result is
// read after the slot is written.
// CHECK-LABEL: func.func @through_other_buffer
// CHECK: memref.copy
// CHECK-LABEL: func.func @same_shift_other_type
// CHECK: memref.copy
// CHECK-LABEL: func.func @temporary_carried
// CHECK: memref.copy
func.func @through_other_buffer(%state: memref<?xi8>, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %carried = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %state) -> (memref<?xi8>) {
    %other = memref.alloc() : memref<64xi8>
    %cast = memref.cast %other : memref<64xi8> to memref<?xi8>
    scf.yield %cast : memref<?xi8>
  }
  %old = memref.view %carried[%c0][] : memref<?xi8> to memref<4xf32>
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %g : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}
func.func @same_shift_other_type(%state: memref<?xi8>, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %bits = memref.view %state[%c0][] : memref<?xi8> to memref<4xi32>
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%bits, %g : memref<4xi32>, memref<4xf32>) outs(%tmp : memref<4xf32>) {
  ^bb0(%a: i32, %b: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %d = arith.subf %f, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  return
}
func.func @temporary_carried(%state: memref<?xi8>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %p = memref.view %state[%c0][] : memref<?xi8> to memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%tmp : memref<4xf32>)
  %same = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %tmp) -> (memref<4xf32>) {
    scf.yield %a : memref<4xf32>
  }
  memref.copy %tmp, %p : memref<4xf32> to memref<4xf32>
  linalg.fill ins(%two : f32) outs(%p : memref<4xf32>)
  %v = memref.load %same[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}
