// RUN: gacc-opt %s --split-input-file --gacc-split-reductions="max-outputs=64 parallelism=64 partial-bytes=64" | FileCheck %s
// RUN: gacc-opt %s --split-input-file --gacc-split-reductions="max-outputs=64 parallelism=64 partial-bytes=64 min-elements=10000000" | FileCheck %s --check-prefix=SMALL
// RUN: gacc-opt %s --split-input-file --gacc-split-reductions="max-outputs=256 parallelism=2048" | FileCheck %s --check-prefix=GPU
// RUN: gacc-opt %s --split-input-file --gacc-split-reductions="max-outputs=256 parallelism=2048 column-rows=32" | FileCheck %s --check-prefix=COLUMNS

// The CPU's settings (64 partial sums, a cache line each) and CUDA's (2048,
// adjacent).

// The sum of squares of a 512x4608 weight (the gradient norm's term): its
// rows split into 64 chunks of 8, a partial sum each (in its own cache line
// of a stack buffer made at the function's start), a parallel loop, then their
// sum into what the output held. With 2048 wanted, the 512 rows are made
// parallel whole and their columns split in 4.
// CHECK-DAG: #[[CHUNKS_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PARTIAL_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, 0)>
// CHECK-DAG: #[[SUM_MAP:.*]] = affine_map<(d0) -> (d0, 0)>
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: %[[W:.*]]: memref<512x4608xf32>, %[[S:.*]]: memref<f32>)
// CHECK: %[[PARTIAL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK: %[[CHUNKS:.*]] = memref.expand_shape %[[W]] {{\[\[}}0, 1], [2]] output_shape [64, 8, 4608] : memref<512x4608xf32> into memref<64x8x4608xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[CHUNKS_MAP]], #[[PARTIAL_MAP]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[CHUNKS]] : memref<64x8x4608xf32>) outs(%[[PARTIAL]] : memref<64x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[SUM_MAP]], {{.*}}], iterator_types = ["reduction"]} ins(%[[PARTIAL]] : memref<64x16xf32>) outs(%[[S]] : memref<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[ADDED:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[ADDED]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// SMALL-LABEL: func.func @sum_of_squares(
// SMALL-NOT: memref.alloca
// SMALL: return
// GPU-LABEL: func.func @sum_of_squares(
// GPU: memref.alloca() {alignment = 16 : i64} : memref<512x4xf32>
// GPU: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [512, 4, 1152]
// GPU: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : memref<512x4x1152xf32>) outs(%{{.*}} : memref<512x4xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @sum_of_squares(%w: memref<512x4608xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #none], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %sum = arith.addf %sq, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A scalar input (a loss scale) is read as it was; 100000 = 2^5 · 5^5
// elements split into 50 chunks of 2000.
// CHECK-LABEL: func.func @scaled(
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [50, 2000] : memref<100000xf32> into memref<50x2000xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<50x2000xf32>, memref<f32>) outs(%{{.*}} : memref<50x16xf32>)
#id1 = affine_map<(d0) -> (d0)>
#none1 = affine_map<(d0) -> ()>
func.func @scaled(%g: memref<100000xf32>, %scale: memref<f32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id1, #none1, #none1], iterator_types = ["reduction"]}
      ins(%g, %scale : memref<100000xf32>, memref<f32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %y = arith.mulf %x, %k : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A view at an offset (a slot of an arena) is split as well; in a loop (the
// micro-batches), the buffer is the function's, made once, and cleared
// before each sum. f64 partial sums are 8 to a line.
// CHECK-LABEL: func.func @in_loop(
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x8xf64>
// CHECK: scf.for
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [64, 4096] : memref<262144xf64, strided<[1], offset: 262144>> into memref<64x4096xf64, strided<[4096, 1], offset: 262144>>
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
#id4 = affine_map<(d0) -> (d0)>
#none4 = affine_map<(d0) -> ()>
func.func @in_loop(%arena: memref<524288xf64>, %s: memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.subview %arena[262144] [262144] [1] : memref<524288xf64> to memref<262144xf64, strided<[1], offset: 262144>>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [#id4, #none4], iterator_types = ["reduction"]}
        ins(%v : memref<262144xf64, strided<[1], offset: 262144>>) outs(%s : memref<f64>) {
    ^bb0(%x: f64, %acc: f64):
      %sum = arith.addf %x, %acc : f64
      linalg.yield %sum : f64
    }
  }
  return
}

// -----

// Not split: a maximum, a sum into 512 outputs (max-outputs is 64), a count
// with no divisor up to 64
// (a prime), a body that reads the running sum twice, and a scalar input
// that is the output (read anew each iteration).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: memref.alloca
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#none2 = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0) -> (d0)>
#none3 = affine_map<(d0) -> ()>
func.func @kept(%w: memref<512x4608xf32>, %p: memref<100003xf32>,
                %s: memref<f32>, %r: memref<512xf32>) {
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%r : memref<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id3, #none3], iterator_types = ["reduction"]}
      ins(%p : memref<100003xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %sum = arith.addf %x, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<512x4608xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.mulf %x, %acc : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id2, #none2, #none2], iterator_types = ["reduction", "reduction"]}
      ins(%w, %s : memref<512x4608xf32>, memref<f32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %y = arith.mulf %x, %k : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// GPT-2's token-mean cross-entropy on a GPU (the picked log-probabilities
// of 8x1024 tokens over 50257 classes, the log of each row's sum of
// exponentials broadcast along it, into one number). For 2048 partial sums
// the 8 batch rows are whole and the 1024 tokens split in 256 chunks of 4:
// 2048 partial sums of 4x50257 elements, each a block of threads.
// GPU-DAG: #[[ROWS3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// GPU-DAG: #[[LSE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// GPU-DAG: #[[PARTIALS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// GPU-LABEL: func.func @cross_entropy(
// GPU-SAME: %[[HOT:[^:]*]]: memref<8x1024x50257xf32>, %[[LOGITS:[^:]*]]: memref<8x1024x50257xf32>, %[[SUMEXP:[^:]*]]: memref<8x1024x1xf32>, %[[LOSS:[^:]*]]: memref<f32>)
// GPU: %[[P:.*]] = memref.alloca() {alignment = 16 : i64} : memref<8x256xf32>
// GPU: %[[HOT4:.*]] = memref.expand_shape %[[HOT]] {{\[\[}}0], [1, 2], [3]] output_shape [8, 256, 4, 50257]
// GPU: %[[LOGITS4:.*]] = memref.expand_shape %[[LOGITS]] {{\[\[}}0], [1, 2], [3]] output_shape [8, 256, 4, 50257]
// GPU: %[[SUMEXP4:.*]] = memref.expand_shape %[[SUMEXP]] {{\[\[}}0], [1, 2], [3]] output_shape [8, 256, 4, 1]
// GPU: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<8x256xf32>)
// GPU: linalg.generic {indexing_maps = [#[[ROWS3]], #[[ROWS3]], #[[LSE]], #[[PARTIALS]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[HOT4]], %[[LOGITS4]], %[[SUMEXP4]] : {{.*}}) outs(%[[P]] : memref<8x256xf32>)
// GPU: math.log
// GPU: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[P]] : memref<8x256xf32>) outs(%[[LOSS]] : memref<f32>)
// The CPU's 64: 8 whole rows, then 1024 tokens in 8 chunks of 128.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<8x8x16xf32>
// CHECK: output_shape [8, 8, 128, 50257]
#rows = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lse = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#all = affine_map<(d0, d1, d2) -> ()>
func.func @cross_entropy(%hot: memref<8x1024x50257xf32>, %logits: memref<8x1024x50257xf32>,
                         %sumexp: memref<8x1024x1xf32>, %loss: memref<f32>) {
  linalg.generic {indexing_maps = [#rows, #rows, #lse, #all], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%hot, %logits, %sumexp : memref<8x1024x50257xf32>, memref<8x1024x50257xf32>, memref<8x1024x1xf32>)
      outs(%loss : memref<f32>) {
  ^bb0(%h: f32, %l: f32, %s: f32, %acc: f32):
    %lg = math.log %s : f32
    %d = arith.subf %l, %lg : f32
    %m = arith.mulf %h, %d : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A bias gradient on a GPU, 128 outputs want 16 partial sums each: the 8
// batch rows whole, then the 1024 tokens split in 2 chunks of 512, the
// partial sums after the output's dimension; the loops made parallel move
// ahead of the reduction they followed (a GPU thread would have looped over
// the parallel loops after it). A loop that a map combines
// with another (a convolution's window) is made parallel whole or not at
// all: 4 outputs want 512 partial sums, more than its 1000 positions
// divide into. Sums into 256 outputs or more (GPT-2's 768-wide bias
// gradients, rows of a softmax) are not split: a block each fills the GPU.
// GPU-DAG: #[[BIAS_IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// GPU-DAG: #[[BIAS_PARTIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1)>
// GPU-LABEL: func.func @few_outputs(
// GPU: %[[P:.*]] = memref.alloca() {alignment = 16 : i64} : memref<128x8x2xf32>
// GPU: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [8, 2, 512, 128]
// GPU: linalg.generic {indexing_maps = [#[[BIAS_IN]], #[[BIAS_PARTIAL]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} {{.*}} outs(%[[P]] : memref<128x8x2xf32>)
// GPU: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[P]] : memref<128x8x2xf32>) outs(%{{.*}} : memref<128xf32>)
// GPU-NOT: memref.alloca
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : memref<70x1003xf32>, memref<1000xf32>) outs(%{{.*}} : memref<4xf32>)
// GPU-NOT: memref.alloca
// GPU: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%{{.*}} : memref<8x1024x768xf32>) outs(%{{.*}} : memref<768xf32>)
// GPU-NOT: memref.alloca
#bias_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias_out = affine_map<(d0, d1, d2) -> (d2)>
#conv_in = affine_map<(d0, d1, d2) -> (d2, d0 + d1)>
#conv_w = affine_map<(d0, d1, d2) -> (d1)>
#conv_out = affine_map<(d0, d1, d2) -> (d0)>
func.func @few_outputs(%dy: memref<8x1024x128xf32>, %db: memref<128xf32>,
                       %dy2: memref<8x1024x768xf32>, %db2: memref<768xf32>,
                       %x: memref<70x1003xf32>, %w: memref<1000xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#bias_in, #bias_out], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dy : memref<8x1024x128xf32>) outs(%db : memref<128xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %sum = arith.addf %acc, %g : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#conv_in, #conv_w, #conv_out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<70x1003xf32>, memref<1000xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32, %k: f32, %acc: f32):
    %m = arith.mulf %a, %k : f32
    %sum = arith.addf %acc, %m : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#bias_in, #bias_out], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dy2 : memref<8x1024x768xf32>) outs(%db2 : memref<768xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %sum = arith.addf %acc, %g : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A sum that reads its loop indices (a one-hot computed in it): the 8 rows
// become parallel whole and the split column's index is rebuilt from its
// parts (8 chunks of 2048).
// CHECK-LABEL: func.func @indexed(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : memref<8x8x2048xf32>)
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[CHUNK:.*]] = linalg.index 1 : index
// CHECK: %[[IN_CHUNK:.*]] = linalg.index 2 : index
// CHECK: %[[START:.*]] = arith.muli %[[CHUNK]], %c2048
// CHECK: %[[COLUMN:.*]] = arith.addi %[[START]], %[[IN_CHUNK]]
// CHECK: arith.cmpi eq, %[[ROW]], %[[COLUMN]]
// GPU-LABEL: func.func @indexed(
// GPU: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8, 256, 64]
// GPU: arith.muli %{{.*}}, %c64
#idx = affine_map<(d0, d1) -> (d0, d1)>
#nonex = affine_map<(d0, d1) -> ()>
func.func @indexed(%w: memref<8x16384xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#idx, #nonex], iterator_types = ["reduction", "reduction"]}
      ins(%w : memref<8x16384xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %eq = arith.cmpi eq, %i, %j : index
    %zero = arith.constant 0.0 : f32
    %y = arith.select %eq, %x, %zero : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Into 4 outputs: the output's loop (d0) moves behind the partial sums'
// (d1 whole, d2 split in 2), and a loop after the split one (d3) moves up
// by one.
// CHECK-LABEL: func.func @indexed_outputs(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : memref<4x8x2x8192x2xf32>)
// CHECK: %[[OUT:.*]] = linalg.index 2 : index
// CHECK: %[[HALF:.*]] = linalg.index 1 : index
// CHECK: %[[IN_HALF:.*]] = linalg.index 3 : index
// CHECK: %[[START:.*]] = arith.muli %[[HALF]], %c8192
// CHECK: %[[D2:.*]] = arith.addi %[[START]], %[[IN_HALF]]
// CHECK: %[[D3:.*]] = linalg.index 4 : index
// CHECK: arith.addi %[[OUT]], %[[D2]]
// CHECK: arith.addi %{{.*}}, %[[D3]]
#in5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out5 = affine_map<(d0, d1, d2, d3) -> (d0)>
func.func @indexed_outputs(%w: memref<4x8x16384x2xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in5, #out5], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%w : memref<4x8x16384x2xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %ik = arith.addi %i, %k : index
    %ikl = arith.addi %ik, %l : index
    %n = arith.index_cast %ikl : index to i32
    %f = arith.sitofp %n : i32 to f32
    %y = arith.mulf %x, %f : f32
    %sum = arith.addf %y, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Sums down columns with column-rows=32 (CUDA's), whatever their outputs:
// a bf16 bias gradient of GPT-2's width into `[1, 1, 768]` (the output
// indexed by 0s) becomes 8 x 32 partial sums of 32 rows each, laid out
// before the output's dimensions, consecutive columns in consecutive loop
// points; a layer norm's weight gradient with broadcast statistics reads
// down columns too; a 128-wide bias gradient as well (1024 rows, 32 partial
// sums). A softmax's row sum reads along its rows and stays whole. The
// partial sums of a function share one buffer, as large as the largest:
// each is used from its fill to its total, one sum after another. An
// output indexed by 0 where its dimension is not 1 is not a sum into it:
// it stays whole.
// COLUMNS-DAG: #[[COL_IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// COLUMNS-DAG: #[[COL_PARTIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0, d2)>
// COLUMNS-DAG: #[[COL_SUM_IN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d0, d1, d2)>
// COLUMNS-DAG: #[[COL_SUM_OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// COLUMNS-LABEL: func.func @columns(
// COLUMNS-SAME: %[[DY:[^:]*]]: memref<8x1024x768xbf16>, %[[DB:[^:]*]]: memref<1x1x768xf32>
// COLUMNS: %[[SCRATCH:.*]] = memref.alloca() {alignment = 16 : i64} : memref<786432xi8>
// COLUMNS: %[[SMALL_P:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<786432xi8> to memref<32x128xf32>
// COLUMNS: %[[LN_P:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<786432xi8> to memref<8x32x768xf32>
// COLUMNS: %[[P:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<786432xi8> to memref<8x32x1x1x768xf32>
// COLUMNS-NOT: memref.alloca
// COLUMNS: %[[ROWS:.*]] = memref.expand_shape %[[DY]] {{\[\[}}0], [1, 2], [3]] output_shape [8, 32, 32, 768]
// COLUMNS: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<8x32x1x1x768xf32>)
// COLUMNS: linalg.generic {indexing_maps = [#[[COL_IN]], #[[COL_PARTIAL]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[ROWS]] : memref<8x32x32x768xbf16>) outs(%[[P]] : memref<8x32x1x1x768xf32>)
// COLUMNS: arith.extf
// COLUMNS: linalg.generic {indexing_maps = [#[[COL_SUM_IN]], #[[COL_SUM_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]] : memref<8x32x1x1x768xf32>) outs(%[[DB]] : memref<1x1x768xf32>)
// COLUMNS: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : memref<8x32x32x768xf32>, memref<8x32x32x1xf32>) outs(%[[LN_P]] : memref<8x32x768xf32>)
// COLUMNS: linalg.generic {{.*}} ins(%[[LN_P]] : memref<8x32x768xf32>) outs(%{{.*}} : memref<768xf32>)
// COLUMNS: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : memref<32x32x128xf32>) outs(%[[SMALL_P]] : memref<32x128xf32>)
// COLUMNS: linalg.generic {{.*}} ins(%[[SMALL_P]] : memref<32x128xf32>) outs(%{{.*}} : memref<128xf32>)
// COLUMNS: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : memref<8192x768xf32>) outs(%{{.*}} : memref<8192x1xf32>)
// COLUMNS-NEXT: ^bb0
// COLUMNS: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<1024x128xf32>) outs(%{{.*}} : memref<4x128xf32>)
// COLUMNS-NEXT: ^bb0
// COLUMNS: return
#c_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c_out = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#c_stat = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#c_vec = affine_map<(d0, d1, d2) -> (d2)>
#c_small_in = affine_map<(d0, d1) -> (d0, d1)>
#c_small_out = affine_map<(d0, d1) -> (d1)>
#c_row_out = affine_map<(d0, d1) -> (d0, 0)>
#c_first_row = affine_map<(d0, d1) -> (0, d1)>
func.func @columns(%dy: memref<8x1024x768xbf16>, %db: memref<1x1x768xf32>,
                   %x: memref<8x1024x768xf32>, %rstd: memref<8x1024x1xf32>,
                   %dw: memref<768xf32>, %g: memref<1024x128xf32>,
                   %gb: memref<128xf32>, %scores: memref<8192x768xf32>,
                   %rowsum: memref<8192x1xf32>, %four: memref<4x128xf32>) {
  linalg.generic {indexing_maps = [#c_in, #c_out], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dy : memref<8x1024x768xbf16>) outs(%db : memref<1x1x768xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %e = arith.extf %v : bf16 to f32
    %sum = arith.addf %e, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#c_in, #c_stat, #c_vec], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x, %rstd : memref<8x1024x768xf32>, memref<8x1024x1xf32>) outs(%dw : memref<768xf32>) {
  ^bb0(%v: f32, %r: f32, %acc: f32):
    %n = arith.mulf %v, %r : f32
    %sum = arith.addf %n, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#c_small_in, #c_small_out], iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<1024x128xf32>) outs(%gb : memref<128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %v, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#c_small_in, #c_row_out], iterator_types = ["parallel", "reduction"]}
      ins(%scores : memref<8192x768xf32>) outs(%rowsum : memref<8192x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %v, %acc : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#c_small_in, #c_first_row], iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<1024x128xf32>) outs(%four : memref<4x128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %v, %acc : f32
    linalg.yield %sum : f32
  }
  return
}
