//===- MatmulToCall.cpp - bufferized matmuls to the runtime's BLAS kernel ---===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_MATMULTOCALL
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
struct MatmulToCallPass : public gacc::impl::MatmulToCallBase<MatmulToCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::GenericOp, MatmulShape>> matmuls;
    module.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<MatmulShape> shape = matchMatmul(op))
        matmuls.push_back({op, *shape});
    });
    OpBuilder b(module.getContext());
    for (auto [op, shape] : matmuls) {
      auto out = cast<MemRefType>(op.getDpsInits()[0].getType());
      Type element = out.getElementType();
      std::string name;
      if (element.isF32())
        name = "gacc_cpu_matmul_f32";
      else if (element.isF64())
        name = "gacc_cpu_matmul_f64";
      else
        continue; // the loops stay
      auto unranked = UnrankedMemRefType::get(element, 0);
      auto callee = module.lookupSymbol<func::FuncOp>(name);
      if (!callee) {
        b.setInsertionPointToStart(module.getBody());
        callee = func::FuncOp::create(
            b, module.getLoc(), name,
            b.getFunctionType({unranked, unranked, unranked, b.getI32Type(),
                               b.getI32Type()},
                              {}));
        callee.setPrivate();
      }
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value operand : {op.getDpsInputs()[0], op.getDpsInputs()[1],
                            op.getDpsInits()[0]})
        args.push_back(memref::CastOp::create(b, loc, unranked, operand));
      for (bool transposed : {shape.transposeLhs, shape.transposeRhs})
        args.push_back(
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), transposed));
      func::CallOp::create(b, loc, callee, args);
      op.erase();
    }
  }
};
} // namespace
