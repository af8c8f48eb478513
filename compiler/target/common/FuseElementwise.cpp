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

/// Whether `producer` only rounds or widens its one input, elementwise and
/// in place (a chain of truncf and extf from the input to the result, as
/// mixed precision leaves between a matmul's f32 result and its f32
/// consumers, the result at least as wide as the input), and every user is
/// a generic it can fuse into: then each consumer converts for itself, and
/// the converted tensor, written and read again, is never made. (Only when
/// all of them fuse: a producer left for one consumer would keep its input
/// alive as well. A narrowing alone stays: its consumers would read the
/// wider input, and keep it alive longer.)
bool isConversionForEveryUser(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumResults() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  OpOperand *input = generic.getDpsInputOperand(0);
  OpOperand *init = generic.getDpsInitOperand(0);
  if (generic.getMatchingIndexingMap(input) !=
      generic.getMatchingIndexingMap(init))
    return false;
  Block &body = generic.getRegion().front();
  Value value = generic.getMatchingBlockArgument(input);
  for (Operation &op : body.without_terminator()) {
    if (!isa<arith::TruncFOp, arith::ExtFOp>(op) || op.getOperand(0) != value)
      return false;
    value = op.getResult(0);
  }
  if (value == generic.getMatchingBlockArgument(input) ||
      body.getTerminator()->getOperand(0) != value)
    return false;
  auto elementWidth = [](Value v) {
    return getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  };
  if (elementWidth(generic.getResult(0)) < elementWidth(input->get()))
    return false;
  return llvm::all_of(producer->getUses(), [](OpOperand &use) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    return consumer && consumer.isDpsInput(&use) &&
           linalg::areElementwiseOpsFusable(&use);
  });
}

struct FuseElementwisePass
    : public gacc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // As linalg-fuse-elementwise-ops: fuse producers with one use (upstream
    // recomputes a shared producer in each consumer; FuseSharedProducer
    // handles those, isConversionForEveryUser the 16-bit roundings, cheaper
    // to repeat than to store), but never into or out of a named
    // contraction, which would become a generic (reshapes fold by
    // expanding their producer's or consumer's loops).
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer &&
             (producer->hasOneUse() || isConversionForEveryUser(producer)) &&
             !isa<linalg::ContractionOpInterface>(producer) &&
             !isa<linalg::ContractionOpInterface>(fused->getOwner());
    };
    MLIRContext *context = &getContext();
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    patterns.add<FuseSharedProducer>(context);
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
