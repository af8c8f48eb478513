//===- WriteInPlace.cpp - compute arena slots instead of copying into them --===//

#include "dialects/gacc/GaccShapes.h"
#include "passes/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_WRITEINPLACE
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// The memory a memref value may touch.
struct Origin {
  enum Kind { Argument, Allocation, Unknown } kind = Unknown;
  /// The function argument or the allocation.
  Value root;
  /// Bytes of the argument (the whole of it when not known).
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();

  bool mayOverlap(const Origin &other) const {
    if (kind == Unknown || other.kind == Unknown)
      return true;
    if (kind != other.kind || root != other.root)
      return false;
    return begin < other.end && other.begin < end;
  }
  bool operator==(const Origin &other) const {
    return kind == other.kind && root == other.root && begin == other.begin &&
           end == other.end;
  }
};

/// A loop-carried buffer the loop updates in place is its initial buffer.
Value inPlaceInit(scf::ForOp loop, unsigned index) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (yield.getOperand(index) != loop.getRegionIterArgs()[index])
    return Value();
  return loop.getInitArgs()[index];
}

Origin originOf(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        return {Origin::Argument, arg};
      auto loop = dyn_cast<scf::ForOp>(owner);
      if (!loop || arg.getArgNumber() == 0)
        return {};
      value = inPlaceInit(loop, arg.getArgNumber() - 1);
      if (!value)
        return {};
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
      return {Origin::Allocation, value};
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      Origin base = originOf(view.getSource());
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      std::optional<int64_t> bytes = getStaticByteSize(view.getType());
      if (base.kind == Origin::Argument && base.begin == 0 && shift && bytes) {
        base.begin = *shift;
        base.end = *shift + *bytes;
      }
      return base;
    }
    // Subviews, casts, reshapes: within their source.
    if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def)) {
      value = viewLike.getViewSource();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      value = inPlaceInit(loop, cast<OpResult>(value).getResultNumber());
      if (!value)
        return {};
      continue;
    }
    return {};
  }
}

/// One memory access of an op (or of an op nested in it).
struct Access {
  Operation *op;
  Value value;
  bool write;
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
          accesses.push_back({op, value, write});
        else // Some resource: anything.
          accesses.push_back({op, Value(), write});
      }
      return;
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        op->hasTrait<OpTrait::IsTerminator>())
      return;
    for (Value operand : op->getOperands())
      if (isa<BaseMemRefType>(operand.getType()))
        accesses.push_back({op, operand, true});
  });
  return accesses;
}

/// The update `slot = f(slot, ...)`: an all-parallel generic that writes
/// `tmp` and reads the slot's bytes at the same indices.
bool isElementwiseUpdate(const Access &access, Value tmp, const Origin &slot) {
  auto generic = dyn_cast<linalg::GenericOp>(access.op);
  if (!generic || access.write ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != tmp)
    return false;
  AffineMap written = generic.getMatchingIndexingMap(
      generic.getDpsInitOperand(0));
  for (OpOperand *input : generic.getDpsInputOperands())
    if (input->get() == access.value)
      if (!(originOf(input->get()) == slot) ||
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

/// A view of the slot's bytes (in `arena`) with `type`, created before
/// `before`.
Value viewSlot(Operation *before, MemRefType type, Value arena,
               const Origin &slot) {
  OpBuilder b(before);
  Value offset = arith::ConstantIndexOp::create(b, before->getLoc(), slot.begin);
  return memref::ViewOp::create(b, before->getLoc(), type, arena, offset,
                                ValueRange{});
}

/// Replaces `tmp` with the slot `copy` fills from it, if nothing can tell.
bool elide(memref::CopyOp copy) {
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
  Origin slot = originOf(slotView);
  if (slot.kind != Origin::Argument ||
      slot.end == std::numeric_limits<int64_t>::max())
    return false;
  Block *block = copy->getBlock();
  Value tmp = alloc.getResult();
  Origin temporary = originOf(tmp);

  // The last op of the block that uses the temporary (or a view of it).
  Operation *lastUse = copy;
  SmallVector<Value> aliases{tmp};
  while (!aliases.empty()) {
    for (Operation *user : aliases.pop_back_val().getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return false;
      if (lastUse->isBeforeInBlock(inBlock))
        lastUse = inBlock;
      if (isa<ViewLikeOpInterface>(user))
        llvm::append_range(aliases, user->getResults());
    }
  }
  // Once the temporary is the slot, each write to it is a write to the
  // slot: the slot's old bytes may only be read by the update that first
  // writes the temporary, and the temporary must keep after the copy what
  // the slot received.
  bool tmpTouched = false;
  for (Operation *op = alloc->getNextNode(); op != lastUse->getNextNode();
       op = op->getNextNode()) {
    if (op == copy)
      continue;
    bool beforeCopy = op->isBeforeInBlock(copy);
    bool touchesTmp = false;
    for (const Access &access : accessesOf(op)) {
      if (!access.value)
        return false;
      Origin origin = originOf(access.value);
      if (origin.mayOverlap(temporary)) {
        touchesTmp = true;
        if (!beforeCopy && access.write)
          return false;
      }
      if (!origin.mayOverlap(slot))
        continue;
      if (beforeCopy ? tmpTouched || !isElementwiseUpdate(access, tmp, slot)
                     : access.write)
        return false;
    }
    tmpTouched |= touchesTmp;
  }

  Value view = viewSlot(alloc, alloc.getType(), slotView.getSource(), slot);
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
bool forward(memref::CopyOp copy) {
  Value tmp = copy.getSource();
  auto alloc = tmp.getDefiningOp<memref::AllocOp>();
  auto slotView = copy.getTarget().getDefiningOp<memref::ViewOp>();
  if (!alloc || !slotView || alloc.getType() != slotView.getType())
    return false;
  Origin slot = originOf(slotView);
  if (slot.kind != Origin::Argument ||
      slot.end == std::numeric_limits<int64_t>::max() ||
      slot.root.getType() != slotView.getSource().getType())
    return false;
  Origin temporary = originOf(tmp);
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
    for (const Access &access : accessesOf(op)) {
      if (!access.value) {
        t.unknown = true;
        continue;
      }
      Origin origin = originOf(access.value);
      if (origin.mayOverlap(temporary)) {
        t.unknown |= access.value != tmp;
        (access.write ? t.writesTmp : t.readsTmp) = true;
      }
      if (origin.mayOverlap(slot))
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
  for (const Access &access : accessesOf(writer))
    if (access.value && originOf(access.value).mayOverlap(slot) &&
        !isElementwiseUpdate(access, tmp, slot))
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
  Value slotHere = viewSlot(writer, alloc.getType(), slot.root, slot);
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
    for (memref::CopyOp copy : copies)
      if (elide(copy) || forward(copy))
        ++numElided;
  }
};
} // namespace
