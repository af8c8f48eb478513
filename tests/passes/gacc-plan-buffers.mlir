// RUN: gacc-opt %s --pass-pipeline='builtin.module(func.func(gacc-plan-buffers))' --split-input-file | FileCheck %s

// Buffers whose lifetimes do not overlap share bytes; overlapping ones do
// not. %a (4 KiB) dies before %c is allocated, so %c reuses offset 0; %b
// is alive with both and goes after the larger of them.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: %[[WS:[^:]*]]: memref<?xi8>)
// CHECK-NOT: gacc.arena
// CHECK-SAME: gacc.unplanned_bytes = 0 : i64, gacc.workspace_bytes = 5120 : i64
// CHECK: memref.view %[[WS]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1024xf32>
// CHECK: memref.view %[[WS]][%c4096][] : memref<?xi8> to memref<256xf32>
// CHECK: memref.view %[[WS]][%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<512xf32>
// CHECK-NOT: memref.alloc
func.func @reuse(%out: memref<f32>, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<1024xf32>)
  %x = memref.load %a[%c0] : memref<1024xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<512xf32>
  linalg.fill ins(%x : f32) outs(%c : memref<512xf32>)
  %y = memref.load %c[%c0] : memref<512xf32>
  memref.store %y, %b[%c0] : memref<256xf32>
  %z = memref.load %b[%c0] : memref<256xf32>
  memref.store %z, %out[] : memref<f32>
  return
}

// -----

// A buffer allocated inside a loop lives within one iteration, so it can
// share with buffers of the same iteration that died; one allocated before
// the loop and read inside it lives across the whole loop.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: gacc.workspace_bytes = 8192 : i64
// CHECK: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<1024xf32>
// CHECK: scf.for
// CHECK: memref.view %{{.*}}[%c4096][] : memref<?xi8> to memref<1024xf32>
// CHECK-NOT: memref.alloc
func.func @loop(%out: memref<f32>, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %before = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%cst : f32) outs(%before : memref<1024xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %inner = memref.alloc() : memref<1024xf32>
    %v = memref.load %before[%i] : memref<1024xf32>
    linalg.fill ins(%v : f32) outs(%inner : memref<1024xf32>)
    %w = memref.load %inner[%c0] : memref<1024xf32>
    memref.store %w, %out[] : memref<f32>
  }
  return
}

// -----

// A buffer yielded to the next iteration of the loop that allocates it
// outlives the iteration: it stays on the heap, counted twice (this
// iteration's and the previous one's). The loop's initial buffer is
// planned: it lives to the last use of the loop's result.
// CHECK-LABEL: func.func @carried
// CHECK-SAME: gacc.unplanned_bytes = 8192 : i64, gacc.workspace_bytes = 4096 : i64
// CHECK: memref.view
// CHECK: scf.for
// CHECK: memref.alloc() : memref<1024xf32>
func.func @carried(%out: memref<f32>, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %init = memref.alloc() : memref<1024xf32>
  linalg.fill ins(%cst : f32) outs(%init : memref<1024xf32>)
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> memref<1024xf32> {
    %next = memref.alloc() : memref<1024xf32>
    memref.copy %acc, %next : memref<1024xf32> to memref<1024xf32>
    scf.yield %next : memref<1024xf32>
  }
  %v = memref.load %sum[%c0] : memref<1024xf32>
  memref.store %v, %out[] : memref<f32>
  return
}

// -----

// Dynamic shapes stay on the heap; functions without a workspace arena
// are not planned.
// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-LABEL: func.func @no_workspace
// CHECK-NOT: gacc.workspace_bytes
// CHECK: memref.alloc() : memref<4xf32>
func.func @dynamic(%n: index, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %a = memref.alloc(%n) : memref<?xf32>
  return
}
func.func @no_workspace() {
  %a = memref.alloc() : memref<4xf32>
  return
}

// -----

// A buffer lives as long as what may hold it: %a, yielded by an scf.if, is
// read through the if's result after %b is allocated, so %b goes after it.
// CHECK-LABEL: func.func @through_if
// CHECK-SAME: gacc.unplanned_bytes = 0 : i64, gacc.workspace_bytes = 2048 : i64
// CHECK: memref.view %{{.*}}[%c0{{(_[0-9]+)?}}][] : memref<?xi8> to memref<256xf32>
// CHECK: scf.if
// CHECK: memref.view %{{.*}}[%c1024][] : memref<?xi8> to memref<256xf32>
func.func @through_if(%c: i1, %out: memref<f32>, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<256xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<256xf32>)
  %r = scf.if %c -> (memref<256xf32>) {
    scf.yield %a : memref<256xf32>
  } else {
    scf.yield %a : memref<256xf32>
  }
  %b = memref.alloc() : memref<256xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<256xf32>)
  %x = memref.load %r[%c0] : memref<256xf32>
  %y = memref.load %b[%c0] : memref<256xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %out[] : memref<f32>
  return
}

// -----

// A buffer that a terminator the plan does not follow hands on (here to
// the other region of an scf.while and its result) stays on the heap.
// CHECK-LABEL: func.func @through_while
// CHECK-SAME: gacc.unplanned_bytes = 32 : i64, gacc.workspace_bytes = 0 : i64
// CHECK: scf.while
// CHECK: memref.alloc() : memref<4xf32>
func.func @through_while(%out: memref<f32>, %ws: memref<?xi8> {gacc.arena = "workspace"}) {
  %c0 = arith.constant 0 : index
  %false = arith.constant false
  %r = scf.while (%i = %c0) : (index) -> memref<4xf32> {
    %buf = memref.alloc() : memref<4xf32>
    scf.condition(%false) %buf : memref<4xf32>
  } do {
  ^bb0(%b: memref<4xf32>):
    scf.yield %c0 : index
  }
  %v = memref.load %r[%c0] : memref<4xf32>
  memref.store %v, %out[] : memref<f32>
  return
}
