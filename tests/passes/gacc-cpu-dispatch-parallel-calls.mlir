// RUN: gacc-opt %s --gacc-cpu-dispatch-parallel-calls | FileCheck %s

// Calls of a split nest become calls of the runtime's parallel for: the
// arguments go into 8-byte slots of one context per caller (allocated
// once, in its entry block), and one task per nest loads them back and
// calls it on [lo + begin, lo + end). Other calls stay.
// CHECK-LABEL: llvm.func @nest(
// CHECK-LABEL: llvm.func @step(
// CHECK-SAME: %[[A:.*]]: !llvm.ptr, %[[S:.*]]: f32, %[[LO:.*]]: i64)
// CHECK: %[[CONTEXT:.*]] = llvm.alloca %{{.*}} x !llvm.array<4 x i64>
// CHECK-NOT: llvm.alloca
// CHECK: %[[C100:.*]] = llvm.mlir.constant(100 : i64)
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr %[[CONTEXT]][0, 0]
// CHECK: llvm.store %[[A]], %[[SLOT0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[SLOT1:.*]] = llvm.getelementptr %[[CONTEXT]][0, 1]
// CHECK: llvm.store %[[S]], %[[SLOT1]] : f32, !llvm.ptr
// CHECK: %[[SLOT2:.*]] = llvm.getelementptr %[[CONTEXT]][0, 2]
// CHECK: llvm.store %[[LO]], %[[SLOT2]] : i64, !llvm.ptr
// CHECK: %[[SLOT3:.*]] = llvm.getelementptr %[[CONTEXT]][0, 3]
// CHECK: llvm.store %[[C100]], %[[SLOT3]] : i64, !llvm.ptr
// CHECK: %[[EXTENT:.*]] = llvm.sub %[[C100]], %[[LO]]
// CHECK: %[[GRAIN:.*]] = llvm.mlir.constant(16 : i64)
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @nest.task
// CHECK: llvm.call @gacc_cpu_parallel_for(%[[TASK]], %[[CONTEXT]], %[[EXTENT]], %[[GRAIN]])
// CHECK: llvm.call @gacc_cpu_parallel_for
// CHECK: llvm.call @other()
// CHECK-NOT: llvm.call @nest(
// CHECK: llvm.return
// CHECK: llvm.func @gacc_cpu_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: llvm.func internal @nest.task(
// CHECK-SAME: %[[SLOTS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[P:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[L:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[FROM:.*]] = llvm.add %[[L]], %[[BEGIN]]
// CHECK: %[[TO:.*]] = llvm.add %[[L]], %[[END]]
// CHECK: llvm.call @nest(%[[P]], %[[F]], %[[FROM]], %[[TO]])
// CHECK-NOT: llvm.func internal @nest.task
llvm.func @nest(%a: !llvm.ptr, %s: f32, %lo: i64, %hi: i64) attributes {gacc.parallel_grain = 16 : i64} {
  llvm.return
}
llvm.func @other()
llvm.func @step(%a: !llvm.ptr, %s: f32, %lo: i64) {
  %c100 = llvm.mlir.constant(100 : i64) : i64
  llvm.call @nest(%a, %s, %lo, %c100) : (!llvm.ptr, f32, i64, i64) -> ()
  llvm.call @nest(%a, %s, %lo, %c100) : (!llvm.ptr, f32, i64, i64) -> ()
  llvm.call @other() : () -> ()
  llvm.return
}
