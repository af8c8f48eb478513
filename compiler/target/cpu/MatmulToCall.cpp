//===- MatmulToCall.cpp - bufferized matmuls to the runtime's BLAS kernel ---===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
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
      auto elementOf = [](Value value) {
        return cast<MemRefType>(value.getType()).getElementType();
      };
      Type in = elementOf(op.getDpsInputs()[0]);
      Type out = elementOf(op.getDpsInits()[0]);
      if (elementOf(op.getDpsInputs()[1]) != in)
        continue; // the loops stay
      std::string name;
      if (in.isF32() && out.isF32())
        name = "gacc_cpu_matmul_f32";
      else if (in.isF64() && out.isF64())
        name = "gacc_cpu_matmul_f64";
      else if (in.isF16() && out.isF32())
        name = "gacc_cpu_matmul_f16_f32";
      else if (in.isBF16() && out.isF32())
        name = "gacc_cpu_matmul_bf16_f32";
      else
        continue; // the loops stay
      auto unrankedIn = UnrankedMemRefType::get(in, 0);
      auto unrankedOut = UnrankedMemRefType::get(out, 0);
      auto callee = module.lookupSymbol<func::FuncOp>(name);
      if (!callee)
        callee = func::createFnDecl(
            b, module, name,
            b.getFunctionType({unrankedIn, unrankedIn, unrankedOut,
                               b.getI32Type(), b.getI32Type()},
                              {}),
            /*setPrivate=*/true);
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value operand : {op.getDpsInputs()[0], op.getDpsInputs()[1]})
        args.push_back(memref::CastOp::create(b, loc, unrankedIn, operand));
      args.push_back(
          memref::CastOp::create(b, loc, unrankedOut, op.getDpsInits()[0]));
      for (bool transposed : {shape.transposeLhs, shape.transposeRhs})
        args.push_back(
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), transposed));
      func::CallOp::create(b, loc, callee, args);
      op.erase();
    }
  }
};
} // namespace
