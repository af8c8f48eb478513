//===- HostMemoryToKernels.cpp - no host access to device memory ------------===//

#include "compiler/target/cuda/Passes.h"
#include "passes/ArenaViews.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_HOSTMEMORYTOKERNELS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {

/// Whether `op` holds a launch or a call: those stay on the host, so the
/// op stays too and its regions are processed instead.
bool holdsHostWork(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isa<gpu::LaunchOp, func::CallOp>(nested)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` (or an op in it) reads or writes memory. Allocation,
/// freeing and views (descriptors, such as memref.reshape's, whose shape
/// operand is a constant global of the host) are the host's.
bool readsOrWrites(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        if (isa<ViewLikeOpInterface>(nested))
          return WalkResult::advance();
        auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
        if (!effects)
          return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                     ? WalkResult::advance()
                     : WalkResult::interrupt();
        SmallVector<MemoryEffects::EffectInstance> instances;
        effects.getEffects(instances);
        for (const MemoryEffects::EffectInstance &instance : instances)
          if (isa<MemoryEffects::Read, MemoryEffects::Write>(
                  instance.getEffect()))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` is a constant global of the host or a view of one: a
/// kernel gets its own copy (outlining clones the global into the kernel
/// module, in device memory).
bool isHostConstant(Operation *op) {
  return isa<memref::GetGlobalOp, ViewLikeOpInterface>(op) &&
         gacc::getArenaView(op->getResult(0)).kind == gacc::ArenaView::Global;
}

class HostMemoryToKernels {
public:
  explicit HostMemoryToKernels(func::FuncOp func) : func(func) {}

  void run() {
    processBlock(func.getBody().front());
    // Scratch values live for the whole call.
    for (Value scratch : scratches) {
      Operation *alloc = scratch.getDefiningOp();
      alloc->moveBefore(&func.getBody().front().front());
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        memref::DeallocOp::create(b, ret.getLoc(), scratch);
      });
    }
    // Kernels read constants (a zero accumulator to start from, a table)
    // from their own copies: the host's are out of a GPU's reach.
    func.walk([](gpu::LaunchOp launch) {
      (void)sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
        return isHostConstant(op) || isa<arith::ConstantOp>(op);
      });
    });
    SmallVector<Operation *> hostConstants;
    func.walk([&](Operation *op) {
      if (isHostConstant(op))
        hostConstants.push_back(op);
    });
    // Views before the globals they view.
    for (Operation *op : llvm::reverse(hostConstants))
      if (op->use_empty())
        op->erase();
  }

private:
  void processBlock(Block &block) {
    SmallVector<Operation *> run;
    for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
      bool allocates = op.getNumRegions() == 0 && !isMemoryEffectFree(&op) &&
                       !readsOrWrites(&op);
      if (isa<gpu::LaunchOp>(op) || allocates) {
        // Launches, allocations and frees keep their place among the runs.
        flush(run);
      } else if (holdsHostWork(&op)) {
        flush(run);
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            processBlock(nested);
      } else if (readsOrWrites(&op) ||
                 llvm::any_of(op.getOperands(), [&](Value v) {
                   return v.getDefiningOp() &&
                          llvm::is_contained(run, v.getDefiningOp());
                 })) {
        run.push_back(&op);
      }
    }
    flush(run);
  }

  /// Moves `run` into a launch of one thread, placed after its last op;
  /// values used after the run pass through scratch memory.
  void flush(SmallVectorImpl<Operation *> &run) {
    if (run.empty())
      return;
    Operation *last = run.back();
    Location loc = run.front()->getLoc();
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    auto terminator = gpu::TerminatorOp::create(b, loc);
    for (Operation *op : run)
      op->moveBefore(terminator);
    for (Operation *op : run)
      for (Value result : op->getResults()) {
        SmallVector<OpOperand *> outside;
        for (OpOperand &use : result.getUses())
          if (!launch->isAncestor(use.getOwner()))
            outside.push_back(&use);
        if (!outside.empty())
          spill(result, outside, launch, terminator);
      }
    run.clear();
  }

  /// Stores `value` into scratch memory at the end of `launch`; each outside
  /// use loads it, inside its own launch or on the host (where the load
  /// joins a later run).
  void spill(Value value, ArrayRef<OpOperand *> uses, gpu::LaunchOp launch,
             Operation *terminator) {
    OpBuilder b(launch);
    Location loc = value.getLoc();
    Value scratch = memref::AllocOp::create(
        b, loc, MemRefType::get({}, value.getType()));
    scratches.push_back(scratch);
    b.setInsertionPoint(terminator);
    memref::StoreOp::create(b, loc, value, scratch);
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      if (auto consumer = user->getParentOfType<gpu::LaunchOp>())
        b.setInsertionPointToStart(&consumer.getBody().front());
      else
        b.setInsertionPoint(user);
      use->set(memref::LoadOp::create(b, loc, scratch));
    }
  }

  func::FuncOp func;
  SmallVector<Value> scratches;
};

struct HostMemoryToKernelsPass
    : public gacc::impl::HostMemoryToKernelsBase<HostMemoryToKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    HostMemoryToKernels(func).run();
    // What is left on the host must not touch memory (device memory, on a
    // GPU).
    WalkResult result = func->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (op->getNumRegions() == 0 && !isa<func::CallOp>(op) &&
          readsOrWrites(op)) {
        op->emitOpError("reads or writes memory outside the step's kernels");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
