//===- Remat.cpp - recompute forward values in the backward -----------------===//
//
// A gradient function from gacc-autodiff is its forward ops, then its
// backward ops. A policy chooses the forward values the backward may keep
// (saved); every other forward value the backward reads is recomputed by
// cloning its defining op, recursively, down to saved values (through an
// optimization barrier), parameters, inputs and constants.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccShapes.h"
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
  return getStaticByteSize(value.getType()).value_or(0);
}

/// Bytes of everything `op` produces.
int64_t resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value result : op->getResults())
    bytes += bytesOf(result);
  return bytes;
}

/// The estimated time of an op in nanoseconds, as the CPU backend runs it
/// on one core (measured on the examples): matmuls go to BLAS at about 50
/// GFLOP/s; elementwise ops and reductions cost ~1 ns per element, ~10 when
/// they call libm (exp, tanh, erf) or normalize (softmax, layer norm).
double costOf(Operation *op) {
  double elements = 0;
  for (Value operand : op->getOperands())
    if (auto type = dyn_cast<RankedTensorType>(operand.getType()))
      elements = std::max(elements, static_cast<double>(type.getNumElements()));
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType()))
      elements = std::max(elements, static_cast<double>(type.getNumElements()));
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    ArrayRef<int64_t> lhs = matmul.getLhs().getType().getShape();
    int64_t k = matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
    double flops = 2.0 * static_cast<double>(matmul.getType().getNumElements()) *
                   static_cast<double>(k);
    return flops / 50.0;
  }
  if (isa<AttentionOp, AttentionGradOp>(op)) {
    // Q Kᵀ and P V (the gradient: five such products), over the rows of
    // T x S scores.
    auto q = cast<ShapedType>(op->getOperand(0).getType());
    auto k = cast<ShapedType>(op->getOperand(1).getType());
    double scores = static_cast<double>(q.getNumElements()) /
                    static_cast<double>(q.getDimSize(3)) *
                    static_cast<double>(k.getDimSize(2));
    double products = isa<AttentionOp>(op) ? 2 : 5;
    return products * 2.0 * scores * static_cast<double>(q.getDimSize(3)) /
               50.0 +
           10.0 * scores;
  }
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    // A matmul per output element over C/groups·KH·KW inputs.
    ArrayRef<int64_t> weight = conv.getWeight().getType().getShape();
    double flops = 2.0 * static_cast<double>(conv.getType().getNumElements()) *
                   static_cast<double>(weight[1] * weight[2] * weight[3]);
    return flops / 50.0;
  }
  if (isa<ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, GeluOp, SoftmaxOp,
          LogSoftmaxOp, LayerNormOp, CrossEntropyOp, DropoutOp>(op))
    return 10.0 * elements;
  return elements;
}

/// Optimal segment boundaries for a memory budget: an exact dynamic
/// program over the forward op chain (see gacc-remat's description).
///
/// Segment [a, b) of the forward's non-leaf ops costs, when it is not the
/// last one, the time (costOf) of recomputing its needed values and their
/// ancestors inside it (`cost`), keeps the values it defines that a later
/// segment uses (`saved`), and needs its recomputed values at once during
/// its backward (`transient`); the last segment [a, n) keeps its needed
/// values (`lastKept`). A schedule's memory is
///   Σ saved + lastKept + max transient,
/// its cost Σ cost. Labels (cost, Σ saved, max transient) per boundary,
/// pruned to the Pareto front, make the search exact: O(n²) segments, each
/// extended by every label of its start.
///
/// Bytes are counted in units of about 1/kMemoryLevels of what no remat
/// keeps (a power of two), each segment's rounded up: the model overstates
/// memory by less than a unit per segment, never understates it, and the Pareto
/// fronts stay small. With exact bytes they grew to 4840 labels at a boundary
/// at GPT-2-small width (4 layers, 186 ops), and planning `--remat budget` took
/// 8 minutes (9 s in these units).
class SegmentSchedule {
  static constexpr int64_t kMemoryLevels = 128;

public:
  explicit SegmentSchedule(ArrayRef<Operation *> forward) {
    DenseMap<Operation *, int64_t> index;
    for (Operation *op : forward)
      if (!isLeaf(op)) {
        index[op] = static_cast<int64_t>(ops.size());
        ops.push_back(op);
      }
    n = static_cast<int64_t>(ops.size());
    SmallVector<int64_t> lastUse(n, -1);
    SmallVector<bool> needed(n, false);
    SmallVector<int64_t> bytes(n, 0);
    SmallVector<SmallVector<int64_t>> operands(n), endsAt(n);
    for (auto [k, op] : llvm::enumerate(ops)) {
      bytes[k] = resultBytes(op);
      for (Value result : op->getResults()) {
        for (Operation *user : result.getUsers()) {
          auto it = index.find(user);
          // Leaves take no operands: any other user is the backward.
          if (it != index.end())
            lastUse[k] = std::max(lastUse[k], it->second);
          else
            needed[k] = true;
        }
      }
      for (Value operand : op->getOperands())
        if (auto it = index.find(operand.getDefiningOp()); it != index.end())
          operands[k].push_back(it->second);
      if (lastUse[k] >= 0)
        endsAt[lastUse[k]].push_back(k);
    }
    lastKept.assign(n + 1, 0);
    for (int64_t a = n - 1; a >= 0; --a)
      lastKept[a] = lastKept[a + 1] + (needed[a] ? bytes[a] : 0);
    // A power of two: the last micro-batch's gradient function, whose
    // values are no larger, gets a unit that divides this one's, so every
    // schedule of the micro-batch's fits its budget there too.
    auto unit = static_cast<int64_t>(llvm::PowerOf2Ceil(
        std::max<uint64_t>(1, llvm::divideCeil(lastKept[0], kMemoryLevels))));
    auto roundUp = [&](int64_t value) {
      assert(value >= 0 && "kept and recomputed bytes are never negative");
      return static_cast<int64_t>(llvm::divideCeil(value, unit)) * unit;
    };
    for (int64_t &kept : lastKept)
      kept = roundUp(kept);

    segments.assign((n + 1) * (n + 1), Segment());
    SmallVector<bool> recomputed(n);
    for (int64_t a = 0; a < n; ++a) {
      std::fill(recomputed.begin(), recomputed.end(), false);
      Segment running;
      for (int64_t b = a + 1; b <= n; ++b) {
        int64_t k = b - 1;
        for (int64_t v : endsAt[k])
          if (v >= a)
            running.saved -= bytes[v];
        if (lastUse[k] > k)
          running.saved += bytes[k];
        // The whole segment's backward-read values and their ancestors in
        // it: an upper bound of what the rewrite recomputes (it stops at
        // kept values), which keeps the memory estimate on the safe side.
        if (needed[k]) {
          SmallVector<int64_t> stack{k};
          while (!stack.empty()) {
            int64_t v = stack.pop_back_val();
            if (v < a || recomputed[v])
              continue;
            recomputed[v] = true;
            running.cost += costOf(ops[v]);
            running.transient += bytes[v];
            stack.append(operands[v]);
          }
        }
        segments[a * (n + 1) + b] = {running.cost, roundUp(running.saved),
                                     roundUp(running.transient)};
      }
    }
  }

  /// The boundaries of the cheapest schedule within `budget` bytes (with
  /// `leastMemory`: of the schedule that needs the fewest bytes), whose
  /// bytes `memory` receives; nullopt if none fits.
  std::optional<SmallVector<int64_t>> solve(int64_t budget, bool leastMemory,
                                            int64_t *memory = nullptr) const {
    Fronts fronts = paretoFronts(budget, leastMemory);
    std::optional<std::pair<int64_t, int64_t>> best =
        pick(fronts, budget, leastMemory);
    if (!best)
      return std::nullopt;
    if (memory)
      *memory = total(fronts, *best);
    SmallVector<int64_t> boundaries;
    for (auto [a, l] = *best; a > 0;) {
      boundaries.push_back(a);
      const Label &label = fronts[a][l];
      std::tie(a, l) = std::pair(label.from, label.fromLabel);
    }
    std::reverse(boundaries.begin(), boundaries.end());
    return boundaries;
  }

  /// The memory of the schedule solve(budget) chooses, for each of
  /// `budgets` (nullopt where none fits), from one pass of the DP: the
  /// fronts within the largest budget hold every smaller one's optimum
  /// (a label that dominates another needs no more memory).
  SmallVector<std::optional<int64_t>>
  chosenMemory(ArrayRef<int64_t> budgets) const {
    SmallVector<std::optional<int64_t>> memories;
    if (budgets.empty())
      return memories;
    Fronts fronts = paretoFronts(*llvm::max_element(budgets),
                                 /*leastMemory=*/false);
    for (int64_t budget : budgets) {
      std::optional<std::pair<int64_t, int64_t>> best =
          pick(fronts, budget, /*leastMemory=*/false);
      memories.push_back(best ? std::optional(total(fronts, *best))
                              : std::nullopt);
    }
    return memories;
  }

  /// The k-th non-leaf forward op: boundary k starts a segment with it.
  Operation *op(int64_t k) const { return ops[k]; }

private:
  struct Segment {
    double cost = 0;
    int64_t saved = 0, transient = 0;
  };
  /// A schedule of the ops before a boundary: its cost, kept bytes, largest
  /// transient, and the label of the boundary before it.
  struct Label {
    double cost;
    int64_t saved, transient;
    int64_t from, fromLabel;
  };
  using Fronts = std::vector<std::vector<Label>>;

  /// The Pareto front of labels at every boundary, of schedules within
  /// `budget` bytes (with `leastMemory`, costs are not tracked).
  Fronts paretoFronts(int64_t budget, bool leastMemory) const {
    Fronts labels(n + 1);
    labels[0].push_back({0, 0, 0, -1, -1});
    for (int64_t a = 0; a <= n; ++a) {
      for (int64_t l = 0; l < static_cast<int64_t>(labels[a].size()); ++l) {
        Label label = labels[a][l];
        for (int64_t b = a + 1; b < n; ++b) {
          const Segment &segment = segments[a * (n + 1) + b];
          Label next{leastMemory ? 0 : label.cost + segment.cost,
                     label.saved + segment.saved,
                     std::max(label.transient, segment.transient), a, l};
          if (next.saved + next.transient > budget)
            continue;
          addPareto(labels[b], next);
        }
      }
    }
    return labels;
  }

  /// The memory of the schedule whose last segment starts at `at`'s
  /// boundary with its label.
  int64_t total(const Fronts &fronts, std::pair<int64_t, int64_t> at) const {
    const Label &label = fronts[at.first][at.second];
    return label.saved + lastKept[at.first] + label.transient;
  }

  /// The best schedule within `budget` (cheapest, or with `leastMemory` the
  /// smallest): the boundary and label its last segment starts from; the
  /// first found among equals.
  std::optional<std::pair<int64_t, int64_t>>
  pick(const Fronts &fronts, int64_t budget, bool leastMemory) const {
    std::optional<std::pair<int64_t, int64_t>> best;
    double objective = std::numeric_limits<double>::infinity();
    for (int64_t a = 0; a <= n; ++a)
      for (int64_t l = 0; l < static_cast<int64_t>(fronts[a].size()); ++l) {
        int64_t memory = total(fronts, {a, l});
        double value =
            leastMemory ? static_cast<double>(memory) : fronts[a][l].cost;
        if (memory <= budget && value < objective) {
          objective = value;
          best = {a, l};
        }
      }
    return best;
  }

  static void addPareto(std::vector<Label> &front, const Label &label) {
    auto dominates = [](const Label &x, const Label &y) {
      return x.cost <= y.cost && x.saved <= y.saved &&
             x.transient <= y.transient;
    };
    for (const Label &other : front)
      if (dominates(other, label))
        return;
    llvm::erase_if(front,
                   [&](const Label &other) { return dominates(label, other); });
    front.push_back(label);
  }

  SmallVector<Operation *> ops;
  int64_t n = 0;
  SmallVector<int64_t> lastKept;
  std::vector<Segment> segments;
};

/// Which forward values `policy` saves, by the segment each forward op is
/// in: values used in a later segment, and the whole last segment.
class SavedSet {
public:
  SavedSet(ArrayRef<Operation *> forward) : forward(forward) {
    for (auto [i, op] : llvm::enumerate(forward))
      position[op] = static_cast<int64_t>(i);
  }

  LogicalResult choose(func::FuncOp grad, const RematConfig &options) {
    RematPolicy policy = options.policy;
    SmallVector<int64_t> segment(forward.size(), 0);
    switch (policy) {
    case RematPolicy::none:
      // Only gacc.remat = "recompute" overrides recompute anything.
      for (Operation *op : forward)
        saved.insert(op->getResults().begin(), op->getResults().end());
      return success();
    case RematPolicy::matmuls:
      for (Operation *op : forward)
        if (isa<MatmulOp, Conv2dOp, AttentionOp>(op))
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
          total += resultBytes(op);
        }
      int64_t segments = std::max<int64_t>(
          1, std::llround(std::sqrt(static_cast<double>(count))));
      int64_t before = 0;
      for (auto [i, op] : llvm::enumerate(forward)) {
        segment[i] = total == 0 ? 0
                                : std::min(segments - 1,
                                           before * segments / total);
        if (!isLeaf(op))
          before += resultBytes(op);
      }
      break;
    }
    case RematPolicy::budget: {
      SegmentSchedule schedule(forward);
      std::optional<SmallVector<int64_t>> boundaries =
          schedule.solve(options.activationBudget, /*leastMemory=*/false);
      if (!boundaries) {
        int64_t least = 0;
        schedule.solve(std::numeric_limits<int64_t>::max(),
                       /*leastMemory=*/true, &least);
        return grad.emitError("remat budget: no schedule keeps the "
                              "activations the backward reads within ")
               << options.activationBudget << " bytes; the least any needs is "
               << least << " bytes";
      }
      // Segment i starts at the i-th boundary's op.
      int64_t current = 0;
      auto next = boundaries->begin();
      for (auto [i, op] : llvm::enumerate(forward)) {
        if (next != boundaries->end() && op == schedule.op(*next)) {
          ++current;
          ++next;
        }
        segment[i] = current;
      }
      break;
    }
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

  /// The `gacc.remat` overrides of individual ops, and of blocks: on a
  /// gacc.checkpoint, it applies to every op after it up to the next
  /// checkpoint that has none of its own (the checkpoint, the block's
  /// input, stays as the policy says: it is what a block recomputes from).
  /// (The dialect verifies the attribute's values.)
  void applyOverrides() {
    StringAttr blockChoice;
    for (Operation *op : forward) {
      auto choice = op->getAttrOfType<StringAttr>(kRematAttrName);
      if (isa<CheckpointOp>(op)) {
        blockChoice = choice;
        choice = StringAttr();
      } else if (!choice) {
        choice = blockChoice;
      }
      if (!choice || isLeaf(op))
        continue;
      if (choice.getValue() == "save")
        saved.insert(op->getResults().begin(), op->getResults().end());
      else
        for (Value result : op->getResults())
          saved.remove(result);
    }
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
    report.recomputeCost += costOf(def);
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

RematConfig gacc::getRematConfig(TrainStepOp step) {
  RematAttr remat = step.getEffectiveRemat();
  RematConfig options{remat.getPolicy(),
                       static_cast<int64_t>(remat.getBudget())};
  if (auto budget =
          step->getAttrOfType<IntegerAttr>(kRematActivationBudgetAttrName))
    options.activationBudget = budget.getInt();
  return options;
}

/// The forward ops of a gradient function from gacc-autodiff: those its
/// leading results (the model's; the trailing ones are the gradients that
/// gacc.gradients lists) and its gacc.assign ops are computed from, and
/// the assigns. The backward ops follow the last of them.
static FailureOr<SmallVector<Operation *>> forwardOps(func::FuncOp grad) {
  ArrayAttr gradients =
      GaccDialect::GradientsAttrHelper(grad.getContext()).getAttr(grad);
  if (!gradients)
    return grad.emitError("cannot rematerialize: not a gradient function "
                          "from gacc-autodiff (no ")
           << kGradientsAttrName << ")";
  Block &body = grad.getBody().front();
  Operation *ret = body.getTerminator();
  SmallVector<Value> worklist(
      ret->getOperands().drop_back(gradients.size()));
  llvm::SmallPtrSet<Operation *, 32> computesResults;
  // Assigns of frozen parameters (batch norm's running statistics) are
  // forward ops too: the backward never re-executes one.
  for (auto assign : body.getOps<AssignOp>()) {
    computesResults.insert(assign);
    worklist.push_back(assign.getValue());
  }
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (def && computesResults.insert(def).second)
      llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> forward;
  size_t end = 0;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    if (computesResults.contains(&op))
      end = forward.size();
  }
  forward.truncate(end);
  return forward;
}

FailureOr<int64_t> gacc::minimumRematActivationBytes(func::FuncOp grad) {
  FailureOr<SmallVector<Operation *>> forward = forwardOps(grad);
  if (failed(forward))
    return failure();
  int64_t least = 0;
  SegmentSchedule(*forward).solve(std::numeric_limits<int64_t>::max(),
                                  /*leastMemory=*/true, &least);
  return least;
}

FailureOr<SmallVector<std::optional<int64_t>>>
gacc::rematBudgetSchedules(func::FuncOp grad,
                           ArrayRef<int64_t> activationBudgets) {
  FailureOr<SmallVector<Operation *>> forward = forwardOps(grad);
  if (failed(forward))
    return failure();
  return SegmentSchedule(*forward).chosenMemory(activationBudgets);
}

FailureOr<RematReport> gacc::rematerialize(func::FuncOp grad,
                                           const RematConfig &options) {
  FailureOr<SmallVector<Operation *>> forwardOrFailure = forwardOps(grad);
  if (failed(forwardOrFailure))
    return failure();
  SmallVector<Operation *> forward = std::move(*forwardOrFailure), backward;
  Block &body = grad.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!llvm::is_contained(forward, &op))
      backward.push_back(&op);

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
      report.forwardCost += costOf(op);

  if (failed(plan.choose(grad, options)))
    return failure();
  plan.applyOverrides();
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
    // Steps that share a model share its gradient function.
    DenseMap<func::FuncOp, RematPolicy> done;
    for (TrainStepOp step : module.getOps<TrainStepOp>()) {
      RematConfig options = getRematConfig(step);
      if (forced)
        options = {*forced, 0};
      SmallVector<func::FuncOp> grads;
      for (func::FuncOp grad :
           {step.getGradientFunc(), step.getMicroGradientFunc(),
            step.getLastMicroGradientFunc()})
        if (grad)
          grads.push_back(grad);
      if (grads.empty()) {
        step.emitOpError("has no gradient function: run gacc-autodiff first");
        return signalPassFailure();
      }
      for (func::FuncOp grad : grads)
        if (failed(rematerializeOnce(step, grad, options, done)))
          return signalPassFailure();
    }
  }

  /// Rewrites `grad` for `options` unless done already, then checks that
  /// the steps sharing it ask for the same policy.
  LogicalResult rematerializeOnce(TrainStepOp step, func::FuncOp grad,
                                  const RematConfig &options,
                                  DenseMap<func::FuncOp, RematPolicy> &done) {
    auto [it, first] = done.try_emplace(grad, options.policy);
    if (!first) {
      if (it->second != options.policy)
        return step.emitOpError("shares its model with another step that "
                                "asks for another remat policy");
      return success();
    }
    FailureOr<RematReport> report = rematerialize(grad, options);
    if (failed(report))
      return failure();
    if (this->report)
      grad.emitRemark("remat ")
          << stringifyRematPolicy(options.policy) << ": the backward keeps "
          << report->savedBytes << " of " << report->activationBytes
          << " bytes of activations; " << report->recomputedOps
          << " ops recomputed, "
          << std::llround(100.0 * report->recomputeCost /
                          std::max(report->forwardCost, 1.0))
          << "% of the forward's estimated time";
    numRecomputed += report->recomputedOps;
    activationBytes += report->activationBytes;
    savedBytes += report->savedBytes;
    if (report->forwardCost > 0)
      recomputePercent += static_cast<uint64_t>(
          std::llround(100.0 * report->recomputeCost / report->forwardCost));
    return success();
  }
};
} // namespace
