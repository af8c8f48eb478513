//===- RuntimeCalls.cpp - calls of the runtime's CPU kernels --------------===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/Dialect/Func/Utils/Utils.h"

using namespace mlir;

func::CallOp mlir::gacc::createRuntimeCall(OpBuilder &b, Location loc,
                                           ModuleOp module, StringRef name,
                                           ValueRange args) {
  SmallVector<Value> operands;
  DenseMap<Value, Value> unranked; // one cast per memref passed twice
  for (Value arg : args) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (type && !unranked.count(arg))
      unranked[arg] = memref::CastOp::create(
          b, loc, UnrankedMemRefType::get(type.getElementType(), 0), arg);
    operands.push_back(type ? unranked[arg] : arg);
  }
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee)
    callee = func::createFnDecl(
        b, module, name,
        b.getFunctionType(ValueRange(operands).getTypes(), {}),
        /*setPrivate=*/true);
  return func::CallOp::create(b, loc, callee, operands);
}
