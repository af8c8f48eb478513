//===- BufferizationInterfaces.cpp - gacc ops through bufferization ---------===//

#include "compiler/BufferizationInterfaces.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {
/// Each result is its operand's buffer: no copy, no read, no write.
struct OptimizationBarrierInterface
    : public BufferizableOpInterface::ExternalModel<
          OptimizationBarrierInterface, gacc::OptimizationBarrierOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    SmallVector<Value> buffers;
    for (Value input : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, input, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    replaceOpWithBufferizedValues(rewriter, op, buffers);
    return success();
  }
};

/// gacc.attention and gacc.attention_grad write their outputs into their
/// `into` operands' buffers, which they do not read (tensor.empty needs no
/// copy).
template <typename OpTy>
struct AttentionInterface
    : public DstBufferizableOpInterfaceExternalModel<AttentionInterface<OpTy>,
                                                     OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    SmallVector<Value> buffers, outputs;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
      if (dps.isDpsInit(&operand))
        outputs.push_back(*buffer);
    }
    // The same op on the buffers, without results.
    rewriter.setInsertionPoint(op);
    OperationState onBuffers(op->getLoc(), op->getName(), buffers, TypeRange{},
                             op->getAttrs());
    rewriter.create(onBuffers);
    replaceOpWithBufferizedValues(rewriter, op, outputs);
    return success();
  }
};
} // namespace

void mlir::gacc::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, GaccDialect *) {
    OptimizationBarrierOp::attachInterface<OptimizationBarrierInterface>(
        *context);
    AttentionOp::attachInterface<AttentionInterface<AttentionOp>>(*context);
    AttentionGradOp::attachInterface<AttentionInterface<AttentionGradOp>>(
        *context);
  });
}
