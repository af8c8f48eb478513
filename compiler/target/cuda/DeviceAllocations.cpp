//===- DeviceAllocations.cpp - the host allocates device memory -------------===//

#include "compiler/target/cuda/Passes.h"

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
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        allocations.push_back(op);
    });
    for (Operation *op : allocations) {
      OpBuilder b(op);
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
