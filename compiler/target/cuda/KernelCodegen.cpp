//===- KernelCodegen.cpp - the step's loops as CUDA kernels -----------------===//

#include "compiler/target/cuda/KernelCodegen.h"
#include "compiler/target/common/Passes.h"
#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

using namespace mlir;

void gacc::registerCudaTarget(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>();
  // The conversions to LLVM the NVVM lowering applies to every dialect.
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  // gpu.binary -> embedded PTX and the mgpu* calls that load it.
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

std::string gacc::findCudaFile(StringRef relative) {
  const char *root = std::getenv("CUDA_HOME");
  if (!root)
    root = std::getenv("CUDA_PATH");
  if (!root)
    root = "/usr/local/cuda";
  std::string path = (root + Twine("/") + relative).str();
  return llvm::sys::fs::exists(path) ? path : std::string();
}

void gacc::buildCudaKernelMappingPipeline(OpPassManager &pm) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  // Enough partial sums for every multiprocessor to hold several blocks;
  // from 256 outputs, a block each does that. Column sums: a thread per 32
  // rows of a column (below gacc-cuda-block-reductions' 64).
  func.addPass(createSplitReductions(SplitReductionsOptions{
      .maxOutputs = 256, .parallelism = 2048, .columnRows = 32}));
  func.addPass(createFlashAttention());
  func.addPass(createTileMatmuls());
  func.addPass(createBlockReductions());
  func.addPass(createCopiesToLinalg());
  func.addPass(createConvertLinalgToParallelLoopsPass());
  func.addPass(createSumsInRegisters());
  func.addPass(createCollapseParallelLoops());
  func.addPass(createCanonicalizerPass());
  // Fixed tile bounds with an in-bounds check inside: min/max bounds are
  // what convert-parallel-loops-to-gpu cannot map.
  func.addPass(createParallelLoopTilingPass({kThreadsPerBlock},
                                            /*noMinMaxBounds=*/true));
  func.addPass(createGpuMapParallelLoopsPass());
  func.addPass(createConvertParallelLoopToGpuPass());
  func.addPass(createHostMemoryToKernels());
  // Constants and index arithmetic move into the kernels: divisions by
  // constants, and private arrays indexed by constants (kept in registers).
  func.addPass(createGpuLaunchSinkIndexComputationsPass());
}

LogicalResult gacc::buildCudaKernelCompilationPipeline(OpPassManager &pm,
                                                       StringRef chip,
                                                       StringRef libdevice) {
  // PTX 8.0: LLVM's default (6.0) cannot target sm_80 and later.
  std::string pipeline =
      "func.func(gacc-cuda-dynamic-shared-memory),"
      "gpu-kernel-outlining,gacc-cuda-merge-kernel-modules,"
      "nvvm-attach-target{chip=" +
      chip.str() + " features=+ptx80 O=3 l=" + libdevice.str() +
      "},"
      "gpu.module(lower-affine,expand-strided-metadata,lower-affine,"
      "convert-scf-to-cf,convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,"
      "canonicalize,cse,reconcile-unrealized-casts),"
      "gpu-module-to-binary{format=isa}";
  return parsePassPipeline(pipeline, pm, llvm::errs());
}

FailureOr<std::string> gacc::collectPtx(ModuleOp module) {
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  bool missing = false;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly) {
        missing = true;
        continue;
      }
      os << "// gacc kernel module " << binary.getSymName() << "\n"
         << object.getObject().getValue() << "\n";
    }
  });
  if (missing)
    return module.emitError("a kernel module holds no PTX");
  return ptx;
}
