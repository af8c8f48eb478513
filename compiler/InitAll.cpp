//===- InitAll.cpp - register every dialect and pass gacc uses ------------===//

#include "compiler/InitAll.h"
#include "compiler/BufferizationInterfaces.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/conversion/Passes.h"
#include "compiler/target/common/Passes.h"
#include "compiler/target/cpu/Passes.h"
#include "compiler/target/cuda/KernelCodegen.h"
#include "compiler/target/cuda/Passes.h"
#include "dialects/gacc/GaccDialect.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

void mlir::gacc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::gacc::GaccDialect, mlir::affine::AffineDialect,
                  mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect>();
  // One-shot bufferization of the ops the lowering produces.
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::gacc::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::gacc::registerCudaTarget(registry);
}

void mlir::gacc::registerAllPasses() {
  // Generic transforms (canonicalize, cse, inline, symbol-dce, ...). Each
  // gacc pass registers here as it lands.
  mlir::registerTransformsPasses();
  // The upstream passes the gacc pipelines are made of, so that each stage
  // can be replayed and varied from gacc-opt.
  mlir::bufferization::registerBufferizationPasses();
  mlir::bufferization::registerBufferizationPipelines();
  mlir::registerLinalgPasses();
  mlir::memref::registerMemRefPasses();
  mlir::registerConvertLinalgToLoopsPass();
  mlir::registerSCFToControlFlowPass();
  mlir::registerLowerAffinePass();
  mlir::registerConvertVectorToLLVMPass();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerConvertMathToLLVMPass();
  mlir::registerConvertMathToLibmPass();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerConvertIndexToLLVMPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerConvertControlFlowToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();
  // The CUDA kernel pipeline (compiler/target/cuda).
  mlir::registerConvertLinalgToParallelLoopsPass();
  mlir::registerSCFParallelLoopTiling();
  mlir::registerGpuMapParallelLoopsPass();
  mlir::registerConvertParallelLoopToGpuPass();
  mlir::registerGpuKernelOutliningPass();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerGpuModuleToBinaryPass();
  mlir::registerConvertNVGPUToNVVMPass();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  registerGaccCudaPasses();
  registerGaccPasses();
  registerGaccCompilerPasses();
  registerGaccConversionPasses();
  registerGaccCommonPasses();
  registerGaccCpuPasses();
  registerPipelines();
}
