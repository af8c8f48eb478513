//===- OutlineRepeats.cpp - one function per run of ops that repeats ------===//
//
// The repeated runs of a block are found as LLVM's MachineOutliner finds
// repeated instruction sequences: each op becomes a token, equal for ops
// that can be the same op of two runs, and the suffix array of the tokens
// gives every repeated run with its places. The runs that save the most ops
// are taken first; each place is checked op by op before it becomes a call.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/common/FunctionKey.h"
#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <numeric>
#include <queue>

namespace mlir::gacc {
#define GEN_PASS_DEF_OUTLINEREPEATS
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// How far back an operand's definition counts as near in an op's token:
/// beyond, every definition looks alike (the checks of a place decide).
constexpr int64_t kNearOps = 64;

/// How many places per op of a block the search for runs looks at, at most.
constexpr int64_t kPlacesPerOp = 64;

/// Whether `op` may move into another function: no regions, no control
/// flow, nothing that lives only as long as the frame of its function.
bool isOutlinable(Operation *op) {
  if (op->getNumRegions() || op->getNumSuccessors() ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::none_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect()) &&
           e.getResource() ==
               SideEffects::AutomaticAllocationScopeResource::get();
  });
}

/// Whether `op` only describes memory (a view, cast or reshape of a
/// buffer), so that making it again costs nothing.
bool isView(Operation *op) {
  return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
         isa<BaseMemRefType>(op->getResult(0).getType()) && isPure(op);
}

/// Gives every user of a view in `block` a copy of it just before it: a
/// run then reads the arena and the offsets its buffers are at, instead of
/// buffers viewed elsewhere (each one an argument of many words), and
/// leaves no view for the ops after it to read.
void sinkViews(Block *block) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block))) {
    if (!isView(&op) || llvm::any_of(op.getUsers(), [&](Operation *user) {
          return !block->findAncestorOpInBlock(*user);
        }))
      continue;
    DenseMap<Operation *, Value> copies; // per user in the block
    for (OpOperand &use : llvm::make_early_inc_range(op.getUses())) {
      Operation *user = block->findAncestorOpInBlock(*use.getOwner());
      if (user == op.getNextNode())
        continue;
      Value &copy = copies[user];
      if (!copy)
        copy = OpBuilder(user).clone(op)->getResult(0);
      use.set(copy);
    }
    if (op.use_empty())
      op.erase();
  }
}

/// The suffix array of `tokens` (prefix doubling) and the longest common
/// prefix of each suffix with the one before it in that order (Kasai).
void buildSuffixArray(ArrayRef<int64_t> tokens, std::vector<int64_t> &order,
                      std::vector<int64_t> &common) {
  int64_t n = tokens.size();
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> rank(tokens.begin(), tokens.end()), next(n);
  for (int64_t k = 1;; k *= 2) {
    auto key = [&](int64_t i) {
      return std::pair(rank[i], i + k < n ? rank[i + k] : INT64_MIN);
    };
    llvm::sort(order, [&](int64_t a, int64_t b) { return key(a) < key(b); });
    next[order[0]] = 0;
    for (int64_t i = 1; i < n; ++i)
      next[order[i]] =
          next[order[i - 1]] + (key(order[i - 1]) < key(order[i]) ? 1 : 0);
    rank.swap(next);
    if (rank[order[n - 1]] == n - 1)
      break;
  }
  common.assign(n, 0);
  for (int64_t i = 0, h = 0; i < n; ++i) {
    if (rank[i] == 0) {
      h = 0;
      continue;
    }
    int64_t j = order[rank[i] - 1];
    while (i + h < n && j + h < n && tokens[i + h] == tokens[j + h])
      ++h;
    common[rank[i]] = h;
    if (h)
      --h;
  }
}

/// A run of `length` ops that occurs at `starts` (indices into the block).
struct Repeat {
  int64_t length;
  SmallVector<int64_t> starts;
};

/// Where an operand of a run comes from: the result `result` of its op
/// `op` (relative to the run's start), or, with `op` = -1, from outside.
struct Source {
  int64_t op, result;
  bool operator==(const Source &other) const {
    return op == other.op && result == other.result;
  }
};

struct OutlineRepeats : gacc::impl::OutlineRepeatsBase<OutlineRepeats> {
  using OutlineRepeatsBase::OutlineRepeatsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The entry points' bodies and their loops' (accumulation's): not the
    // outlined loop nests, nor the bodies of any other op.
    SmallVector<Block *> blocks;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isPrivate())
        continue;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op != function && !isa<scf::ForOp>(op))
          return WalkResult::skip();
        for (Region &region : op->getRegions())
          for (Block &block : region)
            blocks.push_back(&block);
        return WalkResult::advance();
      });
    }
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> outlined;
    for (Block *block : blocks)
      outlineBlock(block, symbols, outlined);
  }

  void outlineBlock(Block *block, SymbolTable &symbols,
                    llvm::StringMap<func::FuncOp> &outlined) {
    if (static_cast<int64_t>(block->getOperations().size()) < 2 * minOps)
      return;
    sinkViews(block);
    SmallVector<Operation *> ops =
        llvm::map_to_vector(*block, [](Operation &op) { return &op; });
    int64_t n = ops.size();
    DenseMap<Operation *, int64_t> index;
    for (int64_t i = 0; i < n; ++i)
      index[ops[i]] = i;

    // Equal tokens for ops alike up to their operands' values, those
    // defined near by as far back; a token of its own for any other op.
    DenseMap<llvm::hash_code, int64_t> tokenOf;
    std::vector<int64_t> tokens(n);
    for (int64_t i = 0; i < n; ++i) {
      if (!isOutlinable(ops[i])) {
        tokens[i] = -1 - i;
        continue;
      }
      // Constants look alike: a run's offsets in the arena are its own.
      auto hashOperand = [&](Value value) {
        int64_t distance = kNearOps + 1;
        Operation *definition = value.getDefiningOp();
        if (definition && definition->getBlock() == block &&
            !matchPattern(definition, m_Constant()))
          distance = std::min(distance, i - index.lookup(definition));
        return llvm::hash_combine(value.getType(), distance);
      };
      llvm::hash_code hash = OperationEquivalence::computeHash(
          ops[i], hashOperand, OperationEquivalence::ignoreHashValue,
          OperationEquivalence::IgnoreLocations);
      tokens[i] = tokenOf.try_emplace(hash, tokenOf.size()).first->second;
    }

    // Every group of suffixes with a common prefix of at least minOps
    // tokens (the intervals of the longest-common-prefix array) is a run
    // that repeats at their starts: order[lower] to order[upper - 1].
    std::vector<int64_t> order, common;
    buildSuffixArray(tokens, order, common);
    struct Group {
      int64_t length, lower, upper;
      SmallVector<int64_t> starts; // sorted, once the group is looked at
    };
    std::vector<Group> groups;
    SmallVector<std::pair<int64_t, int64_t>> open = {{0, 0}}; // prefix, lower
    for (int64_t i = 1; i <= n; ++i) {
      int64_t prefix = i < n ? common[i] : 0, lower = i - 1;
      while (prefix < open.back().first) {
        auto [length, first] = open.pop_back_val();
        lower = first;
        if (length >= minOps)
          groups.push_back({length, first, i, {}});
      }
      if (prefix > open.back().first)
        open.push_back({prefix, lower});
    }

    // The most ops saved first: each run is priced again with the ops taken
    // by those before it, and taken when it still saves the most. Views are
    // free to make anywhere: they count for nothing, and a run does not end
    // with views (they would be its results).
    std::vector<char> taken(n, 0);
    std::vector<int64_t> takenBefore(n + 1, 0), workBefore(n + 1, 0);
    for (int64_t i = 0; i < n; ++i)
      workBefore[i + 1] = workBefore[i] + (isView(ops[i]) ? 0 : 1);
    auto saved = [&](int64_t start, int64_t length, size_t count) {
      int64_t work = workBefore[start + length] - workBefore[start];
      return count < 2 || work < minOps ? 0 : (int64_t(count) - 1) * work;
    };
    auto placesOf = [&](const Group &group) {
      SmallVector<int64_t> starts;
      for (int64_t start : group.starts)
        if ((starts.empty() || start >= starts.back() + group.length) &&
            takenBefore[start + group.length] == takenBefore[start])
          starts.push_back(start);
      return starts;
    };
    // Ordered by ops saved, then length (of runs that save as much, the one
    // that takes in the views its ops read); a group not looked at yet is
    // priced as if none of its places overlapped.
    std::priority_queue<std::tuple<int64_t, int64_t, size_t>> queue;
    for (size_t g = 0; g < groups.size(); ++g) {
      const Group &group = groups[g];
      queue.push(
          {saved(order[group.lower], group.length, group.upper - group.lower),
           group.length, g});
    }
    // Highly repetitive blocks have groups of many places inside groups of
    // many places: the search looks at no more places than this.
    int64_t budget = kPlacesPerOp * n;
    while (!queue.empty()) {
      auto [price, length, g] = queue.top();
      queue.pop();
      Group &group = groups[g];
      if (price == 0)
        break;
      if (group.starts.empty()) {
        budget -= group.upper - group.lower;
        if (budget < 0)
          break;
        for (int64_t i = group.lower; i < group.upper; ++i)
          group.starts.push_back(order[i]);
        llvm::sort(group.starts);
      }
      SmallVector<int64_t> starts = placesOf(group);
      int64_t now =
          starts.empty() ? 0 : saved(starts[0], group.length, starts.size());
      if (now < price) {
        queue.push({now, length, g});
        continue;
      }
      // The places whose ops match the first one's, operand for operand,
      // for as long as saves the most.
      SmallVector<int64_t> matched = {group.length};
      for (int64_t start : llvm::drop_begin(starts))
        matched.push_back(
            matchingLength(ops, index, starts[0], start, group.length));
      Repeat repeat{0, {}};
      int64_t best = 0;
      for (int64_t candidate : matched) {
        while (candidate > 0 && isView(ops[starts[0] + candidate - 1]))
          --candidate;
        size_t count =
            llvm::count_if(matched, [&](int64_t m) { return m >= candidate; });
        if (saved(starts[0], candidate, count) > best) {
          best = saved(starts[0], candidate, count);
          repeat.length = candidate;
          repeat.starts.clear();
          for (auto [start, m] : llvm::zip(starts, matched))
            if (m >= candidate)
              repeat.starts.push_back(start);
        }
      }
      if (repeat.starts.size() < 2)
        continue;
      for (int64_t start : repeat.starts)
        std::fill_n(taken.begin() + start, repeat.length, 1);
      for (int64_t i = 0; i < n; ++i)
        takenBefore[i + 1] = takenBefore[i] + taken[i];
      outline(ops, index, repeat, symbols, outlined);
      numCalls += repeat.starts.size();
    }
  }

  /// Where `value`, an operand of the run at `start` of `length` ops, comes
  /// from.
  static Source sourceOf(Value value,
                         const DenseMap<Operation *, int64_t> &index,
                         int64_t start, int64_t length) {
    // Calls made for runs outlined before are not indexed: outside.
    auto it = index.find(value.getDefiningOp());
    if (it != index.end() && it->second >= start && it->second < start + length)
      return {it->second - start, cast<OpResult>(value).getResultNumber()};
    return {-1, 0};
  }

  /// For how many ops, up to `length`, the run at `start` is the run at
  /// `first`: the same ops, each operand from the same op of its run or
  /// from outside both, one value outside the first run always standing for
  /// one value outside the other.
  static int64_t matchingLength(ArrayRef<Operation *> ops,
                                const DenseMap<Operation *, int64_t> &index,
                                int64_t first, int64_t start, int64_t length) {
    DenseMap<Value, Value> outside;
    for (int64_t i = 0; i < length; ++i) {
      Operation *a = ops[first + i], *b = ops[start + i];
      if (!OperationEquivalence::isEquivalentTo(
              a, b, OperationEquivalence::ignoreValueEquivalence, nullptr,
              OperationEquivalence::IgnoreLocations))
        return i;
      for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands())) {
        // Definitions come before uses: where an operand comes from does
        // not depend on how far the run goes on.
        Source sx = sourceOf(x, index, first, length);
        if (x.getType() != y.getType() ||
            !(sx == sourceOf(y, index, start, length)) ||
            (sx.op < 0 && outside.try_emplace(x, y).first->second != y))
          return i;
      }
    }
    return length;
  }

  /// Replaces every place of `repeat` by a call of one function holding
  /// its ops: its arguments what the ops read from outside, its results
  /// what is read of them after the run at any of its places.
  void outline(ArrayRef<Operation *> ops, DenseMap<Operation *, int64_t> &index,
               const Repeat &repeat, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &outlined) {
    int64_t first = repeat.starts.front(), length = repeat.length;
    Block *block = ops[first]->getBlock();
    // Arguments: (op, operand) of each value read from outside, first use;
    // a constant every place reads is copied in instead.
    SmallVector<std::pair<int64_t, unsigned>> arguments;
    llvm::SetVector<Operation *> constants;
    DenseSet<Value> seen;
    for (int64_t i = 0; i < length; ++i)
      for (OpOperand &operand : ops[first + i]->getOpOperands()) {
        Value value = operand.get();
        if (sourceOf(value, index, first, length).op >= 0 ||
            !seen.insert(value).second)
          continue;
        Operation *definition = value.getDefiningOp();
        unsigned number = operand.getOperandNumber();
        if (definition && matchPattern(definition, m_Constant()) &&
            llvm::all_of(repeat.starts, [&](int64_t start) {
              return ops[start + i]->getOperand(number) == value;
            }))
          constants.insert(definition);
        else
          arguments.push_back({i, number});
      }
    // Results: the values some place uses after its run.
    SmallVector<std::pair<int64_t, unsigned>> results;
    for (int64_t i = 0; i < length; ++i)
      for (unsigned r = 0; r < ops[first + i]->getNumResults(); ++r)
        if (llvm::any_of(repeat.starts, [&](int64_t start) {
              return llvm::any_of(
                  ops[start + i]->getResult(r).getUsers(), [&](Operation *u) {
                    auto it = index.find(block->findAncestorOpInBlock(*u));
                    return it == index.end() || it->second < start ||
                           it->second >= start + length;
                  });
            }))
          results.push_back({i, r});

    MLIRContext *context = block->getParentOp()->getContext();
    OpBuilder b(context);
    Location loc = ops[first]->getLoc();
    SmallVector<Type> argumentTypes, resultTypes;
    for (auto [i, operand] : arguments)
      argumentTypes.push_back(ops[first + i]->getOperand(operand).getType());
    for (auto [i, r] : results)
      resultTypes.push_back(ops[first + i]->getResult(r).getType());
    auto function = func::FuncOp::create(
        loc, "gacc_repeat", b.getFunctionType(argumentTypes, resultTypes));
    function.setPrivate();
    // Compiled once, called at every place.
    function->setAttr("passthrough", b.getStrArrayAttr({"noinline"}));
    Block *entry = function.addEntryBlock();
    IRMapping mapping;
    for (auto [k, argument] : llvm::enumerate(arguments))
      mapping.map(ops[first + argument.first]->getOperand(argument.second),
                  entry->getArgument(k));
    b.setInsertionPointToStart(entry);
    for (Operation *constant : constants)
      b.clone(*constant, mapping);
    for (int64_t i = 0; i < length; ++i)
      b.clone(*ops[first + i], mapping);
    SmallVector<Value> returned;
    for (auto [i, r] : results)
      returned.push_back(mapping.lookup(ops[first + i]->getResult(r)));
    func::ReturnOp::create(b, loc, returned);

    std::string key = getStructuralKey(function);
    auto [it, inserted] = outlined.try_emplace(key, function);
    if (inserted) {
      symbols.insert(function);
      ++numOutlined;
    } else {
      function.erase();
    }

    for (int64_t start : repeat.starts) {
      SmallVector<Value> operands;
      for (auto [i, operand] : arguments)
        operands.push_back(ops[start + i]->getOperand(operand));
      b.setInsertionPoint(ops[start]);
      auto call =
          func::CallOp::create(b, ops[start]->getLoc(), it->second, operands);
      for (auto [k, result] : llvm::enumerate(results))
        ops[start + result.first]
            ->getResult(result.second)
            .replaceAllUsesWith(call.getResult(k));
      for (int64_t i = start + length - 1; i >= start; --i) {
        index.erase(ops[i]); // its address may be a later op's
        ops[i]->erase();
      }
    }
  }
};
} // namespace
