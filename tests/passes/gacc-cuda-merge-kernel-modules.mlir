// RUN: gacc-opt %s --gpu-kernel-outlining --gacc-cuda-merge-kernel-modules | FileCheck %s

// Two kernels, each outlined into its own module with a copy of the
// constant global it reads, end up in one module, gacc_kernels, named after
// the modules they came from, with one copy of the global; the launches
// name them there.
// CHECK: memref.global "private" constant @table
// CHECK: func.func @two_kernels
// CHECK: gpu.launch_func @gacc_kernels::@two_kernels_kernel blocks
// CHECK: gpu.launch_func @gacc_kernels::@two_kernels_kernel_0 blocks
// CHECK: gpu.module @gacc_kernels
// CHECK-DAG: gpu.func @two_kernels_kernel(
// CHECK-DAG: gpu.func @two_kernels_kernel_0(
// CHECK-DAG: memref.global "private" constant @table
// CHECK-NOT: memref.global
// CHECK-NOT: gpu.module
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @two_kernels(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %table = memref.get_global @table : memref<4xf32>
    %t = memref.load %table[%tx] : memref<4xf32>
    memref.store %t, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %table = memref.get_global @table : memref<4xf32>
    %t = memref.load %table[%tx] : memref<4xf32>
    %o = memref.load %out[%tx] : memref<4xf32>
    %s = arith.addf %t, %o : f32
    memref.store %s, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// Two launches of the same kernel on different buffers (a transformer's
// layers) share one kernel; a kernel that differs keeps its own.
// RUN: gacc-opt %s --gpu-kernel-outlining --gacc-cuda-merge-kernel-modules | FileCheck %s --check-prefix=DEDUP
// DEDUP: gpu.module @gacc_kernels
// DEDUP-DAG: gpu.func @repeated_kernels_kernel(
// DEDUP-DAG: gpu.func @repeated_kernels_kernel_2(
// DEDUP-NOT: gpu.func @repeated_kernels_kernel_{{[01]}}(
// DEDUP: func.func @repeated_kernels
// DEDUP: gpu.launch_func @gacc_kernels::@repeated_kernels_kernel blocks {{.*}} args(%arg0 : memref<4xf32>
// DEDUP: gpu.launch_func @gacc_kernels::@repeated_kernels_kernel blocks {{.*}} args(%arg1 : memref<4xf32>
// DEDUP: gpu.launch_func @gacc_kernels::@repeated_kernels_kernel_2 blocks
func.func @repeated_kernels(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<4xf32>
    %s = arith.mulf %v, %two : f32
    memref.store %s, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<4xf32>
    %s = arith.mulf %v, %two : f32
    memref.store %s, %b[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<4xf32>
    %s = arith.addf %v, %three : f32
    memref.store %s, %b[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// A kernel's workgroup buffers are marked 16-byte aligned (the tiled
// matmuls store 16 bytes at a time into them).
// RUN: gacc-opt %s --gpu-kernel-outlining --gacc-cuda-merge-kernel-modules | FileCheck %s --check-prefix=ALIGN
// ALIGN: gpu.func @shared_kernel(%{{.*}}: memref<8xf16>) workgroup(%{{.*}} : memref<8xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
func.func @shared(%a: memref<8xf16>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<8xf16, #gpu.address_space<workgroup>>) {
    %v = memref.load %a[%tx] : memref<8xf16>
    memref.store %v, %tile[%tx] : memref<8xf16, #gpu.address_space<workgroup>>
    gpu.barrier
    %w = memref.load %tile[%tx] : memref<8xf16, #gpu.address_space<workgroup>>
    memref.store %w, %a[%tx] : memref<8xf16>
    gpu.terminator
  }
  return
}
