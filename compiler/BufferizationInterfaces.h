//===- BufferizationInterfaces.h - gacc ops through bufferization -*- C++ -*-===//
#ifndef GACC_COMPILER_BUFFERIZATIONINTERFACES_H
#define GACC_COMPILER_BUFFERIZATIONINTERFACES_H

namespace mlir {
class DialectRegistry;
namespace gacc {

/// One-shot bufferization of the gacc ops that live until then
/// (gacc.optimization_barrier).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace gacc
} // namespace mlir

#endif // GACC_COMPILER_BUFFERIZATIONINTERFACES_H
