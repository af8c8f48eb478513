//===- KernelIndexing.h - loop indices inside generated kernels -*- C++ -*-===//
//
// The kernels that TileMatmuls, BlockReductions and FlashAttention write by
// hand compute a linalg op's loop indices from block and thread ids, then
// the indices of its operands from their indexing maps, in loops and
// branches, with buffers of the launch. They do it with these.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H
#define GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::gacc {

/// Index arithmetic for kernels written by hand, inserted at `b`.
class KernelIndexBuilder {
public:
  KernelIndexBuilder(Location loc, Operation *insertBefore)
      : b(loc, insertBefore) {}

  Value index(int64_t v);
  Value add(Value x, Value y);
  Value add(Value x, int64_t y) { return add(x, index(y)); }
  Value mul(Value x, Value y);
  Value mul(Value x, int64_t y) { return mul(x, index(y)); }
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value less(Value x, int64_t y);
  /// The row-major position of `indices` (slowest first) in a box whose
  /// sizes, but for the slowest's, are `innerSizes`.
  Value linearize(ValueRange indices, ValueRange innerSizes);

  /// An scf.for from `lower` to `upper` by `step` with `body` (given the
  /// induction variable) at its end.
  void loop(Value lower, Value upper, int64_t step,
            function_ref<void(Value)> body);
  void loop(int64_t lower, int64_t upper, int64_t step,
            function_ref<void(Value)> body) {
    loop(index(lower), index(upper), step, body);
  }
  /// An scf.if without else, with `body`.
  void ifThen(Value condition, function_ref<void()> body);
  /// A buffer of `shape` elements of `type` per thread of `launch`, or per
  /// block (workgroup memory).
  Value addPrivateBuffer(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                         Type type);
  Value addWorkgroupBuffer(gpu::LaunchOp launch, ArrayRef<int64_t> shape,
                           Type type);

  ImplicitLocOpBuilder b;
};

/// Splits `index` (less than the product of their ranges) into the loop
/// indices of `dims`, the last one fastest, stored in `loopIndex`.
void delinearize(ImplicitLocOpBuilder &b, Value index, ArrayRef<unsigned> dims,
                 ArrayRef<int64_t> ranges, SmallVectorImpl<Value> &loopIndex);

/// The values of `map`'s results at `loopIndex`.
SmallVector<Value> applyMap(ImplicitLocOpBuilder &b, AffineMap map,
                            ArrayRef<Value> loopIndex);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H
