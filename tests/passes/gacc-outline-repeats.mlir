// RUN: gacc-opt %s --split-input-file --gacc-outline-repeats="min-ops=3" | FileCheck %s
// RUN: gacc-opt %s --split-input-file --gacc-outline-repeats | FileCheck %s --check-prefix=DEFAULT

// Two layers: each views its buffer in the arena, scales its weight into it
// and adds it to the residual %x, whose norm it returns. The weights are
// viewed at the start, far from the layers that read them. Each layer
// becomes a call of one function: the views move in (the arenas and offsets
// are its arguments), the constant both layers read is copied in, the norm
// read after the layer is its result. Runs shorter than the default 16 ops
// stay.
func.func private @scale(memref<64xf32>, memref<64xf32>, f32)
func.func private @add(memref<64xf32>, memref<64xf32>)
func.func private @norm(memref<64xf32>) -> f32

// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[ARENA:.*]]: memref<?xi8>, %[[PARAMS:.*]]: memref<?xi8>, %[[X:.*]]: memref<64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK-NOT: memref.view
// CHECK: %[[N1:.*]] = call @gacc_repeat(%[[ARENA]], %[[C256]], %[[PARAMS]], %[[C0]], %[[X]]) : (memref<?xi8>, index, memref<?xi8>, index, memref<64xf32>) -> f32
// CHECK-NEXT: %[[N2:.*]] = call @gacc_repeat(%[[ARENA]], %[[C512]], %[[PARAMS]], %[[C256]], %[[X]])
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[N1]], %[[N2]] : f32
// CHECK-NEXT: return %[[SUM]]
// CHECK: func.func private @gacc_repeat(%[[A:.*]]: memref<?xi8>, %[[AOFF:.*]]: index, %[[P:.*]]: memref<?xi8>, %[[POFF:.*]]: index, %[[R:.*]]: memref<64xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V:.*]] = memref.view %[[A]][%[[AOFF]]][] : memref<?xi8> to memref<64xf32>
// CHECK-NEXT: %[[W:.*]] = memref.view %[[P]][%[[POFF]]][] : memref<?xi8> to memref<64xf32>
// CHECK-NEXT: call @scale(%[[W]], %[[V]], %[[HALF]])
// CHECK-NEXT: %[[V2:.*]] = memref.view %[[A]][%[[AOFF]]][] : memref<?xi8> to memref<64xf32>
// CHECK-NEXT: call @add(%[[V2]], %[[R]])
// CHECK-NEXT: %[[NORM:.*]] = call @norm(%[[R]])
// CHECK-NEXT: return %[[NORM]] : f32
// DEFAULT-LABEL: func.func @layers(
// DEFAULT-NOT: gacc_repeat
func.func @layers(%arena: memref<?xi8>, %params: memref<?xi8>, %x: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %half = arith.constant 0.5 : f32
  %w1 = memref.view %params[%c0][] : memref<?xi8> to memref<64xf32>
  %w2 = memref.view %params[%c256][] : memref<?xi8> to memref<64xf32>
  %v1 = memref.view %arena[%c256][] : memref<?xi8> to memref<64xf32>
  call @scale(%w1, %v1, %half) : (memref<64xf32>, memref<64xf32>, f32) -> ()
  call @add(%v1, %x) : (memref<64xf32>, memref<64xf32>) -> ()
  %n1 = call @norm(%x) : (memref<64xf32>) -> f32
  %v2 = memref.view %arena[%c512][] : memref<?xi8> to memref<64xf32>
  call @scale(%w2, %v2, %half) : (memref<64xf32>, memref<64xf32>, f32) -> ()
  call @add(%v2, %x) : (memref<64xf32>, memref<64xf32>) -> ()
  %n2 = call @norm(%x) : (memref<64xf32>) -> f32
  %sum = arith.addf %n1, %n2 : f32
  return %sum : f32
}

// -----

// Alike op for op, but where the first run reads %a and %b in its second
// op, the second reads %b twice: one value outside the first run must stand
// for one outside the other, so nothing is outlined.
func.func private @add(memref<64xf32>, memref<64xf32>)

// CHECK-LABEL: func.func @one_value_for_one(
// CHECK-NOT: gacc_repeat
func.func @one_value_for_one(%a: memref<64xf32>, %b: memref<64xf32>) {
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  return
}

// -----

// The runs agree on three ops, not the fourth: the three are outlined.
func.func private @add(memref<64xf32>, memref<64xf32>)
func.func private @norm(memref<64xf32>) -> f32

// CHECK-LABEL: func.func @cut_short(
// CHECK-SAME: %[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %[[C:.*]]: memref<64xf32>)
// CHECK-NEXT: %[[N1:.*]] = call @gacc_repeat(%[[A]], %[[B]], %[[C]])
// CHECK-NEXT: call @add(%[[A]], %[[B]])
// CHECK-NEXT: %[[N2:.*]] = call @gacc_repeat(%[[A]], %[[B]], %[[C]])
// CHECK-NEXT: call @add(%[[B]], %[[B]])
// CHECK-NEXT: arith.addf %[[N1]], %[[N2]]
// CHECK: func.func private @gacc_repeat(%[[RA:.*]]: memref<64xf32>, %[[RB:.*]]: memref<64xf32>, %[[RC:.*]]: memref<64xf32>) -> f32
// CHECK-NEXT: %[[N:.*]] = call @norm(%[[RA]])
// CHECK-NEXT: call @add(%[[RA]], %[[RB]])
// CHECK-NEXT: call @add(%[[RB]], %[[RC]])
// CHECK-NEXT: return %[[N]]
func.func @cut_short(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) -> f32 {
  %n1 = call @norm(%a) : (memref<64xf32>) -> f32
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %c) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  %n2 = call @norm(%a) : (memref<64xf32>) -> f32
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %c) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  %s = arith.addf %n1, %n2 : f32
  return %s : f32
}

// -----

// Allocations of the frame and ops with regions stay where they are; the
// runs of a loop's body are outlined too, and the same run in two blocks is
// one function.
func.func private @add(memref<64xf32>, memref<64xf32>)

// CHECK-LABEL: func.func @frames_and_loops(
// CHECK-SAME: %[[A:.*]]: memref<64xf32>, %[[N:.*]]: index)
// CHECK: %[[T1:.*]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT: call @gacc_repeat(%[[T1]], %[[A]])
// CHECK-NEXT: %[[T2:.*]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT: call @gacc_repeat(%[[T2]], %[[A]])
// CHECK-NEXT: scf.for
// CHECK-NEXT: func.call @gacc_repeat(%[[T1]], %[[A]])
// CHECK-NEXT: func.call @gacc_repeat(%[[T2]], %[[A]])
// CHECK-NEXT: }
// CHECK: func.func private @gacc_repeat(%[[T:.*]]: memref<64xf32>, %[[RA:.*]]: memref<64xf32>)
// CHECK-NEXT: call @add(%[[T]], %[[RA]])
// CHECK-NEXT: call @add(%[[RA]], %[[T]])
// CHECK-NEXT: call @add(%[[RA]], %[[RA]])
// CHECK-NEXT: return
// CHECK-NOT: func.func
// CHECK: // {{-+}}
func.func @frames_and_loops(%a: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t1 = memref.alloca() : memref<64xf32>
  call @add(%t1, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %t1) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  %t2 = memref.alloca() : memref<64xf32>
  call @add(%t2, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %t2) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    func.call @add(%t1, %a) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @add(%a, %t1) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @add(%t2, %a) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @add(%a, %t2) : (memref<64xf32>, memref<64xf32>) -> ()
    func.call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  }
  return
}

// -----

// What a run makes and later ops read, in a loop or as the function's
// result, is the function's result.
func.func private @add(memref<64xf32>, memref<64xf32>)
func.func private @norm(memref<64xf32>) -> f32
func.func private @use(f32)

// CHECK-LABEL: func.func @results_read_later(
// CHECK: %[[N1:.*]] = call @gacc_repeat(
// CHECK-NEXT: %[[N2:.*]] = call @gacc_repeat(
// CHECK-NEXT: scf.for
// CHECK-NEXT: func.call @use(%[[N1]])
// CHECK: return %[[N2]] : f32
// CHECK: func.func private @gacc_repeat({{.*}}) -> f32
func.func @results_read_later(%a: memref<64xf32>, %b: memref<64xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  %n1 = call @norm(%a) : (memref<64xf32>) -> f32
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  %n2 = call @norm(%a) : (memref<64xf32>) -> f32
  scf.for %i = %c0 to %n step %c1 {
    func.call @use(%n1) : (f32) -> ()
  }
  return %n2 : f32
}

// -----

// Functions that are not entry points (the outlined loop nests) are not
// searched; a view read in another block of the function stays where it is.
func.func private @add(memref<64xf32>, memref<64xf32>)

// CHECK-LABEL: func.func private @not_an_entry_point(
// CHECK-NOT: gacc_repeat
// CHECK-LABEL: func.func @blocks(
// CHECK-NEXT: %[[V:.*]] = memref.view
// CHECK-NEXT: cf.br ^bb1
// CHECK: call @add(%[[V]], %[[V]])
func.func private @not_an_entry_point(%a: memref<64xf32>, %b: memref<64xf32>) {
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%b, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  call @add(%a, %a) : (memref<64xf32>, memref<64xf32>) -> ()
  return
}

func.func @blocks(%arena: memref<?xi8>, %offset: index) {
  %v = memref.view %arena[%offset][] : memref<?xi8> to memref<64xf32>
  cf.br ^bb1
^bb1:
  call @add(%v, %v) : (memref<64xf32>, memref<64xf32>) -> ()
  return
}

// -----

// Runs that differ in the constants they copy in are two functions, however
// the command line asks constants to be printed.
// RUN: gacc-opt %s --split-input-file --gacc-outline-repeats="min-ops=2" --mlir-elide-elementsattrs-if-larger=2 | FileCheck %s --check-prefix=CONSTANTS
func.func private @take(vector<4xi32>)

// CONSTANTS-LABEL: func.func @first(
// CONSTANTS: call @[[FIRST:gacc_repeat[_0-9]*]]()
// CONSTANTS-LABEL: func.func @second(
// CONSTANTS-NOT: call @[[FIRST]]()
// CONSTANTS: call @gacc_repeat{{[_0-9]+}}()
func.func @first() {
  %k = arith.constant dense<[1, 2, 3, 4]> : vector<4xi32>
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  return
}

func.func @second() {
  %k = arith.constant dense<[5, 6, 7, 8]> : vector<4xi32>
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  call @take(%k) : (vector<4xi32>) -> ()
  return
}
