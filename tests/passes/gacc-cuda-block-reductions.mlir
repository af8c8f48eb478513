// RUN: gacc-opt %s -split-input-file --gacc-cuda-block-reductions --canonicalize | FileCheck %s

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Softmax's row maximum: a block of 256 threads per row; each thread takes
// the maximum of elements t, t + 256, ... from -inf, a tree of 8 rounds
// in workgroup memory halves the active threads, thread 0 folds the total
// into the output.
// CHECK-LABEL: func.func @row_max
// CHECK-SAME: (%[[X:.*]]: memref<1024x300xf32>, %[[M:.*]]: memref<1024xf32>)
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch blocks(%[[ROW:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c1024, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: threads(%[[T:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c256, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: workgroup(%[[P:[a-z0-9_]+]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[OWN:.*]] = scf.for %[[R:.*]] = %[[T]] to %c300 step %c256 iter_args(%[[ACC:.*]] = %[[NINF]])
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[R]]]
// CHECK: arith.maximumf %[[ACC]], %[[V]]
// CHECK: memref.store %[[OWN]], %[[P]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[ROUND:.*]] = %c0 to %c8 step %c1 {
// CHECK: %[[HALF:.*]] = arith.shrui %c128, %[[ROUND]]
// CHECK: arith.cmpi ult, %[[T]], %[[HALF]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi eq, %[[T]], %c0
// CHECK: memref.load %[[M]][%[[ROW]]]
// CHECK: memref.store %{{.*}}, %[[M]][%[[ROW]]]
func.func @row_max(%x: memref<1024x300xf32>, %m: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x300xf32>) outs(%m : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Ten classes per row: a loop in each row's thread is better.
// CHECK-LABEL: func.func @few_elements
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @few_elements(%x: memref<64x10xf32>, %m: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x10xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// The output is read by more than the combiner: not a plain reduction.
// CHECK-LABEL: func.func @output_read_twice
// CHECK-NOT: gpu.launch
func.func @output_read_twice(%x: memref<4x300xf32>, %m: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x300xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %o, %a : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// Softmax: the row maximum's neighbours that work on the same rows (the
// fills of the statistics, exp(x - max), the row sum, the division) join
// its kernel: one block per row, 64 threads for rows of 64, a barrier
// between ops; the two reductions share the workgroup memory.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks(%[[ROW:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c512, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: threads(%[[T:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c64, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: workgroup(%[[P:[a-z0-9_]+]] : memref<64xf32, #gpu.address_space<workgroup>>) {
// The maximum's fill: thread 0 of the row.
// CHECK: scf.for %{{.*}} = %[[T]] to %c1 step %c64 {
// CHECK: gpu.barrier
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: scf.for %[[R:.*]] = %[[T]] to %c64 step %c64 {
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[E:.*]][%[[ROW]], %[[R]]]
// CHECK: gpu.barrier
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[P]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
func.func @softmax(%x: memref<512x64xf32>, %max: memref<512x1xf32>,
                   %e: memref<512x64xf32>, %sum: memref<512x1xf32>,
                   %y: memref<512x64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<512x1xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x64xf32>) outs(%max : memref<512x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<512x64xf32>, memref<512x1xf32>) outs(%e : memref<512x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<512x1xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<512x64xf32>) outs(%sum : memref<512x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : memref<512x64xf32>, memref<512x1xf32>) outs(%y : memref<512x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// The memory plan put the maximum where the scores were (both at byte 0 of
// the arena, the maximum's row p in the scores' row p / 64): fused, block p
// could write its maximum over a row of scores another block has yet to
// read. The scaling stays out of the kernel; the fill, the reduction and
// the in-place exp(x - max) (the same view, row by row) join.
// CHECK-LABEL: func.func @reused_memory
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: gpu.launch
// CHECK: math.exp
// CHECK: gpu.terminator
// CHECK-NOT: linalg.
func.func @reused_memory(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 0.5 : f32
  %scores = memref.view %arena[%c0][] : memref<?xi8> to memref<512x64xf32>
  %scaled = memref.view %arena[%c131072][] : memref<?xi8> to memref<512x64xf32>
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%scores : memref<512x64xf32>) outs(%scaled : memref<512x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %half : f32
    linalg.yield %s : f32
  }
  %max = memref.view %arena[%c0][] : memref<?xi8> to memref<512x1xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<512x1xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scaled : memref<512x64xf32>) outs(%max : memref<512x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %max : memref<512x64xf32>, memref<512x1xf32>) outs(%scaled : memref<512x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// Layer norm's statistics reuse one place of the arena: two views at one
// byte shift with one type are the same rows, so the second sum joins.
// CHECK-LABEL: func.func @same_place
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT: linalg.
func.func @same_place(%arena: memref<?xi8>, %x: memref<256x128xf32>, %y: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %mean = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<256x1xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%mean : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : memref<256x128xf32>, memref<256x1xf32>) outs(%y : memref<256x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  }
  %var = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%var : memref<256x1xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<256x128xf32>) outs(%var : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>
#first = affine_map<(i, j) -> (0, 0)>

// An op that reads another row of what the kernel writes (row 0's sum, in
// every row) must wait for every block: it stays out.
// CHECK-LABEL: func.func @reads_another_row
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
func.func @reads_another_row(%x: memref<256x128xf32>, %sum: memref<256x1xf32>, %y: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #first, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<256x128xf32>, memref<256x1xf32>) outs(%y : memref<256x128xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// Eight rows of 4096: 256 threads per row would leave most of a GPU idle
// for the division, which keeps its own kernel. A copy on the way (memory
// touched outside linalg) keeps the fill out too.
// CHECK-LABEL: func.func @few_wide_rows
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c256,
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @few_wide_rows(%x: memref<8x4096xf32>, %sum: memref<8x1xf32>, %y: memref<8x4096xf32>,
                         %a: memref<8x4096xf32>, %b: memref<8x4096xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<8x1xf32>)
  memref.copy %a, %b : memref<8x4096xf32> to memref<8x4096xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x4096xf32>) outs(%sum : memref<8x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<8x4096xf32>, memref<8x1xf32>) outs(%y : memref<8x4096xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// The arena that a loop carries unchanged is the arena: the fill of its
// bytes 0.. and the sum into the same bytes through the carried arena are
// the same rows, and join. A loop that yields another buffer may yield any
// memory: its view's fill stays out.
// CHECK-LABEL: func.func @carried_arena
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @other_buffer
// CHECK: linalg.fill
// CHECK: gpu.launch
func.func @carried_arena(%arena: memref<?xi8>, %x: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %carried = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %arena) -> (memref<?xi8>) {
    scf.yield %a : memref<?xi8>
  }
  %init = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%init : memref<256x1xf32>)
  %sum = memref.view %carried[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}
func.func @other_buffer(%arena: memref<?xi8>, %x: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %other = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %arena) -> (memref<?xi8>) {
    %new = memref.alloc() : memref<1024xi8>
    %cast = memref.cast %new : memref<1024xi8> to memref<?xi8>
    scf.yield %cast : memref<?xi8>
  }
  %init = memref.view %other[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%init : memref<256x1xf32>)
  %sum = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>
#first = affine_map<(i, j) -> (0, 0)>

// Every get_global of one name is one memory: a fill through one and a sum
// through another are the same rows and join; an op that reads row 0 of
// the sums through a third stays out (it must wait for every block).
memref.global "private" @sums : memref<256x1xf32> = uninitialized
// CHECK-LABEL: func.func @one_global
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: linalg.fill
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
func.func @one_global(%x: memref<256x128xf32>, %y: memref<256x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %init = memref.get_global @sums : memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%init : memref<256x1xf32>)
  %sum = memref.get_global @sums : memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %again = memref.get_global @sums : memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #first, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %again : memref<256x128xf32>, memref<256x1xf32>) outs(%y : memref<256x128xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// Two views at one byte shift with other types are other rows (row p of
// the 256x2 view is rows 2p and 2p + 1 of the sums): the op that writes it
// stays out.
// CHECK-LABEL: func.func @same_shift_other_type
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
func.func @same_shift_other_type(%arena: memref<?xi8>, %x: memref<256x128xf32>) {
  %c0 = arith.constant 0 : index
  %sum = memref.view %arena[%c0][] : memref<?xi8> to memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %wide = memref.view %arena[%c0][] : memref<?xi8> to memref<256x2xf32>
  linalg.generic {indexing_maps = [#row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<256x1xf32>) outs(%wide : memref<256x2xf32>) {
  ^bb0(%s: f32, %o: f32):
    %h = arith.mulf %s, %s : f32
    linalg.yield %h : f32
  }
  return
}

// -----

#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>

// A view of a view of the arena is at the sum of their shifts: the fill at
// byte 512 of the view at 512 and the sum at 1024 are the same rows, and
// join. Past a shift that is not a constant the place is unknown: the fill
// at 1024 past byte %n stays out of the kernel of the sum at 2048.
// CHECK-LABEL: func.func @nested_views
// CHECK-NOT: linalg.
// CHECK: gpu.launch
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @unknown_shift
// CHECK: linalg.fill
// CHECK: gpu.launch
func.func @nested_views(%arena: memref<?xi8>, %x: memref<256x128xf32>) {
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %region = memref.view %arena[%c512][] : memref<?xi8> to memref<2048xi8>
  %init = memref.view %region[%c512][] : memref<2048xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%init : memref<256x1xf32>)
  %sum = memref.view %arena[%c1024][] : memref<?xi8> to memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}
func.func @unknown_shift(%arena: memref<?xi8>, %x: memref<256x128xf32>, %n: index) {
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  %region = memref.view %arena[%n][] : memref<?xi8> to memref<2048xi8>
  %init = memref.view %region[%c1024][] : memref<2048xi8> to memref<256x1xf32>
  linalg.fill ins(%zero : f32) outs(%init : memref<256x1xf32>)
  %sum = memref.view %arena[%c2048][] : memref<?xi8> to memref<256x1xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x128xf32>) outs(%sum : memref<256x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>

// Rows of 1100: each thread loads 4 elements (t, t + 256, t + 512,
// t + 768) before it adds them, in that order, so that 4 loads are in
// flight; then the last 76 elements one at a time.
// CHECK-LABEL: func.func @row_sum_unrolled
// CHECK-SAME: (%[[X:.*]]: memref<1024x1100xf32>, %[[S:.*]]: memref<1024xf32>)
// CHECK: gpu.launch blocks(%[[ROW:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in
// CHECK-SAME: threads(%[[T:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c256,
// CHECK: %[[WHOLE:.*]] = scf.for %[[R:.*]] = %[[T]] to %c1024 step %c1024 iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[V0:.*]] = memref.load %[[X]][%[[ROW]], %[[R]]]
// CHECK: %[[R1:.*]] = arith.addi %[[R]], %c256
// CHECK: %[[V1:.*]] = memref.load %[[X]][%[[ROW]], %[[R1]]]
// CHECK: %[[R2:.*]] = arith.addi %[[R]], %c512
// CHECK: %[[V2:.*]] = memref.load %[[X]][%[[ROW]], %[[R2]]]
// CHECK: %[[R3:.*]] = arith.addi %[[R]], %c768
// CHECK: %[[V3:.*]] = memref.load %[[X]][%[[ROW]], %[[R3]]]
// CHECK: %[[S0:.*]] = arith.addf %[[ACC]], %[[V0]]
// CHECK: %[[S1:.*]] = arith.addf %[[S0]], %[[V1]]
// CHECK: %[[S2:.*]] = arith.addf %[[S1]], %[[V2]]
// CHECK: %[[S3:.*]] = arith.addf %[[S2]], %[[V3]]
// CHECK: scf.yield %[[S3]]
// CHECK: %[[REST:.*]] = arith.addi %[[T]], %c1024
// CHECK: %[[OWN:.*]] = scf.for %[[R4:.*]] = %[[REST]] to %c1100 step %c256 iter_args(%[[ACC2:.*]] = %[[WHOLE]])
// CHECK: %[[V4:.*]] = memref.load %[[X]][%[[ROW]], %[[R4]]]
// CHECK: arith.addf %[[ACC2]], %[[V4]]
// CHECK: memref.store %[[OWN]]
func.func @row_sum_unrolled(%x: memref<1024x1100xf32>, %s: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x1100xf32>) outs(%s : memref<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}
