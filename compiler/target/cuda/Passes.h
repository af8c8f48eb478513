//===- Passes.h - CUDA target passes ------------------------------*- C++ -*-===//
#ifndef GACC_COMPILER_TARGET_CUDA_PASSES_H
#define GACC_COMPILER_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gacc {

#define GEN_PASS_DECL
#include "compiler/target/cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/target/cuda/Passes.h.inc"

} // namespace mlir::gacc

#endif // GACC_COMPILER_TARGET_CUDA_PASSES_H
