//===- SplitReductions.cpp - full reductions as per-chunk partial sums ----===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "passes/ArenaViews.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_SPLITREDUCTIONS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// The most chunks: enough for the pool's threads, few enough that their
/// sum costs nothing.
constexpr int64_t kMaxPartials = 64;
/// Bytes between two partial sums: one cache line each, so that threads
/// summing neighbouring chunks do not share one.
constexpr int64_t kPartialBytes = 64;

/// Whether `generic` sums into a rank-0 buffer over every loop: all loops
/// reductions, its output's block argument only added to once (`out + x`),
/// its inputs read whole in row-major order or as scalars other than the
/// output, no linalg.index.
bool isFullSum(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() == 0 ||
      generic.getNumReductionLoops() != generic.getNumLoops())
    return false;
  auto output =
      dyn_cast<MemRefType>(generic.getDpsInitOperand(0)->get().getType());
  if (!output || output.getRank() != 0 ||
      !isa<FloatType>(output.getElementType()))
    return false;
  Value total = generic.getDpsInitOperand(0)->get();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    AffineMap map = generic.getMatchingIndexingMap(input);
    bool scalar =
        type && type.getRank() == 0 && !gacc::mayOverlap(input->get(), total);
    bool whole = type && map.isIdentity() &&
                 memref::isStaticShapeAndContiguousRowMajor(type);
    if (!scalar && !whole)
      return false;
  }
  Block &body = generic.getRegion().front();
  if (body.walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return false;
  BlockArgument out = generic.getRegionOutputArgs()[0];
  auto sum = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  return sum && out.hasOneUse() && (sum.getLhs() == out || sum.getRhs() == out);
}

/// The most partial sums, at most kMaxPartials, that split `elements`
/// evenly; 1 when none does.
int64_t partialsFor(int64_t elements) {
  for (int64_t partials = kMaxPartials; partials > 1; --partials)
    if (elements % partials == 0)
      return partials;
  return 1;
}

struct SplitReductionsPass
    : public gacc::impl::SplitReductionsBase<SplitReductionsPass> {
  using SplitReductionsBase::SplitReductionsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> sums;
    getOperation()->walk([&](linalg::GenericOp generic) {
      if (isFullSum(generic))
        sums.push_back(generic);
    });
    for (linalg::GenericOp sum : sums)
      split(sum);
  }

  void split(linalg::GenericOp sum) {
    SmallVector<int64_t> ranges = sum.getStaticLoopRanges();
    int64_t elements = 1;
    for (int64_t range : ranges)
      elements *= range;
    int64_t partials = partialsFor(elements);
    if (elements < minElements || partials == 1)
      return;
    int64_t chunk = elements / partials;

    Location loc = sum.getLoc();
    OpBuilder b(sum);
    MLIRContext *context = b.getContext();
    AffineExpr p = b.getAffineDimExpr(0), i = b.getAffineDimExpr(1);
    auto chunked = AffineMap::get(2, 0, {p, i}, context);
    auto scalar = AffineMap::get(2, 0, {}, context);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (Value input : sum.getDpsInputs()) {
      auto type = cast<MemRefType>(input.getType());
      if (type.getRank() == 0) {
        inputs.push_back(input);
        maps.push_back(scalar);
        continue;
      }
      Value flat = input;
      if (type.getRank() > 1) {
        ReassociationIndices all =
            llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
        flat = memref::CollapseShapeOp::create(
            b, loc, input, ArrayRef<ReassociationIndices>{all});
      }
      inputs.push_back(memref::ExpandShapeOp::create(
          b, loc, SmallVector<int64_t>{partials, chunk}, flat,
          ArrayRef<ReassociationIndices>{{0, 1}}));
      maps.push_back(chunked);
    }
    Value total = sum.getDpsInitOperand(0)->get();
    Type element = cast<MemRefType>(total.getType()).getElementType();
    // Partial p at [p, 0], a cache line from the next; on the stack of the
    // function, not of each iteration of a loop around the sum.
    int64_t stride = std::max<int64_t>(
        kPartialBytes / (element.getIntOrFloatBitWidth() / 8), 1);
    Block &scope =
        sum->getParentOfType<FunctionOpInterface>().getFunctionBody().front();
    OpBuilder atStart = OpBuilder::atBlockBegin(&scope);
    Value partial = memref::AllocaOp::create(
        atStart, loc, MemRefType::get({partials, stride}, element),
        atStart.getI64IntegerAttr(kPartialBytes));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    linalg::FillOp::create(b, loc, zero, partial);
    AffineExpr first = b.getAffineConstantExpr(0);
    maps.push_back(AffineMap::get(2, 0, {p, first}, context));
    using utils::IteratorType;
    auto partialSums = linalg::GenericOp::create(
        b, loc, TypeRange{}, inputs, ValueRange{partial}, maps,
        {IteratorType::parallel, IteratorType::reduction});
    partialSums.getRegion().takeBody(sum.getRegion());
    // The total adds the partial sums in order to what it held.
    auto one = AffineMap::get(1, 0, {p, first}, context);
    linalg::GenericOp::create(
        b, loc, TypeRange{}, ValueRange{partial}, ValueRange{total},
        {one, AffineMap::get(1, 0, {}, context)}, {IteratorType::reduction},
        [&](OpBuilder &nested, Location at, ValueRange args) {
          Value added = arith::AddFOp::create(nested, at, args[1], args[0]);
          linalg::YieldOp::create(nested, at, added);
        });
    sum.erase();
    ++numSplit;
  }
};
} // namespace
