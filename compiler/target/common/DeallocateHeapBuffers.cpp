//===- DeallocateHeapBuffers.cpp - free what the plan left to the heap ----===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_DEALLOCATEHEAPBUFFERS
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// Whether `op` allocates memory that outlives its function's frame.
bool allocatesOnTheHeap(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect()) &&
           e.getResource() !=
               SideEffects::AutomaticAllocationScopeResource::get();
  });
}

struct DeallocateHeapBuffersPass
    : public gacc::impl::DeallocateHeapBuffersBase<DeallocateHeapBuffersPass> {
  DeallocateHeapBuffersPass() {
    bufferization::buildBufferDeallocationPipeline(
        deallocation, bufferization::BufferDeallocationPipelineOptions());
    cleanup.addPass(createCSEPass());
    cleanup.addPass(createCanonicalizerPass());
  }
  DeallocateHeapBuffersPass(const DeallocateHeapBuffersPass &other)
      : DeallocateHeapBuffersBase(other), deallocation(other.deallocation),
        cleanup(other.cleanup) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    deallocation.getDependentDialects(registry);
    cleanup.getDependentDialects(registry);
  }

  void runOnOperation() override {
    bool heap = getOperation()
                    ->walk([](Operation *op) {
                      return allocatesOnTheHeap(op) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
                    })
                    .wasInterrupted();
    if (failed(runPipeline(heap ? deallocation : cleanup, getOperation())))
      signalPassFailure();
  }

  OpPassManager deallocation{ModuleOp::getOperationName()};
  OpPassManager cleanup{ModuleOp::getOperationName()};
};
} // namespace
