//===- MergeKernelModules.cpp - one gpu.module per step ---------------------===//

#include "compiler/target/common/FunctionKey.h"
#include "compiler/target/cuda/Passes.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_MERGEKERNELMODULES
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
constexpr int64_t kWorkgroupAlignment = 16;

struct MergeKernelModulesPass
    : public gacc::impl::MergeKernelModulesBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;
    OpBuilder b(kernelModules.front());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), "gacc_kernels");
    MLIRContext *context = module.getContext();
    // (module, function) -> the function's name in the merged module.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    SymbolTable mergedSymbols(merged);
    // Structurally identical kernels (a transformer's layers, a forward
    // and its recomputation) are one kernel, loaded and compiled once.
    llvm::StringMap<StringAttr> byKey;
    for (gpu::GPUModuleOp kernelModule : kernelModules) {
      SmallVector<gpu::GPUFuncOp> funcs(kernelModule.getOps<gpu::GPUFuncOp>());
      for (gpu::GPUFuncOp func : funcs) {
        std::string name = kernelModule.getName().str();
        if (funcs.size() > 1)
          name += "_" + func.getName().str();
        auto [known, inserted] = byKey.try_emplace(
            gacc::getStructuralKey(func), StringAttr::get(context, name));
        renamed[{kernelModule.getNameAttr(), func.getNameAttr()}] =
            known->second;
        if (!inserted) {
          func.erase();
          continue;
        }
        func->moveBefore(merged.getBody(), merged.getBody()->end());
        func.setName(name);
        // Workgroup buffers 16-byte aligned: the tiled matmuls store 16
        // bytes at a time into theirs (LLVM would assume the element's),
        // and ldmatrix needs each row it reads 16-byte aligned.
        for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i)
          func.setWorkgroupAttributionAttr(
              i, LLVM::LLVMDialect::getAlignAttrName(),
              b.getI64IntegerAttr(kWorkgroupAlignment));
      }
      // The other symbols outlining cloned into each module (the host's
      // constant globals) are copies of one definition: keep one.
      for (Operation &op : kernelModule.getBody()->getOperations())
        if (auto symbol = dyn_cast<SymbolOpInterface>(op))
          if (!mergedSymbols.lookup(symbol.getNameAttr()))
            mergedSymbols.insert(op.clone());
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
