//===- DeviceAllocations.cpp - the host allocates device memory -------------===//

#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_DEVICEALLOCATIONS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// Device memory in place of `alloc` (a memref.alloc or memref.alloca; its
/// alignment is the driver's, 256 bytes).
template <typename AllocLike> Value allocateOnDevice(AllocLike alloc) {
  OpBuilder b(alloc);
  auto device = gpu::AllocOp::create(
      b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
      /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
      alloc.getSymbolOperands(), /*hostShared=*/false);
  alloc.replaceAllUsesWith(device.getMemref());
  alloc.erase();
  return device.getMemref();
}

struct DeviceAllocationsPass
    : public gacc::impl::DeviceAllocationsBase<DeviceAllocationsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> allocations;
    // Not in kernels (their private memory): the pipeline runs this pass
    // after outlining, but a function may still hold gpu.launch ops.
    func->walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        allocations.push_back(op);
    });
    for (Operation *op : allocations) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        allocateOnDevice(alloc);
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        OpBuilder b(dealloc);
        gpu::DeallocOp::create(b, dealloc.getLoc(), /*asyncToken=*/Type(),
                               ValueRange(), dealloc.getMemref());
        dealloc.erase();
      } else {
        // The function's scratch (gacc-split-reductions' partial sums):
        // device memory from its start to each return.
        auto alloca = cast<memref::AllocaOp>(op);
        if (alloca->getBlock() != &func.getBody().front()) {
          alloca.emitOpError("on a GPU's host only at a function's start");
          return signalPassFailure();
        }
        Value device = allocateOnDevice(alloca);
        func.walk([&](Operation *exit) {
          if (!exit->hasTrait<OpTrait::ReturnLike>() ||
              exit->getParentOp() != func)
            return;
          OpBuilder atEnd(exit);
          gpu::DeallocOp::create(atEnd, exit->getLoc(), Type(), ValueRange(),
                                 device);
        });
      }
    }
  }
};
} // namespace
