// RUN: gacc-opt %s -gacc-cpu-outline-loop-nests | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Two identical nests on different buffers share one function; a nest that
// differs in a constant gets its own; a nest reading and writing one buffer
// passes it once. Static buffers are passed as bare pointers.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[C:.*]]: memref<8xf32>, %[[D:.*]]: memref<?xf32>)
// CHECK: call @[[SCALE:.*]](%[[A]], %[[B]]) {llvm.bareptr}
// CHECK-NEXT: call @[[SCALE]](%[[B]], %[[C]]) {llvm.bareptr}
// CHECK-NEXT: call @[[OTHER:.*]](%[[A]], %[[C]]) {llvm.bareptr}
// CHECK-NEXT: call @[[INPLACE:.*]](%[[C]]) {llvm.bareptr}
// CHECK-NEXT: call @[[DYNAMIC:.*]](%[[D]], %{{.*}}) : (memref<?xf32>, f32) -> ()
// CHECK-NEXT: return
func.func @step(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>,
                %d: memref<?xf32>) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %two : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %two : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %three : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %two : f32
    linalg.yield %s : f32
  }
  // A dynamic shape keeps its descriptor; a value from above is an argument.
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%d : memref<?xf32>) {
  ^bb0(%out: f32):
    %s = arith.addf %out, %x : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK: func.func private @[[SCALE]](%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK-SAME: attributes {llvm.bareptr, passthrough = ["noinline"]}
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[IN]] : memref<8xf32>) outs(%[[OUT]] : memref<8xf32>)
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: func.func private @[[OTHER]](
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: func.func private @[[INPLACE]](%[[BUF:.*]]: memref<8xf32>)
// CHECK: ins(%[[BUF]] : memref<8xf32>) outs(%[[BUF]] : memref<8xf32>)
// CHECK: func.func private @[[DYNAMIC]](%{{.*}}: memref<?xf32>, %{{.*}}: f32)
// CHECK-SAME: attributes {passthrough = ["noinline"]}
