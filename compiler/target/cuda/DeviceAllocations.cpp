//===- DeviceAllocations.cpp - the host allocates device memory -------------===//

#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_DEVICEALLOCATIONS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct DeviceAllocationsPass
    : public gacc::impl::DeviceAllocationsBase<DeviceAllocationsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> allocations;
    getOperation()->walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        allocations.push_back(op);
    });
    for (Operation *op : allocations) {
      OpBuilder b(op);
      // The function's scratch (gacc-split-reductions' partial sums): device
      // memory from its start to each return.
      if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
        func::FuncOp func = getOperation();
        if (alloca->getBlock() != &func.getBody().front()) {
          alloca.emitOpError("on a GPU's host only at a function's start");
          return signalPassFailure();
        }
        auto device = gpu::AllocOp::create(
            b, alloca.getLoc(), alloca.getType(), Type(), ValueRange(),
            alloca.getDynamicSizes(), alloca.getSymbolOperands(),
            /*hostShared=*/false);
        func.walk([&](func::ReturnOp ret) {
          OpBuilder atEnd(ret);
          gpu::DeallocOp::create(atEnd, ret.getLoc(), Type(), ValueRange(),
                                 device.getMemref());
        });
        alloca.replaceAllUsesWith(device.getMemref());
        alloca.erase();
        continue;
      }
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/false);
        alloc.replaceAllUsesWith(device.getMemref());
      } else {
        gpu::DeallocOp::create(b, op->getLoc(), /*asyncToken=*/Type(),
                               ValueRange(),
                               cast<memref::DeallocOp>(op).getMemref());
      }
      op->erase();
    }
  }
};
} // namespace
