//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls whole ----===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
/// Whether every user of `producer` but `consumer`, and every user of
/// `consumer`, writes a slot (bufferization.materialize_in_destination)
/// within a few operations after `consumer`, as BuildStep emits them. (A
/// bounded walk: asking the block for the order of two operations after
/// each rewrite would renumber it, quadratic in the step's size.)
bool slotWritesFollow(Operation *producer, Operation *consumer) {
  constexpr int kWindow = 16;
  SmallPtrSet<Operation *, 8> writes;
  for (Operation *op : {producer, consumer})
    for (Operation *user : op->getUsers()) {
      if (user == consumer)
        continue;
      if (!isa<bufferization::MaterializeInDestinationOp>(user))
        return false;
      writes.insert(user);
    }
  int seen = 0;
  Operation *op = consumer->getNextNode();
  for (int i = 0; op && i < kWindow && seen < int(writes.size());
       ++i, op = op->getNextNode())
    seen += writes.contains(op);
  return seen == int(writes.size());
}

/// Fuses a generic whose value is also written to an arena slot into an
/// all-parallel consumer that reads each of its elements once (a
/// permutation map) and whose own values go only to slots: one pass
/// instead of two, nothing computed twice. An optimizer's update is the
/// case: the new moment is written to its slot and read by the weight's
/// update. Both values having a home, the fused op needs no temporary; a
/// fused op with a temporary output would keep the producer's inputs alive
/// beside it where they could have shared memory. The slot writes must come
/// after the consumer, where the fused op is.
struct FuseSharedProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (consumer.getNumLoops() != consumer.getNumParallelLoops())
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          !consumer.getMatchingIndexingMap(operand).isPermutation() ||
          !linalg::areElementwiseOpsFusable(operand))
        continue;
      if (!slotWritesFollow(producer, consumer))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      // A producer result only the consumer read has no replacement.
      for (Operation *op : {consumer.getOperation(), producer.getOperation()})
        for (Value result : op->getResults())
          if (Value replacement = fused->replacements.lookup(result))
            rewriter.replaceAllUsesWith(result, replacement);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// Whether `generic` only rounds or widens its one input, elementwise and in
/// place: a chain of truncf and extf from the input to the result.
bool isConversionChain(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1)
    return false;
  OpOperand *input = generic.getDpsInputOperand(0);
  if (generic.getMatchingIndexingMap(input) !=
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)))
    return false;
  Block &body = generic.getRegion().front();
  Value value = generic.getMatchingBlockArgument(input);
  for (Operation &op : body.without_terminator()) {
    if (!isa<arith::TruncFOp, arith::ExtFOp>(op) || op.getOperand(0) != value)
      return false;
    value = op.getResult(0);
  }
  return value != generic.getMatchingBlockArgument(input) &&
         body.getTerminator()->getOperand(0) == value;
}

/// The most operations a body computed again (in each user, or for one
/// element) may have: long enough for GELU's tanh approximation and its
/// derivative, short enough that chains fused into each other stay small.
constexpr int64_t kMaxRecomputedOps = 24;

/// Whether `producer` is cheap to compute again in each of its users, so
/// that its value is never stored: an all-parallel generic with one result
/// and a short body that does not read its output, reading at most one
/// tensor as large as its result (indexed alike, no wider) and, besides,
/// only much smaller ones (a row's maximum, a bias, scalars); every user a
/// generic in its block that reads each element once (no broadcast: a
/// row's value would be computed again for every column) and can fuse it.
/// Computing it again keeps that one input alive where the result would
/// have been, no more bytes, and saves writing the result and reading it
/// back. With `anyBody` false, only a chain of truncf and extf from its
/// input (mixed precision's 16-bit rounding between a matmul's f32 result
/// and its f32 consumers) qualifies. (Only when all users can: a producer
/// left for one user keeps its value stored anyway, and now its inputs
/// too.)
bool isRecomputableForEveryUser(Operation *producer, bool anyBody) {
  // The other inputs together: at most this fraction of the result.
  constexpr int64_t kSmallInputRatio = 16;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumResults() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      producer->hasOneUse() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return false;
  auto resultType = dyn_cast<RankedTensorType>(generic.getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() ||
      !resultType.getElementType().isIntOrFloat())
    return false;
  Block &body = generic.getRegion().front();
  if (int64_t(body.getOperations().size()) > kMaxRecomputedOps + 1 ||
      llvm::any_of(body.without_terminator(),
                   [](Operation &op) { return !isPure(&op); }))
    return false;
  int64_t resultElements = resultType.getNumElements();
  AffineMap resultMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  Value large;
  int64_t smallElements = 0;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(input->get().getType());
    if (!type) { // A scalar.
      ++smallElements;
      continue;
    }
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return false;
    if (type.getNumElements() * kSmallInputRatio <= resultElements) {
      smallElements += type.getNumElements();
      continue;
    }
    if ((large && large != input->get()) ||
        generic.getMatchingIndexingMap(input) != resultMap ||
        type.getElementType().getIntOrFloatBitWidth() >
            resultType.getElementType().getIntOrFloatBitWidth())
      return false;
    large = input->get();
  }
  if (smallElements * kSmallInputRatio > resultElements)
    return false;
  // A value made of much smaller inputs only (a one-hot of targets, a
  // broadcast bias) is worth computing again on every target: its readers
  // then read those inputs instead of the value.
  if (!anyBody && large && !isConversionChain(generic))
    return false;
  return llvm::all_of(producer->getUses(), [&](OpOperand &use) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    return consumer && consumer->getBlock() == producer->getBlock() &&
           consumer.isDpsInput(&use) &&
           consumer.getMatchingIndexingMap(&use).isPermutation() &&
           linalg::areElementwiseOpsFusable(&use);
  });
}

/// Gives each user of a producer that is cheap to compute again its own
/// copy, just before it; elementwise fusion then folds each copy into its
/// user (linalg's fusion of a producer with several users would instead
/// keep computing and storing its value in the first user it fuses into).
struct RecomputeSharedProducer : OpRewritePattern<linalg::GenericOp> {
  RecomputeSharedProducer(MLIRContext *context, bool anyBody)
      : OpRewritePattern(context), anyBody(anyBody) {}
  LogicalResult matchAndRewrite(linalg::GenericOp producer,
                                PatternRewriter &rewriter) const override {
    if (!isRecomputableForEveryUser(producer, anyBody))
      return failure();
    for (OpOperand &use : llvm::make_early_inc_range(producer->getUses())) {
      rewriter.setInsertionPoint(use.getOwner());
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(use.getOwner(),
                               [&] { use.set(copy->getResult(0)); });
    }
    rewriter.eraseOp(producer);
    return success();
  }
  bool anyBody;
};

/// The input a generic copies to its result with permuted indices (a
/// transpose: one input, all parallel, the body yielding the input's
/// element), with the map from the result's indices to the input's, or
/// null.
std::pair<Value, AffineMap> permutedSource(Operation *op) {
  if (auto transpose = dyn_cast_if_present<linalg::TransposeOp>(op)) {
    // Result dimension i is input dimension permutation[i].
    SmallVector<unsigned> inverse(transpose.getPermutation().size());
    for (auto [i, p] : llvm::enumerate(transpose.getPermutation()))
      inverse[p] = i;
    return {transpose.getInput(),
            AffineMap::getPermutationMap(inverse, op->getContext())};
  }
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumResults() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return {};
  OpOperand *input = generic.getDpsInputOperand(0);
  AffineMap inputMap = generic.getMatchingIndexingMap(input);
  AffineMap resultMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  Block &body = generic.getRegion().front();
  if (!inputMap.isPermutation() || !resultMap.isPermutation() ||
      body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) !=
          generic.getMatchingBlockArgument(input))
    return {};
  return {input->get(), inputMap.compose(inversePermutation(resultMap))};
}

/// Reads an element of a transpose, or of a static reshape, from the value
/// it rearranges: col2im gathers the columns' gradient element by element
/// (tensor.extract), so the transpose that puts the GEMM's [G, C·KH·KW,
/// N·L] result in [N, C, KH·KW, L] order was a pass of its own over a
/// tensor KH·KW times the image. Reshapes map indices by multiply-adds (an
/// expansion) or, for a collapse, only where each group has one dimension
/// larger than 1 (no division).
struct FoldExtractOfRearrangement : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    Location loc = extract.getLoc();
    Operation *source = extract.getTensor().getDefiningOp();
    SmallVector<Value> indices(extract.getIndices());
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    if (auto [input, map] = permutedSource(source); input) {
      SmallVector<Value> permuted;
      for (AffineExpr result : map.getResults())
        permuted.push_back(
            indices[cast<AffineDimExpr>(result).getPosition()]);
      rewriter.replaceOpWithNewOp<tensor::ExtractOp>(extract, input, permuted);
      return success();
    }
    if (auto expand = dyn_cast_if_present<tensor::ExpandShapeOp>(source)) {
      RankedTensorType type = expand.getResultType();
      if (!type.hasStaticShape())
        return failure();
      SmallVector<Value> linear;
      for (const ReassociationIndices &group :
           expand.getReassociationIndices()) {
        Value index = constant(0);
        for (int64_t d : group)
          index = arith::AddIOp::create(
              rewriter, loc,
              arith::MulIOp::create(rewriter, loc, index,
                                    constant(type.getDimSize(d))),
              indices[d]);
        linear.push_back(index);
      }
      rewriter.replaceOpWithNewOp<tensor::ExtractOp>(extract, expand.getSrc(),
                                                     linear);
      return success();
    }
    if (auto collapse = dyn_cast_if_present<tensor::CollapseShapeOp>(source)) {
      RankedTensorType type = collapse.getSrcType();
      if (!type.hasStaticShape())
        return failure();
      SmallVector<Value> spread(type.getRank());
      for (auto [i, group] :
           llvm::enumerate(collapse.getReassociationIndices())) {
        if (llvm::count_if(group, [&](int64_t d) {
              return type.getDimSize(d) != 1;
            }) > 1)
          return failure();
        for (int64_t d : group)
          spread[d] = type.getDimSize(d) == 1 && group.size() > 1
                          ? constant(0)
                          : indices[i];
      }
      rewriter.replaceOpWithNewOp<tensor::ExtractOp>(
          extract, collapse.getSrc(), spread);
      return success();
    }
    return failure();
  }
};

/// The indices `map` (a projected permutation, zeros allowed) gives an
/// operand at the loop indices `loops`.
SmallVector<Value> operandIndices(OpBuilder &b, Location loc, AffineMap map,
                                  ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (AffineExpr result : map.getResults())
    indices.push_back(
        isa<AffineDimExpr>(result)
            ? loops[cast<AffineDimExpr>(result).getPosition()]
            : arith::ConstantIndexOp::create(b, loc, 0).getResult());
  return indices;
}

/// Element `indices` of `tensor`, computed from its producer's inputs when
/// that is an elementwise generic (all parallel, one result, its inputs read
/// through projected permutations, no loop indices, a short pure body):
/// one element no longer needs the whole tensor.
Value extractElement(OpBuilder &b, Location loc, Value tensor,
                     ArrayRef<Value> indices, int depth = 0) {
  constexpr int kMaxDepth = 4;
  auto generic = tensor.getDefiningOp<linalg::GenericOp>();
  auto elementwise = [&] {
    if (!generic || depth == kMaxDepth || generic.getNumResults() != 1 ||
        generic.getNumLoops() != generic.getNumParallelLoops() ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
             .isIdentity() ||
        generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
      return false;
    Block &body = generic.getRegion().front();
    if (int64_t(body.getOperations().size()) > kMaxRecomputedOps + 1)
      return false;
    for (Operation &op : body.without_terminator())
      if (!isPure(&op) || isa<linalg::IndexOp>(op) || op.getNumRegions())
        return false;
    return llvm::all_of(generic.getDpsInputOperands(), [&](OpOperand *input) {
      return generic.getMatchingIndexingMap(input).isProjectedPermutation(
          /*allowZeroInResults=*/true);
    });
  };
  if (!elementwise())
    return tensor::ExtractOp::create(b, loc, tensor, indices);
  IRMapping mapping;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    BlockArgument argument = generic.getMatchingBlockArgument(input);
    if (!isa<RankedTensorType>(input->get().getType())) {
      mapping.map(argument, input->get());
      continue;
    }
    SmallVector<Value> at =
        operandIndices(b, loc, generic.getMatchingIndexingMap(input), indices);
    mapping.map(argument, extractElement(b, loc, input->get(), at, depth + 1));
  }
  Block &body = generic.getRegion().front();
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(body.getTerminator()->getOperand(0));
}

/// A sum over a loop of a one-hot term, `Σ_c [c == t] · v(c)` (the
/// one-hot a multiplier `select(c == t, 1, 0)`, or the select of `v(c)`
/// and 0), is `v(t)`, or 0 for a `t` outside the loop's range: the loop is
/// dropped and the inputs it indexed are read at `t` (extractElement).
/// Cross-entropy's picked log-probability read all of GPT-2-small's 1024 x
/// 50257 logits, and a logarithm for each, to pick 1024 of them; as
/// PyTorch's nll_loss, only the picked element is read (another class's
/// infinite logit no longer makes a NaN of 0 · inf).
struct SumOfOneHotToExtract : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp sum,
                                PatternRewriter &rewriter) const override {
    if (!sum.hasPureTensorSemantics() || sum.getNumDpsInits() != 1 ||
        sum.getNumResults() != 1)
      return failure();
    Block &body = sum.getRegion().front();
    BlockArgument acc = sum.getRegionOutputArgs()[0];
    auto add =
        body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!add || !acc.hasOneUse() || !add->hasOneUse() ||
        (add.getLhs() != acc && add.getRhs() != acc))
      return failure();
    Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();
    // The one-hot: select(index(d) == t, 1, 0) times v, or select(.., v, 0).
    auto isConstant = [](Value v, double value) {
      auto constant = v.getDefiningOp<arith::ConstantFloatOp>();
      return constant && constant.value().isExactlyValue(value);
    };
    arith::SelectOp oneHot;
    if (auto mul = term.getDefiningOp<arith::MulFOp>()) {
      for (Value factor : {mul.getLhs(), mul.getRhs()})
        if (auto select = factor.getDefiningOp<arith::SelectOp>();
            select && isConstant(select.getTrueValue(), 1.0) &&
            isConstant(select.getFalseValue(), 0.0))
          oneHot = select;
    } else if (auto select = term.getDefiningOp<arith::SelectOp>();
               select && isConstant(select.getFalseValue(), 0.0)) {
      oneHot = select;
    }
    auto compare =
        oneHot ? oneHot.getCondition().getDefiningOp<arith::CmpIOp>() : nullptr;
    if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
      return failure();
    std::optional<unsigned> loop;
    BlockArgument target;
    for (auto [index, other] :
         {std::pair(compare.getLhs(), compare.getRhs()),
          std::pair(compare.getRhs(), compare.getLhs())}) {
      auto cast = index.getDefiningOp<arith::IndexCastOp>();
      auto position =
          cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
      auto argument = dyn_cast<BlockArgument>(other);
      if (position && argument && argument.getOwner() == &body &&
          argument != acc) {
        loop = position.getDim();
        target = argument;
      }
    }
    if (!loop ||
        sum.getIteratorTypesArray()[*loop] != utils::IteratorType::reduction)
      return failure();
    OpOperand *targetOperand = sum.getMatchingOpOperand(target);
    SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
    if (maps[targetOperand->getOperandNumber()].isFunctionOfDim(*loop) ||
        maps.back().isFunctionOfDim(*loop))
      return failure();
    SmallVector<int64_t> ranges = sum.getStaticLoopRanges();
    if (ShapedType::isDynamic(ranges[*loop]))
      return failure();

    // The sum without the loop: the inputs it indexes are read in the body.
    Location loc = sum.getLoc();
    llvm::SmallBitVector dropped(sum.getNumLoops());
    dropped.set(*loop);
    SmallVector<OpOperand *> kept, gathered;
    SmallVector<Value> inputs;
    SmallVector<AffineMap> newMaps;
    for (OpOperand *input : sum.getDpsInputOperands()) {
      AffineMap map = sum.getMatchingIndexingMap(input);
      if (map.isFunctionOfDim(*loop)) {
        if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
          return failure();
        gathered.push_back(input);
        continue;
      }
      kept.push_back(input);
      inputs.push_back(input->get());
      newMaps.push_back(compressDims(map, dropped));
    }
    newMaps.push_back(compressDims(maps.back(), dropped));
    SmallVector<utils::IteratorType> iterators = sum.getIteratorTypesArray();
    iterators.erase(iterators.begin() + *loop);
    auto build = [&](OpBuilder &b, Location loc, ValueRange arguments) {
      IRMapping mapping;
      for (auto [input, argument] : llvm::zip(kept, arguments))
        mapping.map(sum.getMatchingBlockArgument(input), argument);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value size = arith::ConstantIndexOp::create(b, loc, ranges[*loop]);
      Value t = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           mapping.lookup(target));
      Value valid = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, t, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, size));
      // The loops' indices, the dropped one t (in range: it is read).
      SmallVector<Value> indices;
      for (unsigned d = 0; d < sum.getNumLoops(); ++d)
        indices.push_back(
            d == *loop
                ? arith::SelectOp::create(b, loc, valid, t, zero).getResult()
                : linalg::IndexOp::create(b, loc, d < *loop ? d : d - 1)
                      .getResult());
      for (OpOperand *input : gathered)
        mapping.map(
            sum.getMatchingBlockArgument(input),
            extractElement(b, loc, input->get(),
                           operandIndices(b, loc,
                                          sum.getMatchingIndexingMap(input),
                                          indices)));
      for (Operation &op : body.without_terminator()) {
        if (&op == add.getOperation())
          continue;
        if (auto index = dyn_cast<linalg::IndexOp>(op))
          mapping.map(index.getResult(), indices[index.getDim()]);
        else
          b.clone(op, mapping);
      }
      Value value = arith::SelectOp::create(
          b, loc, valid, mapping.lookup(term),
          arith::ConstantOp::create(b, loc, b.getZeroAttr(term.getType())));
      linalg::YieldOp::create(
          b, loc,
          ValueRange{arith::AddFOp::create(b, loc, value, arguments.back())});
    };
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        sum, sum.getResultTypes(), inputs, sum.getDpsInitOperand(0)->get(),
        newMaps, iterators, build);
    return success();
  }
};

struct FuseElementwisePass
    : public gacc::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // As linalg-fuse-elementwise-ops: fuse producers with one use (upstream
    // keeps a shared producer's value as a result of the first consumer it
    // fuses into; RecomputeSharedProducer copies the cheap ones for each
    // user first, FuseSharedProducer handles values written to slots), but
    // never into or out of a named contraction, which would become a
    // generic (reshapes fold by expanding their producer's or consumer's
    // loops).
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !isa<linalg::ContractionOpInterface>(producer) &&
             !isa<linalg::ContractionOpInterface>(fused->getOwner());
    };
    MLIRContext *context = &getContext();
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    patterns.add<FuseSharedProducer>(context);
    patterns.add<RecomputeSharedProducer>(context, recomputeProducers);
    patterns.add<FoldExtractOfRearrangement, SumOfOneHotToExtract>(context);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    // A reshape that regroups dimensions (a collapse, then an expansion)
    // becomes expansion first, so each half folds into its generic.
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
