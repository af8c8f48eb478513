// RUN: gacc-opt %s --split-input-file --gacc-cuda-sums-in-registers | FileCheck %s

// A thread's partial sum of 32 rows (gacc-split-reductions' column sums,
// lowered by convert-linalg-to-parallel-loops): loaded once before the
// loop, carried through it, stored once after.
// CHECK-LABEL: func.func @partial_sum(
// CHECK-SAME: %[[IN:[^:]*]]: memref<256x32x768xbf16>, %[[P:[^:]*]]: memref<256x768xf32>)
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[P]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[TOTAL:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IN]]
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[X]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[E]], %[[ACC]]
// CHECK-NEXT: scf.yield %[[SUM]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[TOTAL]], %[[P]][%[[I]], %[[J]]]
// CHECK-NEXT: scf.reduce
func.func @partial_sum(%in: memref<256x32x768xbf16>, %p: memref<256x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c768 = arith.constant 768 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c768) step (%c1, %c1) {
    scf.for %r = %c0 to %c32 step %c1 {
      %x = memref.load %in[%i, %r, %j] : memref<256x32x768xbf16>
      %acc = memref.load %p[%i, %j] : memref<256x768xf32>
      %e = arith.extf %x : bf16 to f32
      %sum = arith.addf %e, %acc : f32
      memref.store %sum, %p[%i, %j] : memref<256x768xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Nested reduction loops: the inner loop carries the element, then the
// outer one.
// CHECK-LABEL: func.func @nested(
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<768xf32>
// CHECK-NEXT: %[[OUTER:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: scf.yield %[[INNER]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[OUTER]]
func.func @nested(%in: memref<8x32x768xf32>, %out: memref<768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c768 = arith.constant 768 : index
  scf.parallel (%j) = (%c0) to (%c768) step (%c1) {
    scf.for %a = %c0 to %c8 step %c1 {
      scf.for %b = %c0 to %c32 step %c1 {
        %x = memref.load %in[%a, %b, %j] : memref<8x32x768xf32>
        %acc = memref.load %out[%j] : memref<768xf32>
        %sum = arith.addf %acc, %x : f32
        memref.store %sum, %out[%j] : memref<768xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// What stays in memory: an input that may share the output's bytes (views
// of one arena at overlapping shifts), another store into its buffer, indices
// that change with the trip, a load after the store, loops that may run
// no trip (the load and store around them would write what they never
// did), and loops inside a kernel that an earlier pass built.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: iter_args
// CHECK: return
func.func @kept(%arena: memref<32768xi8>, %a: memref<64xf32>, %b: memref<64xf32>,
                %c: memref<64x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %shift0 = arith.constant 0 : index
  %shift1 = arith.constant 128 : index
  %in = memref.view %arena[%shift0][] : memref<32768xi8> to memref<64x64xf32>
  %out = memref.view %arena[%shift1][] : memref<32768xi8> to memref<64xf32>
  scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %in[%r, %j] : memref<64x64xf32>
      %acc = memref.load %out[%j] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %out[%j] : memref<64xf32>
    }
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %c[%r, %j] : memref<64x64xf32>
      %acc = memref.load %a[%j] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %a[%j] : memref<64xf32>
      memref.store %x, %a[%r] : memref<64xf32>
    }
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %c[%r, %j] : memref<64x64xf32>
      %acc = memref.load %a[%r] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %a[%r] : memref<64xf32>
    }
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %c[%r, %j] : memref<64x64xf32>
      memref.store %x, %b[%j] : memref<64xf32>
      %y = memref.load %b[%j] : memref<64xf32>
      %sum = arith.addf %y, %x : f32
      memref.store %sum, %a[%j] : memref<64xf32>
    }
    scf.for %r = %c0 to %n step %c1 {
      %x = memref.load %c[%r, %j] : memref<64x64xf32>
      %acc = memref.load %a[%j] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %a[%j] : memref<64xf32>
    }
    scf.for %r = %c0 to %c0 step %c1 {
      %x = memref.load %c[%r, %j] : memref<64x64xf32>
      %acc = memref.load %a[%j] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %a[%j] : memref<64xf32>
    }
    scf.reduce
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %c[%r, %tx] : memref<64x64xf32>
      %acc = memref.load %a[%tx] : memref<64xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %a[%tx] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Two sums in one loop (a value and its square): both carried.
// CHECK-LABEL: func.func @two(
// CHECK: %[[S0:.*]] = memref.load %{{.*}} : memref<64xf32>
// CHECK: %[[Q0:.*]] = memref.load %{{.*}} : memref<64xf32>
// CHECK: %{{.*}}:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[S0]], %{{.*}} = %[[Q0]]) -> (f32, f32)
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-COUNT-2: memref.store
func.func @two(%in: memref<64x64xf32>, %s: memref<64xf32>, %q: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
    scf.for %r = %c0 to %c64 step %c1 {
      %x = memref.load %in[%r, %j] : memref<64x64xf32>
      %a = memref.load %s[%j] : memref<64xf32>
      %b = memref.load %q[%j] : memref<64xf32>
      %sum = arith.addf %a, %x : f32
      %xx = arith.mulf %x, %x : f32
      %sq = arith.addf %b, %xx : f32
      memref.store %sum, %s[%j] : memref<64xf32>
      memref.store %sq, %q[%j] : memref<64xf32>
    }
    scf.reduce
  }
  return
}
