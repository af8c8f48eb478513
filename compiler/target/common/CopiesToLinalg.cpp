//===- CopiesToLinalg.cpp - copies as loop nests --------------------------===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_COPIESTOLINALG
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
struct CopiesToLinalgPass
    : public gacc::impl::CopiesToLinalgBase<CopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
