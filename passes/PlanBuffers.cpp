//===- PlanBuffers.cpp - a static plan of a step's temporaries --------------===//

#include "dialects/gacc/GaccShapes.h"
#include "passes/ArenaViews.h"
#include "passes/Passes.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_PLANBUFFERS
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
constexpr int64_t kAlignment = 64;

/// One allocation and the closed interval of program positions it lives in.
struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int64_t offset = -1;
  bool overlapsInTime(const Buffer &other) const {
    return start <= other.end && other.start <= end;
  }
};

/// Positions of ops in a pre-order walk; `last[op]` is the last position
/// nested in `op` (its own for ops without regions).
struct ProgramOrder {
  DenseMap<Operation *, int64_t> first, last;
  int64_t next = 0;
  void number(Operation *op) {
    first[op] = next++;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          number(&nested);
    last[op] = next - 1;
  }
};

/// Computes the lifetime of `buffer.alloc`; false when the buffer outlives
/// the loop iteration (or function) that allocates it.
bool computeLifetime(Buffer &buffer, const ProgramOrder &order) {
  Operation *allocOp = buffer.alloc;
  buffer.start = buffer.end = order.first.lookup(allocOp);
  return succeeded(walkAliasUses(buffer.alloc, [&](OpOperand &use) {
    // A use inside a loop that does not contain the allocation happens in
    // every iteration: the buffer lives to the loop's end.
    Operation *user = use.getOwner();
    Operation *reach = user;
    for (Operation *parent = user->getParentOp();
         parent && !isa<func::FuncOp>(parent); parent = parent->getParentOp())
      if (isa<LoopLikeOpInterface>(parent) && !parent->isAncestor(allocOp))
        reach = parent;
    buffer.end = std::max(buffer.end, order.last.lookup(reach));
    // Carried into the next iteration of the loop that allocates it.
    auto loop = dyn_cast<scf::ForOp>(user->getParentOp());
    return failure(isa<scf::YieldOp>(user) && loop &&
                   loop->isAncestor(allocOp));
  }));
}

/// Places `buffers` in `order`, each at the lowest aligned offset that no
/// buffer placed before it and alive at the same time occupies. Returns the
/// arena size.
int64_t placeInOrder(ArrayRef<Buffer *> order) {
  int64_t arenaBytes = 0;
  SmallVector<const Buffer *> placed;
  for (Buffer *buffer : order) {
    SmallVector<const Buffer *> conflicts;
    for (const Buffer *other : placed)
      if (other->overlapsInTime(*buffer))
        conflicts.push_back(other);
    llvm::sort(conflicts, [](const Buffer *a, const Buffer *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (const Buffer *other : conflicts) {
      if (offset + buffer->bytes <= other->offset)
        break;
      offset = std::max(
          offset, static_cast<int64_t>(llvm::alignTo(
                      other->offset + other->bytes, kAlignment)));
    }
    buffer->offset = offset;
    arenaBytes = std::max(arenaBytes, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return static_cast<int64_t>(llvm::alignTo(arenaBytes, kAlignment));
}

/// Greedy placement (placeInOrder) in a few orders, the smallest arena
/// kept: largest first, largest size-lifetime product first, longest-lived
/// first. Which order wins depends on the program, and a change of op
/// order elsewhere must not grow the plan. Returns the arena size.
int64_t placeBuffers(MutableArrayRef<Buffer> buffers) {
  auto bySize = [](const Buffer *a, const Buffer *b) {
    return a->bytes > b->bytes;
  };
  auto byArea = [](const Buffer *a, const Buffer *b) {
    return a->bytes * (a->end - a->start + 1) >
           b->bytes * (b->end - b->start + 1);
  };
  auto byLifetime = [](const Buffer *a, const Buffer *b) {
    return a->end - a->start > b->end - b->start;
  };
  SmallVector<Buffer *> order;
  for (Buffer &buffer : buffers)
    order.push_back(&buffer);
  int64_t best = std::numeric_limits<int64_t>::max();
  SmallVector<int64_t> bestOffsets;
  for (auto compare : {+bySize, +byArea, +byLifetime}) {
    llvm::stable_sort(order, compare);
    int64_t bytes = placeInOrder(order);
    if (bytes >= best)
      continue;
    best = bytes;
    bestOffsets.clear();
    for (const Buffer &buffer : buffers)
      bestOffsets.push_back(buffer.offset);
  }
  for (auto [buffer, offset] : llvm::zip_equal(buffers, bestOffsets))
    buffer.offset = offset;
  return buffers.empty() ? 0 : best;
}

struct PlanBuffersPass : public gacc::impl::PlanBuffersBase<PlanBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Value workspace;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto role = func.getArgAttrOfType<StringAttr>(i, kArenaAttrName))
        if (role.getValue() == "workspace")
          workspace = func.getArgument(i);
    if (!workspace)
      return;
    // The roles have served their purpose; LLVM has no use for them.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, kArenaAttrName);

    ProgramOrder order;
    for (Operation &op : func.getBody().getOps())
      order.number(&op);

    SmallVector<Buffer> buffers;
    int64_t unplannedBytes = 0;
    func.walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = getStaticByteSize(alloc.getType());
      Buffer buffer{alloc, bytes.value_or(0)};
      if (!bytes || (alloc.getAlignment() &&
                     kAlignment % static_cast<int64_t>(*alloc.getAlignment()))) {
        ++numUnplanned;
        return;
      }
      if (!computeLifetime(buffer, order)) {
        // Loop-carried: this iteration's and the previous one's.
        unplannedBytes += 2 * buffer.bytes;
        ++numUnplanned;
        return;
      }
      buffers.push_back(buffer);
    });
    int64_t arenaBytes = placeBuffers(buffers);
    OpBuilder b(func.getContext());
    for (Buffer &buffer : buffers) {
      for (Operation *user : llvm::make_early_inc_range(buffer.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      b.setInsertionPoint(buffer.alloc);
      Value offset =
          arith::ConstantIndexOp::create(b, buffer.alloc.getLoc(), buffer.offset);
      Value view = memref::ViewOp::create(b, buffer.alloc.getLoc(),
                                          buffer.alloc.getType(), workspace,
                                          offset, ValueRange{});
      buffer.alloc.replaceAllUsesWith(view);
      buffer.alloc.erase();
      plannedBytes += buffer.bytes;
    }
    numPlanned += buffers.size();
    workspaceBytes += arenaBytes;
    func->setAttr(kWorkspaceBytesAttrName, b.getI64IntegerAttr(arenaBytes));
    func->setAttr(kUnplannedBytesAttrName, b.getI64IntegerAttr(unplannedBytes));
  }
};
} // namespace
