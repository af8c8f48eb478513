// RUN: gacc-opt %s --gacc-zero="stage=1 ranks=2" | FileCheck %s --check-prefix=ZERO
// RUN: gacc-opt %s --gacc-zero="stage=0 ranks=2" --gacc-training-pipeline | FileCheck %s --check-prefix=STAGE0
// RUN: gacc-opt %s --gacc-zero="stage=1 ranks=2" --gacc-training-pipeline | FileCheck %s --check-prefix=STAGE1
// RUN: gacc-opt %s --gacc-zero="stage=3 ranks=2" --gacc-training-pipeline | FileCheck %s --check-prefix=STAGE3
// RUN: gacc-opt %s --gacc-zero="stage=3 ranks=2" --gacc-training-pipeline --convert-gacc-to-linalg | FileCheck %s --check-prefix=CALLS
// RUN: sed 's/batch_size 8 /batch_size 8 micro_batch_size 2 /' %s | gacc-opt --gacc-zero="stage=2 ranks=2" --gacc-training-pipeline | FileCheck %s --check-prefix=STAGE2-MICRO
// RUN: not gacc-opt %s --gacc-zero="stage=1 ranks=3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// RUN: sed 's/optimizer #gacc.sgd<lr = 0.1>/optimizer #gacc.adafactor<lr = 0.1, relative_step = false>/' %s | gacc-opt --gacc-zero="stage=2 ranks=2" --gacc-training-pipeline | FileCheck %s --check-prefix=ADAFACTOR

// Each rank reads half of the batch of 8; batch_size stays global.
// ZERO: gacc.input @x : tensor<4x4xf32> features
// ZERO: gacc.input @y : tensor<4xi32> labels
// ZERO: gacc.matmul {{.*}} : tensor<4x4xf32>, tensor<3x4xf32> -> tensor<4x3xf32>
// ZERO: batch_size 8 {{.*}} zero #gacc.zero<stage = 1, ranks = 2>

// Stage 0: the gradient (as soon as it is computed) and the loss are
// summed over the ranks.
// STAGE0-LABEL: func.func @gacc_step
// STAGE0: gacc.all_reduce sum {{.*}} ranks = 2 : tensor<3x4xf32>
// STAGE0: gacc.all_reduce sum {{.*}} ranks = 2 : tensor<f32>
// STAGE0-NOT: gacc.reduce_scatter
// STAGE0-LABEL: func.func @gacc_eval
// STAGE0: gacc.all_reduce mean {{.*}} ranks = 2 : tensor<f32>

// Stage 1: the gradient (12 elements) is reduce-scattered, this rank's
// shard of the parameter (at rank · 6) is updated with its shard of the
// state, and the parameter gathered again; the norm is summed over ranks.
// STAGE1-LABEL: func.func @gacc_step
// STAGE1: gacc.reduce_scatter sum {{.*}} dim = 0 ranks = 2 : tensor<12xf32> -> tensor<6xf32>
// STAGE1: gacc.all_reduce sum {{.*}} ranks = 2 : tensor<f32>
// STAGE1: tensor.extract_slice {{.*}}[%{{.*}}] [6] [1] : tensor<12xf32> to tensor<6xf32>
// STAGE1: gacc.all_gather {{.*}} dim = 0 ranks = 2 : tensor<6xf32> -> tensor<12xf32>

// Stage 3: the state holds the 6-element shard, gathered where it is read.
// STAGE3-LABEL: func.func @gacc_step
// STAGE3: memref.view %arg0[%c0][] : memref<?xi8> to memref<6xf32>
// STAGE3: gacc.all_gather {{.*}} : tensor<6xf32> -> tensor<12xf32>
// STAGE3-NEXT: gacc.reshape {{.*}} : tensor<12xf32> -> tensor<3x4xf32>
// STAGE3-NEXT: gacc.matmul
// STAGE3: gacc.reduce_scatter sum {{.*}} : tensor<12xf32> -> tensor<6xf32>

// Stage 2 with two micro-batches per rank: each micro-batch's gradient is
// reduce-scattered into a sharded accumulator; no reduction after the loop.
// STAGE2-MICRO-LABEL: func.func @gacc_step
// STAGE2-MICRO: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<f32>, tensor<6xf32>)
// STAGE2-MICRO: gacc.reduce_scatter sum {{.*}} : tensor<12xf32> -> tensor<6xf32>
// STAGE2-MICRO: scf.yield
// STAGE2-MICRO-NOT: gacc.reduce_scatter
// STAGE2-MICRO: gacc.all_gather {{.*}} : tensor<6xf32> -> tensor<12xf32>

// Collectives become calls of the runtime's communicator.
// CALLS: func.func private @gacc_comm_all_gather_f32(memref<*xf32>, memref<*xf32>, i32, i32)
// CALLS: %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only
// CALLS: %[[OUT:.*]] = memref.alloc() : memref<12xf32>
// CALLS: call @gacc_comm_all_gather_f32
// CALLS: bufferization.to_tensor %[[OUT]] restrict writable

// Adafactor's factored moments under ZeRO: the 6-element shard starts at
// row rank·6/4 of the 3x4 parameter; a window of 3 rows holds it wherever it
// starts. The window's row sums of squares, placed at that row of 4 (every
// window fits), and its column sums are summed over the ranks in one
// all-reduce; so are the squares of the RMS norms.
// ADAFACTOR-LABEL: func.func @gacc_step
// ADAFACTOR: gacc.reduce_scatter sum {{.*}} : tensor<12xf32> -> tensor<6xf32>
// ADAFACTOR: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}] [6] [1] : tensor<6xf32> into tensor<12xf32>
// ADAFACTOR: %[[ROWS:.*]] = gacc.reduce_sum %{{.*}} axes = [1] : tensor<3x4xf32> -> tensor<3xf32>
// ADAFACTOR: %[[PLACED:.*]] = tensor.insert_slice %[[ROWS]] into %{{.*}}[%{{.*}}] [3] [1] : tensor<3xf32> into tensor<4xf32>
// ADAFACTOR: %[[COLUMNS:.*]] = gacc.reduce_sum %{{.*}} axes = [0] : tensor<3x4xf32> -> tensor<4xf32>
// ADAFACTOR: %[[BOTH:.*]] = gacc.concat %[[PLACED]], %[[COLUMNS]] axis = 0 : tensor<4xf32>, tensor<4xf32> -> tensor<8xf32>
// ADAFACTOR: %[[SUMS:.*]] = gacc.all_reduce sum %[[BOTH]] ranks = 2 : tensor<8xf32>
// ADAFACTOR: gacc.slice %[[SUMS]] offsets = [0] sizes = [3]
// ADAFACTOR: gacc.slice %[[SUMS]] offsets = [4] sizes = [4]
// ADAFACTOR: tensor.extract_slice %{{.*}}[%{{.*}}] [3] [1] : tensor<4xf32> to tensor<3xf32>
// ADAFACTOR: tensor.extract_slice %{{.*}}[%{{.*}}] [6] [1] : tensor<12xf32> to tensor<6xf32>
// ADAFACTOR: gacc.all_reduce sum %{{.*}} ranks = 2 : tensor<f32>
// ADAFACTOR: gacc.all_gather {{.*}} : tensor<6xf32> -> tensor<12xf32>

// UNEVEN: error: 'gacc.train_step' op batch_size (8) must divide evenly over 3 ranks

module {
  gacc.param @w : tensor<3x4xf32> = #gacc.init<normal, scale = 0.1, seed = 1>
  gacc.input @x : tensor<8x4xf32> features
  gacc.input @y : tensor<8xi32> labels
  func.func @m() -> tensor<f32> {
    %x = gacc.load @x : tensor<8x4xf32>
    %y = gacc.load @y : tensor<8xi32>
    %w = gacc.load @w : tensor<3x4xf32>
    %l = gacc.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
    %loss = gacc.cross_entropy mean %l, %y : tensor<8x3xf32>, tensor<8xi32>
    return %loss : tensor<f32>
  }
  gacc.train_step @train model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
}
