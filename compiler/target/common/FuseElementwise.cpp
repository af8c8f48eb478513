//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls whole ----===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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
  // Long enough for GELU's tanh approximation and its derivative, short
  // enough that chains fused into each other stay small.
  constexpr int64_t kMaxBodyOps = 24;
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
  if (int64_t(body.getOperations().size()) > kMaxBodyOps + 1 ||
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
    patterns.add<FoldExtractOfRearrangement>(context);
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
