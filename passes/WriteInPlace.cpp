//===- WriteInPlace.cpp - compute arena slots instead of copying into them --===//

#include "dialects/gacc/GaccShapes.h"
#include "passes/ArenaViews.h"
#include "passes/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_WRITEINPLACE
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// One memory access of an op (or of an op nested in it), and what its
/// value views.
struct Access {
  Operation *op;
  Value value;
  bool write;
  ArenaView view;
};

/// The accesses of `root` and the ops nested in it; an op whose effects are
/// unknown reads and writes every memref it takes.
SmallVector<Access> accessesOf(Operation *root) {
  SmallVector<Access> accesses;
  root->walk([&](Operation *op) {
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        bool write = isa<MemoryEffects::Write>(effect.getEffect());
        if (!write && !isa<MemoryEffects::Read>(effect.getEffect()))
          continue;
        if (Value value = effect.getValue())
          accesses.push_back({op, value, write, getArenaView(value)});
        else // Some resource: anything.
          accesses.push_back({op, Value(), write, ArenaView()});
      }
      return;
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        op->hasTrait<OpTrait::IsTerminator>())
      return;
    for (Value operand : op->getOperands())
      if (isa<BaseMemRefType>(operand.getType()))
        accesses.push_back({op, operand, true, getArenaView(operand)});
  });
  return accesses;
}

/// accessesOf each op the checks visit, computed once per run: a copy's
/// checks walk the ops from the temporary's allocation to its last use,
/// which for a gradient spans the rest of the backward. A rewrite forgets
/// the ops whose operands it changes, and the ops around them, whose
/// accesses include theirs, before it changes them. (What `of` returns
/// lives until the next `of` or `forget`.)
class Accesses {
public:
  ArrayRef<Access> of(Operation *op) {
    auto [it, inserted] = cache.try_emplace(op);
    if (inserted)
      it->second = accessesOf(op);
    return it->second;
  }
  void forget(Operation *op) {
    for (; op; op = op->getParentOp())
      cache.erase(op);
  }

private:
  DenseMap<Operation *, SmallVector<Access>> cache;
};

/// The update `slot = f(slot, ...)`: an all-parallel generic that writes
/// `tmp` (among its outputs: an optimizer's update writes a moment and the
/// weight in one pass) and reads the slot's bytes at the same indices.
bool isElementwiseUpdate(const Access &access, Value tmp,
                         const ArenaView &slot) {
  auto generic = dyn_cast<linalg::GenericOp>(access.op);
  if (!generic || access.write ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  auto inits = generic.getDpsInitsMutable();
  auto init =
      llvm::find_if(inits, [&](OpOperand &o) { return o.get() == tmp; });
  if (init == inits.end())
    return false;
  AffineMap written = generic.getMatchingIndexingMap(&*init);
  for (OpOperand *input : generic.getDpsInputOperands())
    if (input->get() == access.value)
      if (!getArenaView(input->get()).hasSameBase(slot) ||
          generic.getMatchingIndexingMap(input) != written ||
          input->get().getType() != tmp.getType())
        return false;
  return true;
}

/// The allocation `source` reshapes (or is): reshapes of a row-major
/// buffer keep its bytes in order, so the slot can take its shape.
memref::AllocOp reshapedAllocation(Value source) {
  while (isa_and_present<memref::ReshapeOp, memref::CollapseShapeOp,
                         memref::ExpandShapeOp>(source.getDefiningOp()))
    source = cast<ViewLikeOpInterface>(source.getDefiningOp()).getViewSource();
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  if (!alloc || !alloc.getType().getLayout().isIdentity())
    return nullptr;
  return alloc;
}

/// The bytes of an arena that `target` (a view) is, when known, and the
/// arena can view them again anywhere in the function.
std::optional<ArenaView> slotOf(memref::ViewOp target) {
  ArenaView slot = getArenaView(target);
  if (slot.kind != ArenaView::Argument || !slot.base ||
      !slot.hasKnownRange() ||
      slot.root.getType() != target.getSource().getType())
    return std::nullopt;
  return slot;
}

/// A view of the slot's bytes with `type`, created before `before`.
Value viewSlot(Operation *before, MemRefType type, const ArenaView &slot) {
  OpBuilder b(before);
  Value offset = arith::ConstantIndexOp::create(b, before->getLoc(), *slot.base);
  return memref::ViewOp::create(b, before->getLoc(), type, slot.root, offset,
                                ValueRange{});
}

/// Replaces `tmp` with the slot `copy` fills from it, if nothing can tell.
bool elide(memref::CopyOp copy, Accesses &accesses) {
  memref::AllocOp alloc = reshapedAllocation(copy.getSource());
  auto slotView = copy.getTarget().getDefiningOp<memref::ViewOp>();
  std::optional<int64_t> bytes =
      alloc ? getStaticByteSize(alloc.getType()) : std::nullopt;
  if (!alloc || !slotView || alloc->getBlock() != copy->getBlock() || !bytes ||
      alloc.getType().getElementType() !=
          slotView.getType().getElementType() ||
      bytes != getStaticByteSize(slotView.getType()) ||
      !slotView.getType().getLayout().isIdentity())
    return false;
  std::optional<ArenaView> slot = slotOf(slotView);
  if (!slot)
    return false;
  Block *block = copy->getBlock();
  Value tmp = alloc.getResult();
  ArenaView temporary = getArenaView(tmp);

  // The last op of the block that uses the temporary (or an alias of it).
  Operation *lastUse = copy;
  SmallVector<Operation *> users;
  if (failed(walkAliasUses(tmp, [&](OpOperand &use) {
        Operation *inBlock = block->findAncestorOpInBlock(*use.getOwner());
        if (!inBlock)
          return failure();
        users.push_back(use.getOwner());
        if (lastUse->isBeforeInBlock(inBlock))
          lastUse = inBlock;
        return success();
      })))
    return false;
  // Once the temporary is the slot, each write to it is a write to the
  // slot: the slot's old bytes may only be read by the update that first
  // writes the temporary, and the temporary must keep after the copy what
  // the slot received.
  bool tmpTouched = false, beforeCopy = true;
  for (Operation *op = alloc->getNextNode(); op != lastUse->getNextNode();
       op = op->getNextNode()) {
    if (op == copy) {
      beforeCopy = false;
      continue;
    }
    bool touchesTmp = false;
    for (const Access &access : accesses.of(op)) {
      if (!access.value)
        return false;
      const ArenaView &view = access.view;
      if (view.mayOverlap(temporary)) {
        touchesTmp = true;
        if (!beforeCopy && access.write)
          return false;
      }
      if (!view.mayOverlap(*slot))
        continue;
      if (beforeCopy ? tmpTouched || !isElementwiseUpdate(access, tmp, *slot)
                     : access.write)
        return false;
    }
    tmpTouched |= touchesTmp;
  }

  Value view = viewSlot(alloc, alloc.getType(), *slot);
  for (Operation *user : users)
    accesses.forget(user);
  accesses.forget(copy);
  accesses.forget(alloc);
  copy.erase();
  alloc.replaceAllUsesWith(view);
  alloc.erase();
  return true;
}

/// Whether `op` writes all of `tmp` without reading what it holds: an
/// all-parallel generic whose only output is `tmp`, indexed by the
/// identity, its value unused by the body (inputs may read `tmp`).
bool overwrites(Operation *op, Value tmp) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != tmp)
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  return generic.getMatchingIndexingMap(init).isIdentity() &&
         generic.getMatchingBlockArgument(init).use_empty();
}

/// The other case: `tmp` holds several values in turn (bufferization
/// reuses a dead operand's buffer: an optimizer's clipped gradient, then
/// the new second moment, then the new parameter) and the copy saves one
/// of them. The op that wrote that value, all of `tmp`, writes the slot
/// instead, and the ops that read the value, up to the op that overwrites
/// `tmp` next, read the slot; `tmp` keeps its other values. Requires that
/// between that write and the copy nothing else touches the slot (it holds
/// the new value earlier now), that after the copy nothing writes the slot
/// before the value's last read, and that `tmp` is only ever a direct
/// operand of ops of the copy's block.
bool forward(memref::CopyOp copy, Accesses &accesses) {
  Value tmp = copy.getSource();
  auto alloc = tmp.getDefiningOp<memref::AllocOp>();
  auto slotView = copy.getTarget().getDefiningOp<memref::ViewOp>();
  if (!alloc || !slotView || alloc.getType() != slotView.getType())
    return false;
  std::optional<ArenaView> slot = slotOf(slotView);
  if (!slot)
    return false;
  ArenaView temporary = getArenaView(tmp);
  Block *block = copy->getBlock();
  if (llvm::any_of(tmp.getUsers(),
                   [&](Operation *user) { return user->getBlock() != block; }))
    return false;

  // How an op touches the slot and `tmp` (`unknown`: through a view of
  // `tmp` or memory the effects do not name).
  struct Touches {
    bool readsTmp = false, writesTmp = false, readsSlot = false,
         writesSlot = false, unknown = false;
  };
  auto touches = [&](Operation *op) {
    Touches t;
    for (const Access &access : accesses.of(op)) {
      if (!access.value) {
        t.unknown = true;
        continue;
      }
      const ArenaView &view = access.view;
      if (view.mayOverlap(temporary)) {
        t.unknown |= access.value != tmp;
        (access.write ? t.writesTmp : t.readsTmp) = true;
      }
      if (view.mayOverlap(*slot))
        (access.write ? t.writesSlot : t.readsSlot) = true;
    }
    return t;
  };

  // Back from the copy to the op that wrote the value copied.
  SmallVector<Operation *> readers;
  Operation *writer = nullptr;
  for (Operation *op = copy->getPrevNode(); op && !writer;
       op = op->getPrevNode()) {
    Touches t = touches(op);
    if (t.unknown || t.writesSlot)
      return false;
    if (t.writesTmp)
      writer = op;
    else if (t.readsSlot)
      return false;
    else if (t.readsTmp)
      readers.push_back(op);
  }
  if (!writer || !overwrites(writer, tmp))
    return false;
  for (const Access &access : accesses.of(writer))
    if (access.value && access.view.mayOverlap(*slot) &&
        !isElementwiseUpdate(access, tmp, *slot))
      return false;
  // On from the copy to the op that overwrites `tmp` (or the block's end),
  // which may read the value through its inputs.
  bool slotWritten = false;
  linalg::GenericOp overwriter;
  for (Operation *op = copy->getNextNode(); op; op = op->getNextNode()) {
    Touches t = touches(op);
    if (t.unknown || (t.readsTmp && (slotWritten || t.writesSlot)))
      return false;
    if (t.writesTmp) {
      if (!overwrites(op, tmp))
        return false;
      overwriter = cast<linalg::GenericOp>(op);
      break;
    }
    if (t.readsTmp)
      readers.push_back(op);
    slotWritten |= t.writesSlot;
  }

  // The slot's view may come after the writer: a new one from the arena.
  accesses.forget(writer);
  accesses.forget(copy);
  for (Operation *reader : readers)
    accesses.forget(reader);
  if (overwriter)
    accesses.forget(overwriter);
  Value slotHere = viewSlot(writer, alloc.getType(), *slot);
  cast<linalg::GenericOp>(writer).getDpsInitOperand(0)->set(slotHere);
  for (Operation *reader : readers)
    for (OpOperand &operand : reader->getOpOperands())
      if (operand.get() == tmp)
        operand.set(slotHere);
  if (overwriter)
    for (OpOperand *input : overwriter.getDpsInputOperands())
      if (input->get() == tmp)
        input->set(slotHere);
  copy.erase();
  return true;
}

struct WriteInPlacePass
    : public gacc::impl::WriteInPlaceBase<WriteInPlacePass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    Accesses accesses;
    for (memref::CopyOp copy : copies)
      if (elide(copy, accesses) || forward(copy, accesses))
        ++numElided;
  }
};
} // namespace
