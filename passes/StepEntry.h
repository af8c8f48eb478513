//===- StepEntry.h - the body of an entry point over the arenas -*- C++ -*-===//
//
// gacc-build-step's entry points work on the byte arenas of StepLayout.h:
// they read each slot in place as one tensor, inline the model or its
// gradient function over those tensors, and write results into slots.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_STEPENTRY_H
#define GACC_PASSES_STEPENTRY_H

#include "passes/StepLayout.h"
#include "passes/ZeroCollectives.h"

namespace mlir::gacc {

/// Creates `name(state, batch, io, workspace)` with a C interface at the
/// module's end, the builder at the start of its body. The workspace is
/// empty until gacc-plan-buffers places the step's temporaries in it.
func::FuncOp createStepEntry(OpBuilder &b, ModuleOp module, StringRef name);

/// Builds the body of one entry point: views of the arenas and the tensors
/// read from them.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &b, Location loc, const StepLayout &layout,
               const ZeroCollectives &collectives, func::FuncOp entry)
      : b(b), loc(loc), layout(layout), collectives(collectives),
        state(entry.getArgument(0)), batch(entry.getArgument(1)),
        io(entry.getArgument(2)) {}

  OpBuilder &b;
  Location loc;
  const StepLayout &layout;
  const ZeroCollectives &collectives;
  Value state, batch, io;

  /// The value of `slot` of `arena` at entry, read in place; one tensor per
  /// slot, since `restrict` promises that no other tensor reads the buffer.
  Value read(Value arena, const Slot &slot);
  /// Writes `value` into `slot` in place.
  void write(Value arena, const Slot &slot, Value value);
  /// The slot `name` of the state or io arena, read or written.
  Value readState(StringRef name) { return read(state, stateSlot(name)); }
  void writeState(StringRef name, Value value) {
    write(state, stateSlot(name), value);
  }
  Value readIo(StringRef name) { return read(io, ioSlot(name)); }
  void writeIo(StringRef name, Value value) { write(io, ioSlot(name), value); }

  /// This process's rank as an index (0 on one rank).
  Value rankIndex();

  /// Clones the body of `func` with every gacc.load (nested ones too)
  /// replaced by the slot tensor of its name; a parameter of which the slot
  /// holds a shard (ZeRO-3) is gathered before each use, so that it is
  /// whole only while that op runs. Returns the mapped return operands.
  /// With `training`, dropout draws its masks from the step counter
  /// (combined with the rank and the micro-batch index that gacc-accumulate
  /// put in its counter) and each gacc.assign becomes a write of its value
  /// into the frozen parameter's slot, after everything inlined;
  /// otherwise (evaluation, as model.eval()) dropout is skipped, batch norm
  /// normalizes with its running statistics and assigns are dropped.
  SmallVector<Value> inlineModel(func::FuncOp func, bool training,
                                 int64_t microBatches);

  /// Writes the loss and the model's further results into the io arena.
  void writeOutputs(ArrayRef<Value> results);

private:
  const Slot &stateSlot(StringRef name) const;
  const Slot &ioSlot(StringRef name) const;
  /// The typed view of `slot` in `arena`.
  Value view(Value arena, const Slot &slot);
  /// The parameter of `slot` (held in `slotTensor`) whole in `element` at
  /// `nb`: cast from 16 bits, gathered from this rank's shard (ZeRO-3).
  Value wholeParameter(OpBuilder &nb, Location at, Value slotTensor,
                       const Slot &slot, Type element);
  /// Replaces a load of a parameter that its slot keeps in 16 bits or as a
  /// shard by a whole parameter before each use.
  void replaceLoadBeforeUses(LoadOp load, Value slotTensor, const Slot &slot,
                             SmallVectorImpl<Value> &results);
  /// Seeds a training dropout from the step counter (and the micro-batch
  /// index, and the rank).
  void seedDropout(DropoutOp dropout, Value stepCounter, Value rankTensor,
                   int64_t microBatches);

  DenseMap<std::pair<const void *, int64_t>, Value> tensors;
};

} // namespace mlir::gacc

#endif // GACC_PASSES_STEPENTRY_H
