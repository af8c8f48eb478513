//===- KernelCodegen.cpp - the step's loops as CUDA kernels -----------------===//

#include "compiler/target/cuda/KernelCodegen.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/InitAllExtensions.h"
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
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // The conversions to LLVM the NVVM lowering applies to every dialect.
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

namespace {
/// Moves every outlined kernel into one gpu.module, `gacc_kernels`, each
/// named after the module it came from: a step becomes one PTX module (one
/// load, one ptxas run) instead of one per kernel.
struct MergeKernelModulesPass
    : public PassWrapper<MergeKernelModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MergeKernelModulesPass)
  StringRef getArgument() const final { return "gacc-merge-kernel-modules"; }
  StringRef getDescription() const final {
    return "Put every outlined gpu kernel into one gpu.module";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;
    OpBuilder b(kernelModules.front());
    auto merged =
        gpu::GPUModuleOp::create(b, module.getLoc(), "gacc_kernels");
    MLIRContext *context = module.getContext();
    // (module, function) -> the function's name in the merged module.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp kernelModule : kernelModules) {
      SmallVector<gpu::GPUFuncOp> funcs(kernelModule.getOps<gpu::GPUFuncOp>());
      for (gpu::GPUFuncOp func : funcs) {
        std::string name = kernelModule.getName().str();
        if (funcs.size() > 1)
          name += "_" + func.getName().str();
        renamed[{kernelModule.getNameAttr(), func.getNameAttr()}] =
            StringAttr::get(context, name);
        func->moveBefore(merged.getBody(), merged.getBody()->end());
        func.setName(name);
      }
      kernelModule.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name =
          renamed.lookup({launch.getKernelModuleName(), launch.getKernelName()});
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(name)}));
    });
  }
};
} // namespace

void gacc::registerCudaPasses() { PassRegistration<MergeKernelModulesPass>(); }

std::string gacc::findLibdevice() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(variable)) {
      std::string path = std::string(root) + "/nvvm/libdevice/libdevice.10.bc";
      if (llvm::sys::fs::exists(path))
        return path;
    }
  std::string path = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  return llvm::sys::fs::exists(path) ? path : std::string();
}

LogicalResult gacc::buildCudaKernelPipeline(OpPassManager &pm, StringRef chip,
                                            StringRef libdevice) {
  // PTX 8.0: LLVM's default (6.0) cannot target sm_80 and later.
  std::string pipeline =
      "func.func(convert-linalg-to-parallel-loops,"
      "scf-parallel-loop-tiling{parallel-loop-tile-sizes=1,256 "
      "no-min-max-bounds=true},gpu-map-parallel-loops,"
      "convert-parallel-loops-to-gpu),"
      "gpu-kernel-outlining,gacc-merge-kernel-modules,"
      "nvvm-attach-target{chip=" +
      chip.str() +
      " features=+ptx80 O=3 l=" + libdevice.str() + "},"
      "gpu.module(lower-affine,expand-strided-metadata,lower-affine,"
      "convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,cse,"
      "reconcile-unrealized-casts),"
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
