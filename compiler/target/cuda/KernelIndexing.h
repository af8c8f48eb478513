//===- KernelIndexing.h - loop indices inside generated kernels -*- C++ -*-===//
//
// The kernels that TileMatmuls and BlockReductions write by hand compute a
// linalg op's loop indices from block and thread ids, then the indices of
// its operands from their indexing maps. Both do it with these.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H
#define GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::gacc {

/// Splits `index` (less than the product of their ranges) into the loop
/// indices of `dims`, the last one fastest, stored in `loopIndex`.
void delinearize(ImplicitLocOpBuilder &b, Value index, ArrayRef<unsigned> dims,
                 ArrayRef<int64_t> ranges, SmallVectorImpl<Value> &loopIndex);

/// The values of `map`'s results at `loopIndex`.
SmallVector<Value> applyMap(ImplicitLocOpBuilder &b, AffineMap map,
                            ArrayRef<Value> loopIndex);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CUDA_KERNELINDEXING_H
