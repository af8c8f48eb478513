// RUN: gacc-opt %s -split-input-file --gacc-cuda-dynamic-shared-memory -verify-diagnostics | FileCheck %s

// 40960 + 34816 bytes of tiles (4 cp.async stages of a 128x128 tensor-core
// tile): more than the 48 KB of static shared memory. They become views
// of one dynamic buffer at offsets 0 and 40960, its size set on the
// launch; the private attribution stays.
// CHECK-LABEL: func.func @large
// CHECK: %[[BYTES:.*]] = arith.constant 75776 : i32
// CHECK: gpu.launch
// CHECK-SAME: dynamic_shared_memory_size %[[BYTES]]
// CHECK-NOT: workgroup(
// CHECK-SAME: private(%[[ACC:.*]] : memref<4xf32, #gpu.address_space<private>>)
// CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[A:.*]] = memref.view %[[RAW]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x128x40xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.view %[[RAW]][%c40960{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x32x136xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %[[ACC]]
func.func @large(%out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<4x128x40xbf16, #gpu.address_space<workgroup>>,
                       %b : memref<4x32x136xbf16, #gpu.address_space<workgroup>>)
             private(%acc : memref<4xf32, #gpu.address_space<private>>) {
    %x = memref.load %a[%c0, %tx, %c0] : memref<4x128x40xbf16, #gpu.address_space<workgroup>>
    %y = memref.load %b[%c0, %c0, %tx] : memref<4x32x136xbf16, #gpu.address_space<workgroup>>
    %s = arith.addf %x, %y : bf16
    %f = arith.extf %s : bf16 to f32
    memref.store %f, %acc[%c0] : memref<4xf32, #gpu.address_space<private>>
    %r = memref.load %acc[%c0] : memref<4xf32, #gpu.address_space<private>>
    memref.store %r, %out[%tx] : memref<128xf32>
    gpu.terminator
  }
  return
}

// -----

// 48 KB exactly (and an odd-sized buffer, its successor 16-byte aligned,
// counted): static shared memory still holds it, nothing changes.
// CHECK-LABEL: func.func @small
// CHECK: gpu.launch
// CHECK-NOT: dynamic_shared_memory_size
// CHECK-SAME: workgroup(%{{.*}} : memref<3xi8, #gpu.address_space<workgroup>>, %{{.*}} : memref<12284xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: gpu.dynamic_shared_memory
func.func @small(%out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<3xi8, #gpu.address_space<workgroup>>,
                       %b : memref<12284xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %b[%c0] : memref<12284xf32, #gpu.address_space<workgroup>>
    memref.store %x, %out[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// One float more: 16 + 49140 bytes (each buffer rounded up to 16: 49168
// in all), over 48 KB only because the 3 bytes
// take 16 (the next buffer starts 16-byte aligned). Dynamic, the floats
// at offset 16.
// CHECK-LABEL: func.func @padded
// CHECK: %[[BYTES:.*]] = arith.constant 49168 : i32
// CHECK: gpu.launch
// CHECK-SAME: dynamic_shared_memory_size %[[BYTES]]
// CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK: memref.view %[[RAW]][%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3xi8, #gpu.address_space<workgroup>>
// CHECK: %[[F:.*]] = memref.view %[[RAW]][%c16{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<12285xf32, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[F]]
func.func @padded(%out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<3xi8, #gpu.address_space<workgroup>>,
                       %b : memref<12285xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %b[%c0] : memref<12285xf32, #gpu.address_space<workgroup>>
    memref.store %x, %out[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}

// -----

// Over 48 KB with a buffer of indices (no byte size): an error.
func.func @unplaceable(%out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{needs more than 48 KB of workgroup memory, but a buffer of type 'memref<4xindex, #gpu.address_space<workgroup>>' cannot be a view of dynamic shared memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<4xindex, #gpu.address_space<workgroup>>,
                       %b : memref<16384xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %b[%c0] : memref<16384xf32, #gpu.address_space<workgroup>>
    memref.store %x, %out[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}
