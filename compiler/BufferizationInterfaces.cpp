//===- BufferizationInterfaces.cpp - gacc ops through bufferization ---------===//

#include "compiler/BufferizationInterfaces.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"

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
} // namespace

void mlir::gacc::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, GaccDialect *) {
    OptimizationBarrierOp::attachInterface<OptimizationBarrierInterface>(
        *context);
  });
}
