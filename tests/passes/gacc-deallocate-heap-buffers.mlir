// RUN: gacc-opt %s --split-input-file --gacc-deallocate-heap-buffers | FileCheck %s

// A buffer the plan left to the heap is freed after its last use (MLIR's
// buffer deallocation pipeline).
func.func private @fill(memref<?xf32>)

// CHECK-LABEL: func.func @heap(
// CHECK: %[[BUFFER:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT: call @fill(%[[BUFFER]])
// CHECK-NEXT: memref.dealloc %[[BUFFER]] : memref<?xf32>
// CHECK-NEXT: return
func.func @heap(%n: index) {
  %buffer = memref.alloc(%n) : memref<?xf32>
  call @fill(%buffer) : (memref<?xf32>) -> ()
  return
}

// -----

// Buffers in the arena and the frame only: no deallocation, the pipeline's
// clean-up alone (the second view is the first).
func.func private @use(memref<64xf32>, memref<64xf32>, memref<64xf32>)

// CHECK-LABEL: func.func @planned(
// CHECK-SAME: %[[ARENA:.*]]: memref<?xi8>)
// CHECK: %[[VIEW:.*]] = memref.view %[[ARENA]]
// CHECK-NEXT: %[[FRAME:.*]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT: call @use(%[[VIEW]], %[[VIEW]], %[[FRAME]])
// CHECK-NOT: dealloc
func.func @planned(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %a = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  %b = memref.view %arena[%c0][] : memref<?xi8> to memref<64xf32>
  %frame = memref.alloca() : memref<64xf32>
  call @use(%a, %b, %frame) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
  return
}
