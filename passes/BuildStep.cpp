//===- BuildStep.cpp - the compiled entry points of a training step ---------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "passes/StepLayout.h"
#include "passes/Zero.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_BUILDSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Builds the body of one entry point: views of the arenas and the tensors
/// read from them.
struct EntryBuilder {
  EntryBuilder(OpBuilder &b, Location loc, const StepLayout &layout,
               int64_t ranks, func::FuncOp entry)
      : b(b), loc(loc), layout(layout), ranks(ranks),
        state(entry.getArgument(0)), batch(entry.getArgument(1)),
        io(entry.getArgument(2)) {}

  OpBuilder &b;
  Location loc;
  const StepLayout &layout;
  int64_t ranks;
  Value state, batch, io;
  DenseMap<std::pair<const void *, int64_t>, Value> tensors;

  /// The typed view of `slot` in `arena`.
  Value view(Value arena, const Slot &slot) {
    Value offset = arith::ConstantIndexOp::create(b, loc, slot.offset);
    auto type = MemRefType::get(slot.type.getShape(),
                                slot.type.getElementType());
    return memref::ViewOp::create(b, loc, type, arena, offset, ValueRange{});
  }
  /// The value of `slot` at entry, read in place; one tensor per slot,
  /// since `restrict` promises that no other tensor reads the buffer.
  Value read(Value arena, const Slot &slot) {
    Value &tensor = tensors[{arena.getAsOpaquePointer(), slot.offset}];
    if (!tensor)
      tensor = bufferization::ToTensorOp::create(
          b, loc, slot.type, view(arena, slot), /*restrict=*/true,
          /*writable=*/true);
    return tensor;
  }
  /// Writes `value` into `slot` in place.
  void write(Value arena, const Slot &slot, Value value) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, value, view(arena, slot));
    store.setRestrict(true);
    store.setWritable(true);
  }

  /// This process's rank as an index (0 on one rank).
  Value rankIndex() {
    if (ranks == 1)
      return arith::ConstantIndexOp::create(b, loc, 0);
    Value rank = tensor::ExtractOp::create(
        b, loc, read(io, *layout.io.find(kRankSlot)), ValueRange{});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
  }

  /// Clones the body of `func` with every gacc.load (nested ones too)
  /// replaced by the slot tensor of its name; a parameter of which the slot
  /// holds a shard (ZeRO-3) is all-gathered before each use, so that it is
  /// whole only while that op runs. Returns the mapped return operands.
  /// With `training`, dropout draws its masks from the step counter
  /// (combined with the rank and the micro-batch index that gacc-accumulate
  /// put in its counter); otherwise it is skipped (evaluation, as
  /// model.eval()).
  SmallVector<Value> inlineModel(func::FuncOp func, bool training,
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
    func.walk([&](LossScaleOp) {
      lossScale = read(state, *layout.state.find(kLossScaleSlot));
    });
    Value stepCounter =
        training ? read(io, *layout.io.find("step")) : Value();
    Value rankTensor = training && ranks > 1
                           ? read(io, *layout.io.find(kRankSlot))
                           : Value();

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
      root->walk<WalkOrder::PostOrder, mlir::ReverseIterator>([&](Operation *op) {
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
        if (isa<LoadOp, DropoutOp, LossScaleOp>(op))
          rewrites.push_back(op);
      });
    for (Operation *op : rewrites) {
      if (auto load = dyn_cast<LoadOp>(op)) {
        Value slotTensor = slots[load.getName()];
        const Slot *slot = layout.state.find(load.getName());
        bool plain = !slot || (!slot->unsharded &&
                               slot->type.getElementType() ==
                                   load.getType().getElementType());
        if (plain) {
          replaceValue(results, load.getResult(), slotTensor);
          load.replaceAllUsesWith(slotTensor);
          load.erase();
          continue;
        }
        // The parameter whole in `element` at `nb`: its slot holds it in 16
        // bits (mixed precision) or a shard (ZeRO-3), which is gathered
        // before each read, so that it is whole only while that op runs.
        auto whole = [&](OpBuilder &nb, Type element) {
          Value value = slotTensor;
          auto type = cast<RankedTensorType>(value.getType());
          if (type.getElementType() != element)
            value = CastOp::create(nb, load.getLoc(), type.clone(element),
                                   value);
          if (slot->unsharded)
            value = buildAllGather(nb, load.getLoc(), value,
                                   RankedTensorType(slot->unsharded).clone(element), ranks);
          return value;
        };
        for (OpOperand &use : llvm::make_early_inc_range(load->getUses())) {
          // A 16-bit copy is read (and gathered) in 16 bits, as DeepSpeed
          // gathers fp16 parameters.
          if (auto copy = dyn_cast<CastOp>(use.getOwner());
              copy && !llvm::is_contained(results, copy.getResult())) {
            for (OpOperand &read :
                 llvm::make_early_inc_range(copy->getUses())) {
              OpBuilder nb(read.getOwner());
              read.set(whole(nb, copy.getType().getElementType()));
            }
            copy.erase();
            continue;
          }
          OpBuilder nb(use.getOwner());
          use.set(whole(nb, load.getType().getElementType()));
        }
        if (llvm::is_contained(results, load.getResult()))
          replaceValue(results, load.getResult(),
                       whole(b, load.getType().getElementType()));
        load.erase();
        continue;
      }
      if (auto scaleOp = dyn_cast<LossScaleOp>(op)) {
        OpBuilder nb(scaleOp);
        Value scale = lossScale;
        if (scale.getType() != scaleOp.getType())
          scale = CastOp::create(nb, scaleOp.getLoc(), scaleOp.getType(),
                                 scale);
        scaleOp.replaceAllUsesWith(scale);
        scaleOp.erase();
        continue;
      }
      auto dropout = cast<DropoutOp>(op);
      if (!training) {
        replaceValue(results, dropout.getResult(), dropout.getInput());
        dropout.replaceAllUsesWith(dropout.getInput());
        dropout.erase();
        continue;
      }
      Value counter = stepCounter;
      if (Value microBatch = dropout.getCounter()) {
        // Micro-batch k of rank r of step s draws stream s·N·K + r·K + k:
        // the streams of one rank running all N·K micro-batches.
        OpBuilder nb(dropout);
        Location loc = dropout.getLoc();
        auto i64 = [&](int64_t value) {
          return arith::ConstantIntOp::create(nb, loc, nb.getI64Type(), value);
        };
        Value s = tensor::ExtractOp::create(nb, loc, stepCounter, ValueRange{});
        Value k = tensor::ExtractOp::create(nb, loc, microBatch, ValueRange{});
        Value stream = arith::AddIOp::create(
            nb, loc, arith::MulIOp::create(nb, loc, s, i64(ranks * microBatches)),
            k);
        if (ranks > 1) {
          Value r = tensor::ExtractOp::create(nb, loc, rankTensor, ValueRange{});
          stream = arith::AddIOp::create(
              nb, loc, stream,
              arith::MulIOp::create(nb, loc, r, i64(microBatches)));
        }
        counter = tensor::FromElementsOp::create(
            nb, loc, stepCounter.getType(), ValueRange{stream});
      }
      dropout.getCounterMutable().assign(counter);
    }
    return results;
  }

  /// Keeps `values` pointing at live values when `from` is replaced.
  static void replaceValue(SmallVectorImpl<Value> &values, Value from,
                           Value to) {
    for (Value &value : values)
      if (value == from)
        value = to;
  }

  void writeOutputs(ArrayRef<Value> results) {
    write(io, *layout.io.find("loss"), results[0]);
    for (size_t i = 1; i < results.size(); ++i)
      if (const Slot *slot = layout.io.find("output." + std::to_string(i)))
        write(io, *slot, results[i]);
  }
};

struct BuildStepPass : public gacc::impl::BuildStepBase<BuildStepPass> {
  using BuildStepBase::BuildStepBase;
  void runOnOperation() override;
};
} // namespace

/// Creates `name(state, batch, io, workspace)` with a C interface at the
/// module's end. The workspace is empty until gacc-plan-buffers places the
/// step's temporaries in it.
static func::FuncOp createEntry(OpBuilder &b, ModuleOp module, StringRef name) {
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

/// The optimizer update of one parameter; returns the new parameter and
/// writes the new optimizer state. With `finite` (loss scaling), a step
/// whose gradients hold an infinity or NaN keeps the old state.
static Value buildUpdate(TensorMath &m, EntryBuilder &entry, Attribute optimizer,
                         StringRef name, Value param, Value grad,
                         ArrayRef<Value> hyper, Value finite) {
  const ArenaLayout &state = entry.layout.state;
  auto slotOf = [&](StringRef kind) {
    return state.find((kind + "." + name).str());
  };
  auto guard = [&](Value updated, Value old) {
    return finite ? m.select(finite, updated, old) : updated;
  };
  if (auto sgd = dyn_cast<SGDAttr>(optimizer)) {
    double momentum = sgd.getMomentum().convertToDouble();
    double weightDecay = sgd.getWeightDecay().convertToDouble();
    if (weightDecay != 0.0)
      grad = m.add(grad, m.mul(param, m.c(weightDecay)));
    if (momentum != 0.0) {
      const Slot *slot = slotOf("momentum_buffer");
      Value old = entry.read(entry.state, *slot);
      Value buffer =
          guard(m.add(m.mul(old, hyper[1]), m.mul(grad, hyper[2])), old);
      entry.write(entry.state, *slot, buffer);
      grad = sgd.getNesterov() ? m.add(grad, m.mul(buffer, m.c(momentum)))
                               : buffer;
    }
    return guard(m.sub(param, m.mul(grad, hyper[0])), param);
  }
  // AdamW as torch.optim.AdamW (single-tensor path).
  auto adamw = cast<AdamWAttr>(optimizer);
  double beta1 = adamw.getBeta1().convertToDouble();
  double beta2 = adamw.getBeta2().convertToDouble();
  const Slot *avgSlot = slotOf("exp_avg"), *sqSlot = slotOf("exp_avg_sq");
  Value oldAvg = entry.read(entry.state, *avgSlot);
  Value oldSq = entry.read(entry.state, *sqSlot);
  Value decayed = m.mul(param, hyper[0]);
  // The update reads the guarded moments, so that each is computed in its
  // slot (a skipped step discards the update anyway).
  Value avg = guard(
      m.add(oldAvg, m.mul(m.sub(grad, oldAvg), m.c(1.0 - beta1))), oldAvg);
  // (1-β2)·g·g in torch's addcmul order; also keeps CSE from sharing g·g
  // with the gradient norm, which would keep a gradient-sized temporary
  // per parameter alive from the norm to the update.
  Value sq = guard(m.add(m.mul(oldSq, m.c(beta2)),
                         m.mul(m.mul(m.c(1.0 - beta2), grad), grad)),
                   oldSq);
  entry.write(entry.state, *avgSlot, avg);
  entry.write(entry.state, *sqSlot, sq);
  Value denom = m.add(m.div(m.sqrt(sq), hyper[2]),
                      m.c(adamw.getEps().convertToDouble()));
  return guard(m.sub(decayed, m.mul(m.div(avg, denom), hyper[1])), param);
}

/// Dynamic loss scaling, as GradScaler.unscale_: divides the (scaled)
/// gradients by the loss scale, but those `keepScaled` marks. Each gradient
/// is unscaled where it is computed, so that the unscaled one is what lands
/// in its slot and no scaled copy of all gradients lives until the end of
/// the backward pass. Returns 1 / scale.
static Value buildUnscale(TensorMath &m, EntryBuilder &entry,
                          MutableArrayRef<Value> grads,
                          ArrayRef<bool> keepScaled) {
  OpBuilder &b = m.b;
  OpBuilder::InsertPoint end = b.saveInsertionPoint();
  Value scale = entry.read(entry.state, *entry.layout.state.find(kLossScaleSlot));
  b.setInsertionPointAfterValue(scale);
  Value inverse = m.div(m.c(1.0), scale);
  Operation *inverseOp = inverse.getDefiningOp();
  for (auto [grad, scaled] : llvm::zip_equal(grads, keepScaled)) {
    if (scaled)
      continue;
    Operation *def = grad.getDefiningOp();
    // After both (a gradient may be the scale itself, or come before it).
    if (def && def->getBlock() == inverseOp->getBlock() &&
        inverseOp->isBeforeInBlock(def))
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointAfter(inverseOp);
    grad = m.mul(grad, inverse);
  }
  b.restoreInsertionPoint(end);
  return inverse;
}

/// sum(g·0): 0 when every element of g is finite, NaN otherwise (the
/// overflow probe of dynamic loss scaling), computed in f32 (widening is
/// exact; 16-bit arithmetic on the CPU is not native).
static Value buildFiniteProbe(TensorMath &m, Value grad) {
  auto type = cast<RankedTensorType>(grad.getType());
  if (type.getElementType() != m.element)
    grad = CastOp::create(m.b, m.loc, type.clone(m.element), grad);
  return m.sumAll(m.mul(grad, m.c(0.0)));
}

/// GradScaler.update: after an overflow, back off and restart the count of
/// good steps; after `growth_interval` good steps in a row, grow.
static void buildLossScaleUpdate(TensorMath &m, EntryBuilder &entry,
                                 LossScaleAttr config, Value finite) {
  const Slot &scaleSlot = *entry.layout.state.find(kLossScaleSlot);
  const Slot &trackerSlot = *entry.layout.state.find(kGrowthTrackerSlot);
  Value scale = entry.read(entry.state, scaleSlot);
  Value good = m.add(entry.read(entry.state, trackerSlot), m.c(1.0));
  Value grow = m.compare(ComparePredicate::ge, good,
                         m.c(static_cast<double>(config.getGrowthInterval())));
  Value grown = m.mul(scale, m.c(config.getGrowthFactor().convertToDouble()));
  Value backedOff =
      m.mul(scale, m.c(config.getBackoffFactor().convertToDouble()));
  entry.write(entry.state, scaleSlot,
              m.select(finite, m.select(grow, grown, scale), backedOff));
  entry.write(entry.state, trackerSlot,
              m.select(finite, m.select(grow, m.c(0.0), good), m.c(0.0)));
  entry.write(entry.io, *entry.layout.io.find(kFoundInfSlot),
              m.select(finite, m.c(0.0), m.c(1.0)));
}

void BuildStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  TrainStepOp step = TrainStepOp::find(module, stepName);
  if (!step)
    return signalPassFailure();
  FailureOr<StepLayout> layout = computeStepLayout(step);
  if (failed(layout))
    return signalPassFailure();
  func::FuncOp model = step.getModelFunc();
  func::FuncOp grad = step.getGradientFunc();
  if (!grad) {
    step.emitOpError("has no gradient function: run gacc-autodiff (and "
                     "gacc-accumulate for micro-batches) first");
    return signalPassFailure();
  }
  if (!step.getEffectiveLossScale()) {
    WalkResult scaled = grad.walk([&](LossScaleOp op) {
      op.emitOpError("reads the loss scale, but step '")
          << step.getSymName()
          << "' has no loss scaling (precision f16 or a loss_scale attribute)";
      return WalkResult::interrupt();
    });
    if (scaled.wasInterrupted())
      return signalPassFailure();
  }
  SmallVector<ParamOp> params(module.getOps<ParamOp>());
  Location loc = step.getLoc();
  OpBuilder b(module.getContext());

  // gacc_step: forward, backward, norm, clipping, update.
  ZeroAttr zero = step.getEffectiveZero();
  int64_t ranks = zero.getRanks();
  func::FuncOp stepFunc = createEntry(b, module, "gacc_step");
  EntryBuilder entry(b, loc, *layout, ranks, stepFunc);
  SmallVector<Value> results =
      entry.inlineModel(grad, /*training=*/true, step.getAccumulationSteps());
  size_t numOutputs = model.getNumResults();
  // This rank's share of the gradients (all of them on one rank).
  SmallVector<Value> grads(ArrayRef<Value>(results).drop_front(numOutputs));
  TensorMath m{b, loc, layout->element};
  LossScaleAttr lossScale = step.getEffectiveLossScale();
  // A 16-bit parameter's gradient slot is 16-bit too; with loss scaling it
  // keeps the scaled gradient (in f16 an unscaled one would underflow), as
  // DeepSpeed's fp16 gradients do, and the update unscales what it reads.
  SmallVector<const Slot *> gradSlots;
  SmallVector<bool> lowGrad;
  for (ParamOp param : params) {
    gradSlots.push_back(
        layout->state.find(("grad." + param.getSymName()).str()));
    lowGrad.push_back(gradSlots.back()->type.getElementType() !=
                      layout->element);
  }
  Value inverse = lossScale ? buildUnscale(m, entry, grads, lowGrad) : Value();
  // gacc-accumulate normalized every rank's loss and gradients by the
  // global count: their sums over the ranks are the full batch's.
  if (ranks > 1)
    results[0] = AllReduceOp::create(b, loc, results[0],
                                     CollectiveReduction::sum, ranks);
  entry.writeOutputs(ArrayRef<Value>(results).take_front(numOutputs));

  // Each gradient as soon as the backward has computed it (as DDP's and
  // DeepSpeed's buckets are): reduced once per step to the whole summed
  // gradient (stage 0) or this rank's shard of it (stages 1-3); kept in its
  // slot (stage 1: the rank's own whole gradient); its squares and overflow
  // probe taken. A 16-bit slot is then all the update reads, so that no f32
  // gradient waits from the backward to the update.
  SmallVector<Value> forUpdate, stored, squareTerms, probeTerms;
  bool keepsLocal = shardsOptimizerState(zero) && !shardsGradients(zero);
  OpBuilder::InsertPoint end = b.saveInsertionPoint();
  for (auto [param, g, slot, low] :
       llvm::zip_equal(params, grads, gradSlots, lowGrad)) {
    // After the gradient and 1 / scale, whichever comes later.
    Operation *last = nullptr;
    for (Value after : {g, inverse})
      if (Operation *def = after ? after.getDefiningOp() : nullptr;
          def && def->getBlock() == end.getBlock() &&
          (!last || last->isBeforeInBlock(def)))
        last = def;
    if (last)
      b.setInsertionPointAfter(last);
    // (gacc-accumulate may have reduced every micro-batch's already: then
    // the gradient is this rank's shard, not of the parameter's type.)
    bool reduced = g.getType() != param.getTensorType();
    Value r = g;
    if (!reduced && shardsOptimizerState(zero))
      r = buildReduceScatter(b, loc, g, ranks);
    else if (!reduced && ranks > 1)
      r = AllReduceOp::create(b, loc, g, CollectiveReduction::sum, ranks);
    auto toSlotType = [&](Value value) -> Value {
      if (!low)
        return value;
      return CastOp::create(b, loc,
                            cast<RankedTensorType>(value.getType())
                                .clone(slot->type.getElementType()),
                            value);
    };
    Value kept = toSlotType(keepsLocal ? g : r);
    entry.write(entry.state, *slot, kept);
    Value unscaled = low && inverse ? m.mul(r, inverse) : r;
    squareTerms.push_back(m.sumAll(m.mul(unscaled, unscaled)));
    // The update reads the gradient as its slot keeps it (stage 1: the
    // reduced shard rounded alike).
    Value rounded = low ? (keepsLocal ? toSlotType(r) : kept) : Value();
    if (lossScale)
      probeTerms.push_back(buildFiniteProbe(m, low ? rounded : r));
    forUpdate.push_back(low ? Value() : unscaled);
    stored.push_back(rounded);
    b.restoreInsertionPoint(end);
  }
  Value squares = m.c(0.0), probe = m.c(0.0);
  for (Value term : squareTerms)
    squares = m.add(squares, term);
  for (Value term : probeTerms)
    probe = m.add(probe, term);
  auto overRanks = [&](Value scalar) -> Value {
    if (!shardsOptimizerState(zero) || ranks == 1)
      return scalar;
    return AllReduceOp::create(b, loc, scalar, CollectiveReduction::sum,
                               ranks);
  };
  Value finite =
      lossScale ? m.compare(ComparePredicate::eq, overRanks(probe), m.c(0.0))
                : Value();
  Value hyperTensor = entry.read(entry.io, *layout->io.find("hyper"));
  SmallVector<Value> hyper;
  for (int64_t i = 0; i < kHyperCount; ++i)
    hyper.push_back(
        buildReshape(b, loc, buildSlice(b, loc, hyperTensor, {i}, {1}), {}));

  Value norm = m.sqrt(overRanks(squares));
  entry.write(entry.io, *layout->io.find("grad_norm"), norm);
  Value clip;
  if (std::optional<APFloat> maxNorm = step.getGradClipNorm()) {
    // torch.nn.utils.clip_grad_norm_: scale by min(1, max / (norm + 1e-6)).
    Value coef = m.div(m.c(maxNorm->convertToDouble()),
                       m.add(norm, m.c(1e-6)));
    clip = m.select(m.compare(ComparePredicate::lt, coef, m.c(1.0)), coef,
                    m.c(1.0));
  }
  Value rank = shardsOptimizerState(zero) && !shardsParameters(zero)
                   ? entry.rankIndex()
                   : Value();
  for (auto [param, g, kept] : llvm::zip_equal(params, forUpdate, stored)) {
    // `kept`: a 16-bit gradient, which `g` (null then) is read back from.
    const Slot &paramSlot = *layout->state.find(param.getSymName());
    if (!g) {
      // Read back from the 16-bit slot (and unscaled); the barrier keeps
      // CSE from reusing the backward's f32 value instead, which would keep
      // it alive until here.
      auto type = cast<RankedTensorType>(kept.getType());
      Value slotValue =
          OptimizationBarrierOp::create(b, loc, TypeRange{type}, ValueRange{kept})
              .getResult(0);
      g = CastOp::create(b, loc, type.clone(layout->element), slotValue);
      if (inverse)
        g = m.mul(g, inverse);
    }
    Value used = clip ? m.mul(g, clip) : g;
    // The f32 weights the optimizer updates: the parameter's own, or the
    // master weights of a 16-bit parameter (whole, or this rank's shard).
    const Slot *master =
        layout->state.find((kMasterPrefix + param.getSymName()).str());
    Value current = entry.read(entry.state, master ? *master : paramSlot);
    if (rank && !master)
      current = buildLocalShard(b, loc, current, rank, ranks);
    Value updated = buildUpdate(m, entry, step.getOptimizer(),
                                param.getSymName(), current, used, hyper,
                                finite);
    if (master) {
      entry.write(entry.state, *master, updated);
      auto type = cast<RankedTensorType>(updated.getType());
      updated = CastOp::create(
          b, loc, type.clone(paramSlot.type.getElementType()), updated);
    }
    // Stages 1 and 2: every rank gets the whole updated parameter.
    if (rank)
      updated = buildAllGather(
          b, loc, updated,
          param.getTensorType().clone(paramSlot.type.getElementType()), ranks);
    entry.write(entry.state, paramSlot, updated);
  }
  if (lossScale)
    buildLossScaleUpdate(m, entry, lossScale, finite);
  func::ReturnOp::create(b, loc);

  // gacc_eval: the forward pass.
  func::FuncOp evalFunc = createEntry(b, module, "gacc_eval");
  EntryBuilder evalEntry(b, loc, *layout, ranks, evalFunc);
  SmallVector<Value> evalResults =
      evalEntry.inlineModel(model, /*training=*/false, /*microBatches=*/1);
  // Every rank's loss is over its examples: their mean is the batch's
  // (exactly, but for token_mean over unequal numbers of targets), their
  // sum for a sum.
  if (ranks > 1) {
    Operation *lossOp =
        model.getBody().front().getTerminator()->getOperand(0).getDefiningOp();
    auto ce = dyn_cast_or_null<CrossEntropyOp>(lossOp);
    auto mse = dyn_cast_or_null<MseLossOp>(lossOp);
    bool sum = (ce && ce.getReduction() == LossReduction::sum) ||
               (mse && mse.getReduction() == LossReduction::sum);
    evalResults[0] = AllReduceOp::create(
        b, loc, evalResults[0],
        sum ? CollectiveReduction::sum : CollectiveReduction::mean, ranks);
  }
  evalEntry.writeOutputs(evalResults);
  func::ReturnOp::create(b, loc);

  // Only the entry points remain.
  for (Operation &op : llvm::make_early_inc_range(module.getOps()))
    if (&op != stepFunc && &op != evalFunc)
      op.erase();
}
