//===- BlockReductions.cpp - one block per reduced element ------------------===//

#include "compiler/target/cuda/KernelCodegen.h"
#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
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

/// A reduction `out[p] = combine(out[p], f(inputs at (p, r)))` the kernel
/// can take: one output indexed by exactly the parallel loops, static
/// shapes, enough reduced elements, and the output read only by the
/// combiner.
struct Reduction {
  linalg::GenericOp op;
  Operation *combiner;
  Value element; // f(inputs), the combiner's other operand
  arith::AtomicRMWKind kind;
};

std::optional<Reduction> matchReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
  }
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
  Block &body = op.getRegion().front();
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
  return Reduction{op, combiner, element, *kind};
}

/// Combines `a` and `b` with (a clone of) the reduction's combiner.
Value combine(OpBuilder &b, const Reduction &reduction, Value a, Value c) {
  IRMapping mapping;
  mapping.map(reduction.combiner->getOperand(0), a);
  mapping.map(reduction.combiner->getOperand(1), c);
  return b.clone(*reduction.combiner, mapping)->getResult(0);
}

void emitBlockReduction(const Reduction &reduction) {
  linalg::GenericOp op = reduction.op;
  gacc::KernelIndexBuilder ib(op.getLoc(), op);
  ImplicitLocOpBuilder &b = ib.b;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> parallelDims, reducedDims;
  int64_t outputs = 1, reduced = 1;
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator == utils::IteratorType::parallel) {
      parallelDims.push_back(dim);
      outputs *= ranges[dim];
    } else {
      reducedDims.push_back(dim);
      reduced *= ranges[dim];
    }
  }
  Value out = op.getDpsInits()[0];
  Type type = cast<MemRefType>(out.getType()).getElementType();
  auto index = [&](int64_t v) { return ib.index(v); };
  auto launch =
      gpu::LaunchOp::create(b, index(outputs), index(1), index(1),
                            index(kThreadsPerBlock), index(1), index(1));
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value partial = launch.addWorkgroupAttribution(
      MemRefType::get({kThreadsPerBlock}, type, nullptr, workgroup),
      b.getLoc());
  b.setInsertionPointToStart(&launch.getBody().front());
  Value block = launch.getBlockIds().x, thread = launch.getThreadIds().x;
  SmallVector<Value> loopIndex(ranges.size());
  delinearize(b, block, parallelDims, ranges, loopIndex);

  // Each thread combines the elements r = thread, thread + 256, ...
  Value identity = arith::getIdentityValue(reduction.kind, type, b, b.getLoc());
  auto strided = scf::ForOp::create(b, thread, index(reduced),
                                    index(kThreadsPerBlock),
                                    ValueRange{identity});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(strided.getBody());
    delinearize(b, strided.getInductionVar(), reducedDims, ranges, loopIndex);
    Block &body = op.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands())
      mapping.map(body.getArgument(input->getOperandNumber()),
                  memref::LoadOp::create(
                      b, input->get(),
                      applyMap(b, op.getMatchingIndexingMap(input),
                               loopIndex)));
    for (Operation &bodyOp : body.without_terminator()) {
      if (&bodyOp == reduction.combiner)
        continue;
      if (auto id = dyn_cast<linalg::IndexOp>(bodyOp)) {
        mapping.map(id.getResult(), loopIndex[id.getDim()]);
        continue;
      }
      b.clone(bodyOp, mapping);
    }
    Value acc = strided.getRegionIterArgs()[0];
    scf::YieldOp::create(
        b, combine(b, reduction, acc, mapping.lookup(reduction.element)));
  }
  memref::StoreOp::create(b, strided.getResult(0), partial, thread);
  gpu::BarrierOp::create(b);
  // A tree over workgroup memory: 128, 64, ..., 1 threads add the upper
  // half to the lower.
  auto rounds = scf::ForOp::create(b, index(0),
                                   index(llvm::Log2_64(kThreadsPerBlock)),
                                   index(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rounds.getBody()->getTerminator());
    Value half = arith::ShRUIOp::create(b, index(kThreadsPerBlock / 2),
                                        rounds.getInductionVar());
    Value active =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, thread, half);
    auto branch = scf::IfOp::create(b, active, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      Value mine = memref::LoadOp::create(b, partial, thread);
      Value other = memref::LoadOp::create(
          b, partial, ValueRange{ib.add(thread, half)});
      memref::StoreOp::create(b, combine(b, reduction, mine, other), partial,
                              thread);
    }
    gpu::BarrierOp::create(b);
  }
  Value first =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread, index(0));
  auto branch = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    SmallVector<Value> at =
        applyMap(b, op.getIndexingMapsArray().back(), loopIndex);
    Value total = memref::LoadOp::create(b, partial, ValueRange{index(0)});
    Value old = memref::LoadOp::create(b, out, at);
    memref::StoreOp::create(b, combine(b, reduction, old, total), out, at);
  }
  gpu::TerminatorOp::create(b);
}

struct BlockReductionsPass
    : public gacc::impl::BlockReductionsBase<BlockReductionsPass> {
  void runOnOperation() override {
    SmallVector<Reduction> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<Reduction> reduction = matchReduction(op))
        reductions.push_back(*reduction);
    });
    for (Reduction &reduction : reductions) {
      emitBlockReduction(reduction);
      reduction.op.erase();
    }
  }
};
} // namespace
