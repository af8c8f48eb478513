//===- BlockReductions.cpp - one block per reduced element ------------------===//
//
// Each reduction becomes a kernel with a block per output element (a row).
// A reduction over its last loop takes into its kernel the neighbouring ops
// that work on the same rows (softmax, layer norm and their gradients:
// fills, row-broadcast elementwise ops, more row reductions): each block
// runs the whole chain on its row, a barrier between ops, instead of a
// kernel per op. The memory plan reuses storage, so an op joins only when
// no block can touch another row's bytes that a later (or earlier) op of
// the chain also touches.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/cuda/KernelCodegen.h"
#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/Passes.h"
#include "passes/ArenaViews.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_BLOCKREDUCTIONS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using gacc::applyMap;
using gacc::delinearize;
using gacc::kThreadsPerBlock;

namespace {
/// Reductions over fewer elements stay a loop in the thread of each output.
constexpr int64_t kMinReduced = 64;
/// Elements of a row a thread loads at once (see BlockKernel::stridedLoop):
/// four 4-byte loads per thread in flight, 2048 threads per multiprocessor,
/// cover the bytes an H100's memory needs in flight to stream (about 3.35
/// TB/s times 700 ns, over 132 multiprocessors). Measured, it gained less
/// than that suggests (GPT-2's cross-entropy rows 5.8 -> 5.6 ms): the row
/// kernels are bound by something else as well.
constexpr int64_t kUnroll = 4;
/// A chain's block runs each op's row with at most kThreadsPerBlock
/// threads: an op with wider rows joins only when there are rows enough to
/// fill a GPU with blocks (an H100's 132 SMs hold 8 blocks of 256 threads
/// each), so that the kernel loses no parallelism that matters.
constexpr int64_t kRowsToFillGpu = 1024;

/// The reduction a combiner op performs.
std::optional<arith::AtomicRMWKind> reductionKind(Operation *combiner) {
  using Kind = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(combiner)
      .Case([](arith::AddFOp) { return Kind::addf; })
      .Case([](arith::MulFOp) { return Kind::mulf; })
      .Case([](arith::MaximumFOp) { return Kind::maximumf; })
      .Case([](arith::MinimumFOp) { return Kind::minimumf; })
      .Case([](arith::MaxNumFOp) { return Kind::maxnumf; })
      .Case([](arith::MinNumFOp) { return Kind::minnumf; })
      .Case([](arith::AddIOp) { return Kind::addi; })
      .Case([](arith::MaxSIOp) { return Kind::maxs; })
      .Case([](arith::MinSIOp) { return Kind::mins; })
      .Default([](Operation *) { return std::nullopt; });
}

/// How a reduction `out[p] = combine(out[p], f(inputs at (p, r)))` combines.
struct Reduction {
  Operation *combiner;
  Value element; // f(inputs), the combiner's other operand
  arith::AtomicRMWKind kind;
};

bool hasStaticMemRefs(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return !memref || memref.hasStaticShape();
  });
}

/// A reduction the kernel can take: one output indexed by exactly the
/// parallel loops, static shapes, enough reduced elements, and the output
/// read only by the combiner.
std::optional<Reduction> matchReduction(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || !hasStaticMemRefs(op) ||
      !isa<MemRefType>(op.getDpsInits()[0].getType()))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t reduced = 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [range, iterator] : llvm::zip(ranges, iterators))
    if (iterator == utils::IteratorType::reduction)
      reduced *= range;
  if (reduced < kMinReduced)
    return std::nullopt;
  // The output is indexed by every parallel loop once, by no reduction loop.
  AffineMap outMap = op.getIndexingMapsArray().back();
  if (!outMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (outMap.isFunctionOfDim(dim) !=
        (iterator == utils::IteratorType::parallel))
      return std::nullopt;
  Block &body = generic.getRegion().front();
  BlockArgument outArg = body.getArguments().back();
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || !outArg.hasOneUse() ||
      outArg.getUses().begin()->getOwner() != combiner)
    return std::nullopt;
  std::optional<arith::AtomicRMWKind> kind = reductionKind(combiner);
  if (!kind)
    return std::nullopt;
  Value element = combiner->getOperand(combiner->getOperand(0) == outArg);
  return Reduction{combiner, element, *kind};
}

/// An op of a block kernel: the loops `rowDims` enumerate the block's row
/// (from the block id), `innerDims` what the block's threads share.
struct KernelOp {
  Operation *op;
  SmallVector<int64_t> ranges; // of its loops
  SmallVector<unsigned> rowDims, innerDims;
  std::optional<Reduction> reduction; // of the inner loops

  linalg::LinalgOp linalgOp() const { return cast<linalg::LinalgOp>(op); }
  int64_t innerElements() const {
    int64_t n = 1;
    for (unsigned dim : innerDims)
      n *= ranges[dim];
    return n;
  }
};

/// The ops one kernel runs, in order, all on the same rows.
using Chain = SmallVector<KernelOp>;

/// A reduction on its own: rows are its parallel loops.
KernelOp reductionOnly(linalg::LinalgOp op, const Reduction &reduction) {
  KernelOp kernelOp{op, op.getStaticLoopRanges(), {}, {}, reduction};
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray()))
    (iterator == utils::IteratorType::parallel ? kernelOp.rowDims
                                               : kernelOp.innerDims)
        .push_back(dim);
  return kernelOp;
}

/// Whether `map`, indexing `buffer` in loops whose first ones are the rows'
/// (of shape `rows`), reaches only row p's elements at row p: the buffer's
/// leading dimensions are the rows, indexed by those loops in order, the
/// others by the other loops or constants; its layout is the identity, so
/// that row p is one range of bytes, the p-th.
bool isRowLocal(Value buffer, AffineMap map, ArrayRef<int64_t> rows) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  size_t k = rows.size();
  if (!type || !type.getLayout().isIdentity() ||
      type.getRank() < static_cast<int64_t>(k) ||
      type.getShape().take_front(k) != rows)
    return false;
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    if (i < k) {
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim || dim.getPosition() != i)
        return false;
      continue;
    }
    for (unsigned row = 0; row < k; ++row)
      if (result.isFunctionOfDim(row))
        return false;
  }
  return true;
}

/// `operation` as an op of a chain on rows of shape `rows`: its first loops
/// are the rows' (parallel); at most one loop follows, parallel or a
/// reduction the kernel can take; it writes only at its row.
std::optional<KernelOp> matchRowOp(Operation *operation,
                                   ArrayRef<int64_t> rows) {
  auto op = dyn_cast<linalg::LinalgOp>(operation);
  if (!op || !op.hasPureBufferSemantics() || !hasStaticMemRefs(op))
    return std::nullopt;
  size_t k = rows.size();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if ((ranges.size() != k && ranges.size() != k + 1) ||
      ArrayRef(ranges).take_front(k) != rows)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (llvm::any_of(ArrayRef(iterators).take_front(k),
                   [](auto it) { return it != utils::IteratorType::parallel; }))
    return std::nullopt;
  KernelOp kernelOp{op, ranges, llvm::to_vector(llvm::seq<unsigned>(0, k)),
                    {}, {}};
  if (ranges.size() == k + 1) {
    kernelOp.innerDims.push_back(k);
    if (iterators[k] == utils::IteratorType::reduction) {
      kernelOp.reduction = matchReduction(op);
      if (!kernelOp.reduction)
        return std::nullopt;
    }
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!isRowLocal(init.get(), op.getMatchingIndexingMap(&init), rows))
      return std::nullopt;
  return kernelOp;
}

/// Whether `candidate` can run in the chain's kernel: run row by row, the
/// ops meet at no byte that one of them writes, but for row p's bytes at
/// row p (which the barriers between ops keep in order).
bool canJoin(const Chain &chain, const KernelOp &candidate,
             ArrayRef<int64_t> rows) {
  auto independent = [&](OpOperand &x, OpOperand &y) {
    auto xOp = cast<linalg::LinalgOp>(x.getOwner());
    auto yOp = cast<linalg::LinalgOp>(y.getOwner());
    if (!isa<MemRefType>(x.get().getType()) ||
        !isa<MemRefType>(y.get().getType()))
      return true;
    if (!xOp.isDpsInit(&x) && !yOp.isDpsInit(&y))
      return true;
    if (!gacc::mayOverlap(x.get(), y.get()))
      return true;
    return gacc::isSameBuffer(x.get(), y.get()) &&
           isRowLocal(x.get(), xOp.getMatchingIndexingMap(&x), rows) &&
           isRowLocal(y.get(), yOp.getMatchingIndexingMap(&y), rows);
  };
  for (const KernelOp &member : chain)
    for (OpOperand &x : candidate.op->getOpOperands())
      for (OpOperand &y : member.op->getOpOperands())
        if (!independent(x, y))
          return false;
  return true;
}

/// The chain around a reduction over its last loop: the ops before and
/// after it that can join, passing over ops without memory effects (views,
/// constants), up to the first that cannot.
Chain growChain(const KernelOp &seed, const DenseSet<Operation *> &taken) {
  SmallVector<int64_t> rows(ArrayRef<int64_t>(seed.ranges).drop_back());
  bool manyRows = ShapedType::getNumElements(rows) >= kRowsToFillGpu;
  Chain chain{seed};
  auto tryJoin = [&](Operation *op, bool atFront) {
    if (taken.contains(op))
      return false;
    std::optional<KernelOp> kernelOp = matchRowOp(op, rows);
    if (!kernelOp ||
        (kernelOp->innerElements() > kThreadsPerBlock && !manyRows) ||
        !canJoin(chain, *kernelOp, rows))
      return false;
    chain.insert(atFront ? chain.begin() : chain.end(), *kernelOp);
    return true;
  };
  for (Operation *op = seed.op->getPrevNode(); op; op = op->getPrevNode())
    if (!isMemoryEffectFree(op) && !tryJoin(op, /*atFront=*/true))
      break;
  for (Operation *op = seed.op->getNextNode(); op; op = op->getNextNode())
    if (!isMemoryEffectFree(op) && !tryJoin(op, /*atFront=*/false))
      break;
  return chain;
}

/// Maps the arguments of `op`'s body to its inputs at `loopIndex` (and its
/// outputs' current values, when `readOutputs`), then clones the body but
/// for `skip` and the terminator.
IRMapping emitPayload(ImplicitLocOpBuilder &b, linalg::LinalgOp op,
                      ArrayRef<Value> loopIndex, bool readOutputs,
                      Operation *skip = nullptr) {
  Block *body = op.getBlock();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty() || (op.isDpsInit(&operand) && !readOutputs))
      continue;
    Value value = operand.get();
    if (isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(
          b, value,
          applyMap(b, op.getMatchingIndexingMap(&operand), loopIndex));
    mapping.map(arg, value);
  }
  for (Operation &bodyOp : body->without_terminator()) {
    if (&bodyOp == skip)
      continue;
    if (auto id = dyn_cast<linalg::IndexOp>(bodyOp)) {
      mapping.map(id.getResult(), loopIndex[id.getDim()]);
      continue;
    }
    b.clone(bodyOp, mapping);
  }
  return mapping;
}

/// Combines `a` and `c` with (a clone of) the reduction's combiner.
Value combine(OpBuilder &b, const Reduction &reduction, Value a, Value c) {
  IRMapping mapping;
  mapping.map(reduction.combiner->getOperand(0), a);
  mapping.map(reduction.combiner->getOperand(1), c);
  return b.clone(*reduction.combiner, mapping)->getResult(0);
}

/// The block kernel's view of one op: its row from the block id, its inner
/// loops strided over the threads.
class BlockKernel {
public:
  BlockKernel(gacc::KernelIndexBuilder &ib, Value block, Value thread,
              int64_t threads, const DenseMap<Type, Value> &partials)
      : ib(ib), b(ib.b), block(block), thread(thread), threads(threads),
        partials(partials) {}

  void emit(const KernelOp &kernelOp) {
    if (kernelOp.reduction)
      emitReduction(kernelOp);
    else
      emitElementwise(kernelOp);
  }

private:
  /// Emits the work on the elements t, t + threads, ... of a row of
  /// `elements` (t: this thread), `row` the loop indices of the row's
  /// dimensions. Up to kUnroll elements at a time where the row holds that
  /// many per thread: each element's loads first (`load`), then, once all
  /// of the group's are issued, what is done with them (`finish`), so that a
  /// thread has that many loads in flight instead of one (the iterations of a
  /// parallel loop are independent, and the elements are finished in order).
  /// `carried` values go from element to element (the reduction's partial
  /// result).
  using Load = function_ref<IRMapping(ArrayRef<Value> loopIndex)>;
  using Finish = function_ref<SmallVector<Value>(
      ArrayRef<Value> loopIndex, const IRMapping &loaded, ValueRange carried)>;
  ValueRange stridedLoop(const KernelOp &kernelOp, ArrayRef<Value> row,
                         ValueRange carried, Load load, Finish finish) {
    int64_t elements = kernelOp.innerElements();
    int64_t unroll = std::clamp<int64_t>(elements / threads, 1, kUnroll);
    int64_t chunk = unroll * threads;
    auto emitLoop = [&](int64_t lower, int64_t upper, int64_t group,
                        ValueRange initial) -> ValueRange {
      auto loop = scf::ForOp::create(b, ib.add(thread, lower), ib.index(upper),
                                     ib.index(group * threads), initial);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<SmallVector<Value>> indices;
      SmallVector<IRMapping> loads;
      for (int64_t u = 0; u < group; ++u) {
        indices.emplace_back(row);
        delinearize(b, ib.add(loop.getInductionVar(), u * threads),
                    kernelOp.innerDims, kernelOp.ranges, indices.back());
        loads.push_back(load(indices.back()));
      }
      SmallVector<Value> values(loop.getRegionIterArgs());
      for (int64_t u = 0; u < group; ++u)
        values = finish(indices[u], loads[u], values);
      // A loop without results has its terminator already.
      if (!initial.empty())
        scf::YieldOp::create(b, values);
      return loop.getResults();
    };
    if (unroll == 1)
      return emitLoop(0, elements, 1, carried);
    // Whole groups of `unroll` elements per thread, then the rest.
    int64_t whole = elements / chunk * chunk;
    ValueRange results = emitLoop(0, whole, unroll, carried);
    return whole < elements ? emitLoop(whole, elements, 1, results) : results;
  }

  /// Thread t computes the elements t, t + threads, ... of the row.
  void emitElementwise(const KernelOp &kernelOp) {
    linalg::LinalgOp op = kernelOp.linalgOp();
    SmallVector<Value> row(kernelOp.ranges.size());
    delinearize(b, block, kernelOp.rowDims, kernelOp.ranges, row);
    stridedLoop(
        kernelOp, row, {},
        [&](ArrayRef<Value> loopIndex) {
          return emitPayload(b, op, loopIndex, /*readOutputs=*/true);
        },
        [&](ArrayRef<Value> loopIndex, const IRMapping &mapping, ValueRange) {
          for (auto [init, yielded] :
               llvm::zip(op.getDpsInitsMutable(),
                         op.getBlock()->getTerminator()->getOperands()))
            memref::StoreOp::create(
                b, mapping.lookupOrDefault(yielded), init.get(),
                applyMap(b, op.getMatchingIndexingMap(&init), loopIndex));
          return SmallVector<Value>();
        });
  }

  /// Strided partial results, a tree over workgroup memory, thread 0 folds
  /// the total into the output.
  void emitReduction(const KernelOp &kernelOp) {
    linalg::LinalgOp op = kernelOp.linalgOp();
    const Reduction &reduction = *kernelOp.reduction;
    SmallVector<Value> loopIndex(kernelOp.ranges.size());
    delinearize(b, block, kernelOp.rowDims, kernelOp.ranges, loopIndex);
    Value out = op.getDpsInits()[0];
    Type type = cast<MemRefType>(out.getType()).getElementType();
    Value identity =
        arith::getIdentityValue(reduction.kind, type, b, b.getLoc());
    Value partial =
        stridedLoop(
            kernelOp, loopIndex, identity,
            [&](ArrayRef<Value> elementIndex) {
              return emitPayload(b, op, elementIndex, /*readOutputs=*/false,
                                 reduction.combiner);
            },
            [&](ArrayRef<Value>, const IRMapping &mapping,
                ValueRange acc) -> SmallVector<Value> {
              return {combine(b, reduction, acc.front(),
                              mapping.lookup(reduction.element))};
            })
            .front();
    Value scratch = partials.lookup(type);
    memref::StoreOp::create(b, partial, scratch, thread);
    gpu::BarrierOp::create(b);
    // A tree over workgroup memory: threads/2, threads/4, ..., 1 threads
    // combine the upper half into the lower.
    auto rounds = scf::ForOp::create(
        b, ib.index(0), ib.index(llvm::Log2_64(threads)), ib.index(1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(rounds.getBody()->getTerminator());
      Value half = arith::ShRUIOp::create(b, ib.index(threads / 2),
                                          rounds.getInductionVar());
      Value active =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, thread, half);
      auto branch = scf::IfOp::create(b, active, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(branch.thenBlock()->getTerminator());
        Value mine = memref::LoadOp::create(b, scratch, thread);
        Value other = memref::LoadOp::create(
            b, scratch, ValueRange{ib.add(thread, half)});
        memref::StoreOp::create(b, combine(b, reduction, mine, other),
                                scratch, thread);
      }
      gpu::BarrierOp::create(b);
    }
    Value first =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread, ib.index(0));
    auto branch = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    SmallVector<Value> at =
        applyMap(b, op.getIndexingMapsArray().back(), loopIndex);
    Value total = memref::LoadOp::create(b, scratch, ValueRange{ib.index(0)});
    Value old = memref::LoadOp::create(b, out, at);
    memref::StoreOp::create(b, combine(b, reduction, old, total), out, at);
  }

  gacc::KernelIndexBuilder &ib;
  ImplicitLocOpBuilder &b;
  Value block, thread;
  int64_t threads;
  /// Workgroup memory for each type's partial results: the reductions of
  /// one type share it (the barriers between ops keep them apart).
  const DenseMap<Type, Value> &partials;
};

/// Replaces the chain's ops by one kernel, where the last of them was.
void emitChain(const Chain &chain) {
  Operation *last = chain.back().op;
  SmallVector<Location> locs;
  for (const KernelOp &kernelOp : chain)
    locs.push_back(kernelOp.op->getLoc());
  gacc::KernelIndexBuilder ib(FusedLoc::get(last->getContext(), locs), last);
  ImplicitLocOpBuilder &b = ib.b;

  int64_t rows = 1;
  for (unsigned dim : chain.front().rowDims)
    rows *= chain.front().ranges[dim];
  // Enough threads for the widest op, a power of two (the reduction tree).
  int64_t widest = 1;
  SetVector<Type> reducedTypes;
  for (const KernelOp &kernelOp : chain) {
    widest = std::max(widest, kernelOp.innerElements());
    if (kernelOp.reduction)
      reducedTypes.insert(getElementTypeOrSelf(
          kernelOp.linalgOp().getDpsInits()[0].getType()));
  }
  int64_t threads =
      std::clamp<int64_t>(llvm::PowerOf2Ceil(widest), 32, kThreadsPerBlock);

  auto launch =
      gpu::LaunchOp::create(b, ib.index(rows), ib.index(1), ib.index(1),
                            ib.index(threads), ib.index(1), ib.index(1));
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  DenseMap<Type, Value> partials;
  for (Type type : reducedTypes)
    partials[type] = launch.addWorkgroupAttribution(
        MemRefType::get({threads}, type, nullptr, workgroup), b.getLoc());
  b.setInsertionPointToStart(&launch.getBody().front());
  BlockKernel kernel(ib, launch.getBlockIds().x, launch.getThreadIds().x,
                     threads, partials);
  for (auto [i, kernelOp] : llvm::enumerate(chain)) {
    if (i)
      gpu::BarrierOp::create(b);
    kernel.emit(kernelOp);
  }
  gpu::TerminatorOp::create(b);
}

struct BlockReductionsPass
    : public gacc::impl::BlockReductionsBase<BlockReductionsPass> {
  void runOnOperation() override {
    SmallVector<Chain> chains;
    DenseSet<Operation *> taken;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (taken.contains(op))
        return;
      std::optional<Reduction> reduction = matchReduction(op);
      if (!reduction)
        return;
      KernelOp seed = reductionOnly(op, *reduction);
      // Only a reduction over its last loop has rows its neighbours share.
      bool overLastLoop = seed.innerDims == SmallVector<unsigned>{
                                                   op.getNumLoops() - 1};
      chains.push_back(overLastLoop ? growChain(seed, taken) : Chain{seed});
      for (const KernelOp &kernelOp : chains.back())
        taken.insert(kernelOp.op);
    });
    for (const Chain &chain : chains) {
      emitChain(chain);
      for (const KernelOp &kernelOp : chain)
        kernelOp.op->erase();
    }
  }
};
} // namespace
