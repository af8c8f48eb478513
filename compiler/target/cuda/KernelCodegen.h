//===- KernelCodegen.h - the step's loops as CUDA kernels --------*- C++ -*-===//
//
// The CUDA target (issue 9): after bufferization, every linalg op of a step
// becomes parallel loops, collapsed to one dimension, tiled by 256 (fixed
// tile bounds with an in-bounds check, so that every loop nest maps), mapped
// to blocks and threads (buildCudaKernelMappingPipeline: the IR the CPU
// emulation runs too), outlined into gpu kernels (all in one gpu.module),
// lowered to NVVM and compiled to PTX by LLVM's NVPTX backend.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_COMPILER_TARGET_CUDA_KERNELCODEGEN_H
#define GACC_COMPILER_TARGET_CUDA_KERNELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::gacc {

/// The dialects, GPU target and LLVM translations the kernel pipeline uses.
void registerCudaTarget(DialectRegistry &registry);
/// Threads per block of the mapped loops.
inline constexpr int64_t kThreadsPerBlock = 256;

/// The file at `relative` in CUDA's toolkit ($CUDA_HOME, else $CUDA_PATH,
/// else /usr/local/cuda): libdevice (the kernels' math functions), ptxas,
/// fatbinary. Empty if the toolkit has no such file.
std::string findCudaFile(StringRef relative);

/// From a bufferized step to gpu.launch ops (linalg -> parallel loops ->
/// tiles -> blocks and threads), on each function.
void buildCudaKernelMappingPipeline(OpPassManager &pm);

/// From the mapped step to gpu.binary ops holding PTX for `chip` (sm_80:
/// ptxas accepts its PTX for sm_80 and sm_90), linked with `libdevice`:
/// kernel outlining, one gpu.module, NVVM, LLVM's NVPTX backend.
LogicalResult buildCudaKernelCompilationPipeline(OpPassManager &pm,
                                                 StringRef chip,
                                                 StringRef libdevice);

/// The PTX of every kernel module `module` holds after the pipeline, one
/// after the other, each after a `// gacc kernel module <name>` line.
FailureOr<std::string> collectPtx(ModuleOp module);

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CUDA_KERNELCODEGEN_H
