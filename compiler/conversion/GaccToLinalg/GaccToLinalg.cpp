//===- GaccToLinalg.cpp - the convert-gacc-to-linalg pass -------------------===//

#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_CONVERTGACCTOLINALG
#include "compiler/conversion/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct ConvertGaccToLinalgPass
    : public gacc::impl::ConvertGaccToLinalgBase<ConvertGaccToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                           func::FuncDialect, linalg::LinalgDialect,
                           math::MathDialect, memref::MemRefDialect,
                           tensor::TensorDialect>();
    // Every compute op must lower; declarations, loads and the step stay.
    target.addIllegalDialect<GaccDialect>();
    // The barrier stays until bufferization (see its description); fused
    // attention until its target's kernels (gacc-cuda-flash-attention).
    target.addLegalOp<ParamOp, InputOp, LoadOp, TrainStepOp,
                      OptimizationBarrierOp, AttentionOp, AttentionGradOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });

    RewritePatternSet patterns(context);
    populateElementwiseToLinalgPatterns(patterns);
    populateStructuredToLinalgPatterns(patterns);
    populateShapeToTensorPatterns(patterns);
    populateIndexOpsToLinalgPatterns(patterns);
    populateCollectivesToCallsPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
