//===- SumsInRegisters.cpp - a thread's running sum kept in a register ----===//

#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "passes/ArenaViews.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SUMSINREGISTERS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// A load and a store of one element that a loop's body reads and writes
/// at every trip.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// Whether `op` (in the loop, not the accumulator's load or store) may
/// touch `memref`'s bytes: the element must have no other reader or writer
/// while the loop carries it. (Other memory, another sum's included, may be
/// read and written.)
bool mayInterfere(Operation *op, Value memref) {
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false; // Its nested ops are looked at one by one.
  auto interface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!interface)
    return true;
  SmallVector<MemoryEffects::EffectInstance> effects;
  interface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    Value value = effect.getValue();
    if (!value || !isa<MemRefType>(value.getType()) ||
        gacc::mayOverlap(value, memref))
      return true;
  }
  return false;
}

/// The element `loop` (of a constant trip count, at least one) loads and
/// then stores back at indices that do not change between trips, when
/// nothing else in the loop touches that memory's bytes: what a thread's
/// reduction loop does to its output after
/// convert-linalg-to-parallel-loops.
std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  // The element is loaded and stored around the loop: it must run.
  std::optional<APInt> trips = loop.getStaticTripCount();
  if (!trips || trips->isZero())
    return std::nullopt;
  Block *body = loop.getBody();
  for (memref::StoreOp store : body->getOps<memref::StoreOp>()) {
    Value memref = store.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(memref) ||
        !llvm::all_of(store.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    memref::LoadOp load;
    for (memref::LoadOp candidate : body->getOps<memref::LoadOp>())
      if (candidate.getMemRef() == memref &&
          candidate.getIndices() == store.getIndices() &&
          candidate->isBeforeInBlock(store)) {
        load = candidate;
        break;
      }
    if (!load)
      continue;
    WalkResult alone = body->walk([&](Operation *op) {
      if (op == load || op == store || !mayInterfere(op, memref))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (!alone.wasInterrupted())
      return Accumulator{load, store};
  }
  return std::nullopt;
}

/// Loads the element before `loop`, carries it through the trips and
/// stores it after: the new loop.
scf::ForOp keepInRegister(IRRewriter &rewriter, scf::ForOp loop,
                          Accumulator accumulator) {
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, accumulator.load.getLoc(),
                                         accumulator.load.getMemRef(),
                                         accumulator.load.getIndices());
  Value updated = accumulator.store.getValueToStore();
  auto carried = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{updated};
      }));
  rewriter.replaceOp(accumulator.load, carried.getRegionIterArgs().back());
  rewriter.setInsertionPointAfter(carried);
  memref::StoreOp::create(
      rewriter, accumulator.store.getLoc(), carried.getResults().back(),
      accumulator.store.getMemRef(), accumulator.store.getIndices());
  rewriter.eraseOp(accumulator.store);
  return carried;
}

struct SumsInRegistersPass
    : public gacc::impl::SumsInRegistersBase<SumsInRegistersPass> {
  void runOnOperation() override {
    // Inner loops first: once an inner loop carries the element, the
    // enclosing loop loads and stores it around that loop, and carries it
    // too.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (!loop->getParentOfType<gpu::LaunchOp>()) // Kernels built by hand.
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      while (std::optional<Accumulator> accumulator = findAccumulator(loop)) {
        loop = keepInRegister(rewriter, loop, *accumulator);
        ++numCarried;
      }
  }
};
} // namespace
