//===- Remat.cpp - recompute forward values in the backward -----------------===//
//
// A gradient function from gacc-autodiff is its forward ops, then its
// backward ops. A policy chooses the forward values the backward may keep
// (saved); every other forward value the backward reads is recomputed by
// cloning its defining op, recursively, down to saved values (through an
// optimization barrier), parameters, inputs and constants.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include <cmath>

namespace mlir::gacc {
#define GEN_PASS_DEF_REMAT
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// Loads and ops without operands (constants, masks) are never recomputed
/// nor counted: they are state, inputs or cheap.
bool isLeaf(Operation *op) {
  return isa<LoadOp>(op) || op->getNumOperands() == 0;
}

int64_t bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// Estimated flops: 2·M·N·K for a matmul, one per result element otherwise.
double flopsOf(Operation *op) {
  double elements = 0;
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType()))
      elements += static_cast<double>(type.getNumElements());
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    ArrayRef<int64_t> lhs = matmul.getLhs().getType().getShape();
    int64_t k = matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
    return 2.0 * elements * static_cast<double>(k);
  }
  return elements;
}

/// Which forward values `policy` saves, by the segment each forward op is
/// in: values used in a later segment, and the whole last segment.
class SavedSet {
public:
  SavedSet(ArrayRef<Operation *> forward) : forward(forward) {
    for (auto [i, op] : llvm::enumerate(forward))
      position[op] = static_cast<int64_t>(i);
  }

  LogicalResult choose(func::FuncOp grad, RematPolicy policy) {
    SmallVector<int64_t> segment(forward.size(), 0);
    switch (policy) {
    case RematPolicy::none:
      // Only gacc.remat = "recompute" overrides recompute anything.
      for (Operation *op : forward)
        saved.insert(op->getResults().begin(), op->getResults().end());
      return success();
    case RematPolicy::matmuls:
      for (Operation *op : forward)
        if (isa<MatmulOp>(op))
          saved.insert(op->getResults().begin(), op->getResults().end());
      return success();
    case RematPolicy::blocks: {
      int64_t current = 0;
      for (auto [i, op] : llvm::enumerate(forward)) {
        if (auto checkpoint = dyn_cast<CheckpointOp>(op)) {
          ++current;
          saved.insert(checkpoint.getResult());
        }
        segment[i] = current;
      }
      if (current == 0)
        return grad.emitError("remat policy 'blocks' needs gacc.checkpoint "
                              "ops marking the inputs of the blocks");
      break;
    }
    case RematPolicy::sqrt: {
      // ~√n segments of equal activation bytes (Chen et al. 2016).
      int64_t total = 0, count = 0;
      for (Operation *op : forward)
        if (!isLeaf(op)) {
          ++count;
          for (Value result : op->getResults())
            total += bytesOf(result);
        }
      int64_t segments = std::max<int64_t>(
          1, std::llround(std::sqrt(static_cast<double>(count))));
      int64_t before = 0;
      for (auto [i, op] : llvm::enumerate(forward)) {
        segment[i] = total == 0 ? 0
                                : std::min(segments - 1,
                                           before * segments / total);
        if (!isLeaf(op))
          for (Value result : op->getResults())
            before += bytesOf(result);
      }
      break;
    }
    case RematPolicy::budget:
      return grad.emitError("remat policy 'budget' is not supported yet: "
                            "use blocks, sqrt or matmuls");
    }
    int64_t last = forward.empty() ? 0 : segment.back();
    for (auto [i, op] : llvm::enumerate(forward))
      for (Value result : op->getResults()) {
        bool crosses = llvm::any_of(result.getUsers(), [&](Operation *user) {
          auto it = position.find(user);
          return it != position.end() && segment[it->second] > segment[i];
        });
        if (segment[i] == last || crosses)
          saved.insert(result);
      }
    return success();
  }

  /// The `gacc.remat` overrides of individual ops.
  LogicalResult applyOverrides() {
    for (Operation *op : forward) {
      auto choice = op->getAttrOfType<StringAttr>(kRematAttrName);
      if (!choice)
        continue;
      if (choice.getValue() == "save")
        saved.insert(op->getResults().begin(), op->getResults().end());
      else if (choice.getValue() == "recompute")
        for (Value result : op->getResults())
          saved.remove(result);
      else
        return op->emitOpError("has gacc.remat = ")
               << choice << "; expected \"save\" or \"recompute\"";
    }
    return success();
  }

  ArrayRef<Operation *> forward;
  DenseMap<Operation *, int64_t> position;
  llvm::SetVector<Value> saved;
};

/// Clones forward ops into the backward, memoized.
class Recomputer {
public:
  Recomputer(const SavedSet &plan, RematReport &report)
      : plan(plan), report(report) {}

  Value get(OpBuilder &b, Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !plan.position.count(def) || isLeaf(def))
      return value;
    if (Value known = recomputed.lookup(value))
      return known;
    if (plan.saved.contains(value)) {
      Value barrier = OptimizationBarrierOp::create(
                          b, value.getLoc(), TypeRange{value.getType()},
                          ValueRange{value})
                          .getResult(0);
      recomputed[value] = barrier;
      return barrier;
    }
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, get(b, operand));
    Operation *clone = b.clone(*def, mapping);
    clone->removeAttr(kRematAttrName);
    ++report.recomputedOps;
    report.recomputeFlops += flopsOf(def);
    for (auto [original, copy] :
         llvm::zip_equal(def->getResults(), clone->getResults()))
      recomputed[original] = copy;
    return recomputed.lookup(value);
  }

private:
  const SavedSet &plan;
  RematReport &report;
  DenseMap<Value, Value> recomputed;
};
} // namespace

FailureOr<RematReport> gacc::rematerialize(func::FuncOp grad,
                                           RematAttr policy) {
  auto forwardOps = grad->getAttrOfType<IntegerAttr>(kForwardOpsAttrName);
  if (!forwardOps)
    return grad.emitError("cannot rematerialize: not a gradient function "
                          "from gacc-autodiff (no ")
           << kForwardOpsAttrName << ")";
  Block &body = grad.getBody().front();
  SmallVector<Operation *> forward, backward;
  for (Operation &op : body.without_terminator())
    (static_cast<int64_t>(forward.size()) < forwardOps.getInt() ? forward
                                                                : backward)
        .push_back(&op);

  SavedSet plan(forward);
  RematReport report;
  // Bytes of the forward values ops after the forward read.
  auto readByBackward = [&]() {
    llvm::SetVector<Value> read;
    for (Operation &op : body)
      if (!plan.position.count(&op))
        for (Value operand : op.getOperands())
          if (Operation *def = operand.getDefiningOp())
            if (plan.position.count(def) && !isLeaf(def))
              read.insert(operand);
    int64_t bytes = 0;
    for (Value value : read)
      bytes += bytesOf(value);
    return bytes;
  };
  report.activationBytes = readByBackward();
  for (Operation *op : forward)
    if (!isLeaf(op))
      report.forwardFlops += flopsOf(op);

  if (failed(plan.choose(grad, policy.getPolicy())) ||
      failed(plan.applyOverrides()))
    return failure();
  {
    // What the function returns stays alive anyway.
    for (Value result : body.getTerminator()->getOperands())
      plan.saved.insert(result);
    Recomputer recomputer(plan, report);
    OpBuilder b(grad.getContext());
    for (Operation *op : backward) {
      b.setInsertionPoint(op);
      for (OpOperand &operand : op->getOpOperands()) {
        Operation *def = operand.get().getDefiningOp();
        if (def && plan.position.count(def) && !isLeaf(def) &&
            !plan.saved.contains(operand.get()))
          operand.set(recomputer.get(b, operand.get()));
      }
    }
  }
  report.savedBytes = readByBackward();
  grad->removeAttr(kForwardOpsAttrName);
  return report;
}

namespace {
struct RematPass : public gacc::impl::RematBase<RematPass> {
  using RematBase::RematBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<RematPolicy> forced;
    if (!policy.empty()) {
      forced = symbolizeRematPolicy(policy);
      if (!forced || *forced == RematPolicy::budget) {
        module.emitError("gacc-remat: unknown policy '")
            << policy << "' (none, blocks, sqrt or matmuls)";
        return signalPassFailure();
      }
    }
    llvm::StringMap<RematPolicy> done;
    for (TrainStepOp step : module.getOps<TrainStepOp>()) {
      RematAttr remat = forced ? RematAttr::get(&getContext(), *forced, 0)
                               : step.getEffectiveRemat();
      std::string name = (step.getModel() + "_grad").str();
      auto [it, first] = done.try_emplace(name, remat.getPolicy());
      if (!first) {
        if (it->second != remat.getPolicy()) {
          step.emitOpError("shares its model with another step that asks "
                           "for another remat policy");
          return signalPassFailure();
        }
        continue;
      }
      auto grad = module.lookupSymbol<func::FuncOp>(name);
      if (!grad) {
        step.emitOpError("has no gradient function: run gacc-autodiff first");
        return signalPassFailure();
      }
      FailureOr<RematReport> report = rematerialize(grad, remat);
      if (failed(report))
        return signalPassFailure();
      numRecomputed += report->recomputedOps;
      activationBytes += report->activationBytes;
      savedBytes += report->savedBytes;
      if (report->forwardFlops > 0)
        recomputePercent += static_cast<uint64_t>(
            std::llround(100.0 * report->recomputeFlops / report->forwardFlops));
    }
  }
};
} // namespace
