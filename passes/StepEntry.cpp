//===- StepEntry.cpp - the body of an entry point over the arenas ---------===//

#include "passes/StepEntry.h"
#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"

using namespace mlir;
using namespace mlir::gacc;

func::FuncOp gacc::createStepEntry(OpBuilder &b, ModuleOp module,
                                   StringRef name) {
  b.setInsertionPointToEnd(module.getBody());
  auto arena = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  auto func = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType({arena, arena, arena, arena}, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  for (auto [i, role] : llvm::enumerate(kArenaRoles))
    func.setArgAttr(i, kArenaAttrName, b.getStringAttr(role));
  b.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

const Slot &EntryBuilder::stateSlot(StringRef name) const {
  const Slot *slot = layout.state.find(name);
  assert(slot && "no such slot in the state arena");
  return *slot;
}

const Slot &EntryBuilder::ioSlot(StringRef name) const {
  const Slot *slot = layout.io.find(name);
  assert(slot && "no such slot in the io arena");
  return *slot;
}

Value EntryBuilder::view(Value arena, const Slot &slot) {
  Value offset = arith::ConstantIndexOp::create(b, loc, slot.offset);
  auto type =
      MemRefType::get(slot.type.getShape(), slot.type.getElementType());
  return memref::ViewOp::create(b, loc, type, arena, offset, ValueRange{});
}

Value EntryBuilder::read(Value arena, const Slot &slot) {
  Value &tensor = tensors[{arena.getAsOpaquePointer(), slot.offset}];
  if (!tensor)
    tensor = bufferization::ToTensorOp::create(
        b, loc, slot.type, view(arena, slot), /*restrict=*/true,
        /*writable=*/true);
  return tensor;
}

void EntryBuilder::write(Value arena, const Slot &slot, Value value) {
  auto store = bufferization::MaterializeInDestinationOp::create(
      b, loc, value, view(arena, slot));
  store.setRestrict(true);
  store.setWritable(true);
}

Value EntryBuilder::rankIndex() {
  if (collectives.getRanks() == 1)
    return arith::ConstantIndexOp::create(b, loc, 0);
  Value rank =
      tensor::ExtractOp::create(b, loc, readIo(kRankSlot), ValueRange{});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
}

/// Keeps `values` pointing at live values when `from` is replaced.
static void replaceValue(SmallVectorImpl<Value> &values, Value from,
                         Value to) {
  for (Value &value : values)
    if (value == from)
      value = to;
}

Value EntryBuilder::wholeParameter(OpBuilder &nb, Location at,
                                   Value slotTensor, const Slot &slot,
                                   Type element) {
  Value value = slotTensor;
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() != element)
    value = CastOp::create(nb, at, type.clone(element), value);
  if (slot.unsharded)
    value = collectives.gather(nb, at, value,
                               RankedTensorType(slot.unsharded).clone(element));
  return value;
}

void EntryBuilder::replaceLoadBeforeUses(LoadOp load, Value slotTensor,
                                         const Slot &slot,
                                         SmallVectorImpl<Value> &results) {
  Type element = load.getType().getElementType();
  for (OpOperand &use : llvm::make_early_inc_range(load->getUses())) {
    // A 16-bit copy is read (and gathered) in 16 bits, as DeepSpeed
    // gathers fp16 parameters.
    if (auto copy = dyn_cast<CastOp>(use.getOwner());
        copy && !llvm::is_contained(results, copy.getResult())) {
      for (OpOperand &read : llvm::make_early_inc_range(copy->getUses())) {
        OpBuilder nb(read.getOwner());
        read.set(wholeParameter(nb, load.getLoc(), slotTensor, slot,
                                copy.getType().getElementType()));
      }
      copy.erase();
      continue;
    }
    OpBuilder nb(use.getOwner());
    use.set(wholeParameter(nb, load.getLoc(), slotTensor, slot, element));
  }
  if (llvm::is_contained(results, load.getResult()))
    replaceValue(results, load.getResult(),
                 wholeParameter(b, load.getLoc(), slotTensor, slot, element));
  load.erase();
}

void EntryBuilder::seedDropout(DropoutOp dropout, Value stepCounter,
                               Value rankTensor, int64_t microBatches) {
  Value counter = stepCounter;
  if (Value microBatch = dropout.getCounter()) {
    // Micro-batch k of rank r of step s draws stream s·N·K + r·K + k: the
    // streams of one rank running all N·K micro-batches.
    int64_t ranks = collectives.getRanks();
    OpBuilder nb(dropout);
    Location at = dropout.getLoc();
    auto i64 = [&](int64_t value) {
      return arith::ConstantIntOp::create(nb, at, nb.getI64Type(), value);
    };
    Value s = tensor::ExtractOp::create(nb, at, stepCounter, ValueRange{});
    Value k = tensor::ExtractOp::create(nb, at, microBatch, ValueRange{});
    Value stream = arith::AddIOp::create(
        nb, at, arith::MulIOp::create(nb, at, s, i64(ranks * microBatches)),
        k);
    if (ranks > 1) {
      Value r = tensor::ExtractOp::create(nb, at, rankTensor, ValueRange{});
      stream = arith::AddIOp::create(
          nb, at, stream, arith::MulIOp::create(nb, at, r, i64(microBatches)));
    }
    counter = tensor::FromElementsOp::create(nb, at, stepCounter.getType(),
                                             ValueRange{stream});
  }
  dropout.getCounterMutable().assign(counter);
}

SmallVector<Value> EntryBuilder::inlineModel(func::FuncOp func, bool training,
                                             int64_t microBatches) {
  // Read every slot the function loads up front, so the tensors dominate
  // their uses wherever the loads sit.
  llvm::StringMap<Value> slots;
  func.walk([&](LoadOp load) {
    const Slot *slot = layout.state.find(load.getName());
    slots[load.getName()] =
        slot ? read(state, *slot)
             : read(batch, *layout.batch.find(load.getName()));
  });
  Value lossScale;
  func.walk([&](LossScaleOp) { lossScale = readState(kLossScaleSlot); });
  Value stepCounter = training ? readIo("step") : Value();
  Value rankTensor =
      training && collectives.getRanks() > 1 ? readIo(kRankSlot) : Value();

  IRMapping mapping;
  SmallVector<Value> results;
  SmallVector<Operation *> cloned;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        results.push_back(mapping.lookupOrDefault(v));
      break;
    }
    cloned.push_back(b.clone(op, mapping));
  }
  // Drop what the results do not need (such as the gradient of the first
  // layer's input) before loads become collectives, which stay once made.
  for (Operation *root : llvm::reverse(cloned))
    root->walk<WalkOrder::PostOrder, mlir::ReverseIterator>(
        [&](Operation *op) {
          if (isOpTriviallyDead(op) &&
              llvm::none_of(op->getResults(), [&](Value result) {
                return llvm::is_contained(results, result);
              })) {
            llvm::erase(cloned, op);
            op->erase();
          }
        });
  SmallVector<Operation *> rewrites;
  for (Operation *root : cloned)
    root->walk([&](Operation *op) {
      if (isa<LoadOp, DropoutOp, LossScaleOp, AssignOp, BatchNormOp>(op))
        rewrites.push_back(op);
    });
  // A training step writes each assigned value into its parameter's slot
  // after everything inlined here, so that every read of the old value
  // comes first; evaluation assigns nothing.
  SmallVector<std::pair<const Slot *, Value>> assigned;
  for (Operation *op : rewrites) {
    if (auto assign = dyn_cast<AssignOp>(op)) {
      if (training)
        assigned.push_back({&stateSlot(assign.getName()), assign.getValue()});
      assign.erase();
      continue;
    }
    if (auto norm = dyn_cast<BatchNormOp>(op)) {
      // Evaluation normalizes with the running statistics (model.eval()).
      if (!training)
        norm.setInference(true);
      continue;
    }
    if (auto load = dyn_cast<LoadOp>(op)) {
      Value slotTensor = slots[load.getName()];
      const Slot *slot = layout.state.find(load.getName());
      // A parameter whose slot holds it in 16 bits (mixed precision) or a
      // shard (ZeRO-3) is made whole before each read, so that it is whole
      // only while that op runs.
      if (slot && (slot->unsharded || slot->type.getElementType() !=
                                          load.getType().getElementType())) {
        replaceLoadBeforeUses(load, slotTensor, *slot, results);
        continue;
      }
      replaceValue(results, load.getResult(), slotTensor);
      load.replaceAllUsesWith(slotTensor);
      load.erase();
      continue;
    }
    if (auto scaleOp = dyn_cast<LossScaleOp>(op)) {
      OpBuilder nb(scaleOp);
      Value scale = lossScale;
      if (scale.getType() != scaleOp.getType())
        scale =
            CastOp::create(nb, scaleOp.getLoc(), scaleOp.getType(), scale);
      scaleOp.replaceAllUsesWith(scale);
      scaleOp.erase();
      continue;
    }
    auto dropout = cast<DropoutOp>(op);
    if (training) {
      seedDropout(dropout, stepCounter, rankTensor, microBatches);
      continue;
    }
    replaceValue(results, dropout.getResult(), dropout.getInput());
    dropout.replaceAllUsesWith(dropout.getInput());
    dropout.erase();
  }
  for (auto [slot, value] : assigned)
    write(state, *slot, value);
  return results;
}

void EntryBuilder::writeOutputs(ArrayRef<Value> results) {
  writeIo("loss", results[0]);
  for (size_t i = 1; i < results.size(); ++i)
    if (const Slot *slot = layout.io.find("output." + std::to_string(i)))
      write(io, *slot, results[i]);
}
