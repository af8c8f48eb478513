//===- DispatchParallelCalls.cpp - split nests on the runtime's threads -----===//

#include "compiler/target/cpu/Passes.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_DISPATCHPARALLELCALLS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
constexpr StringLiteral kParallelFor = "gacc_cpu_parallel_for";

struct DispatchParallelCallsPass
    : public gacc::impl::DispatchParallelCallsBase<DispatchParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      auto callee = call.getCalleeAttr();
      if (!callee)
        return;
      auto function =
          module.lookupSymbol<LLVM::LLVMFuncOp>(callee.getValue());
      if (function && function->hasAttr(gacc::kParallelGrainAttrName))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    MLIRContext *context = module.getContext();
    OpBuilder b(context);
    b.setInsertionPointToEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor);
    if (!parallelFor)
      parallelFor = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kParallelFor,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                      {ptr, ptr, i64, i64}));

    llvm::DenseMap<LLVM::LLVMFuncOp, LLVM::LLVMFuncOp> tasks;
    // One context per calling function, as large as its largest call needs.
    llvm::DenseMap<LLVM::LLVMFuncOp, unsigned> slots;
    for (LLVM::CallOp call : calls) {
      unsigned &count = slots[call->getParentOfType<LLVM::LLVMFuncOp>()];
      count = std::max(count, call.getNumOperands());
    }
    llvm::DenseMap<LLVM::LLVMFuncOp, Value> contexts;
    for (auto [caller, count] : slots) {
      OpBuilder entry = OpBuilder::atBlockBegin(&caller.getBody().front());
      Value one = LLVM::ConstantOp::create(entry, caller.getLoc(), i64, 1);
      contexts[caller] = LLVM::AllocaOp::create(
          entry, caller.getLoc(), ptr, LLVM::LLVMArrayType::get(i64, count),
          one, /*alignment=*/8);
    }

    for (LLVM::CallOp call : calls) {
      auto function =
          module.lookupSymbol<LLVM::LLVMFuncOp>(call.getCalleeAttr().getValue());
      LLVM::LLVMFuncOp &task = tasks[function];
      if (!task)
        task = createTask(function, b);
      Location loc = call.getLoc();
      OpBuilder at(call);
      Value slotsBase = contexts[call->getParentOfType<LLVM::LLVMFuncOp>()];
      auto slotType = LLVM::LLVMArrayType::get(i64, call.getNumOperands());
      for (auto [i, argument] : llvm::enumerate(call.getOperands())) {
        Value slot = LLVM::GEPOp::create(
            at, loc, ptr, slotType, slotsBase,
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        LLVM::StoreOp::create(at, loc, argument, slot);
      }
      unsigned n = call.getNumOperands();
      Value lo = call.getOperand(n - 2), hi = call.getOperand(n - 1);
      Value extent = LLVM::SubOp::create(at, loc, hi, lo);
      int64_t chunk =
          cast<IntegerAttr>(function->getAttr(gacc::kParallelGrainAttrName))
              .getInt();
      Value grain = LLVM::ConstantOp::create(at, loc, i64, chunk);
      Value taskAddress = LLVM::AddressOfOp::create(at, loc, task);
      LLVM::CallOp::create(at, loc, parallelFor,
                           ValueRange{taskAddress, slotsBase, extent, grain});
      call.erase();
    }
  }

  /// `<function>.task(context, begin, end)`: loads the arguments from the
  /// context's slots and calls `function` on [lo + begin, lo + end).
  LLVM::LLVMFuncOp createTask(LLVM::LLVMFuncOp function, OpBuilder &b) {
    MLIRContext *context = function.getContext();
    Location loc = function.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    auto task = LLVM::LLVMFuncOp::create(
        b, loc, (function.getName() + ".task").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    Block *entry = task.addEntryBlock(b);
    OpBuilder body = OpBuilder::atBlockBegin(entry);
    Value slots = entry->getArgument(0);
    ArrayRef<Type> types = function.getFunctionType().getParams();
    auto slotType = LLVM::LLVMArrayType::get(i64, types.size());
    SmallVector<Value> arguments;
    for (auto [i, type] : llvm::enumerate(types)) {
      Value slot = LLVM::GEPOp::create(
          body, loc, ptr, slotType, slots,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      arguments.push_back(LLVM::LoadOp::create(body, loc, type, slot));
    }
    Value lo = arguments[types.size() - 2];
    arguments[types.size() - 2] =
        LLVM::AddOp::create(body, loc, lo, entry->getArgument(1));
    arguments[types.size() - 1] =
        LLVM::AddOp::create(body, loc, lo, entry->getArgument(2));
    LLVM::CallOp::create(body, loc, function, arguments);
    LLVM::ReturnOp::create(body, loc, ValueRange());
    return task;
  }
};
} // namespace
