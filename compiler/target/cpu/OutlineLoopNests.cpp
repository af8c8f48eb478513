//===- OutlineLoopNests.cpp - one function per distinct loop nest -----------===//

#include "compiler/target/common/FunctionKey.h"
#include "compiler/target/cpu/Passes.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_OUTLINELOOPNESTS
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// The attribute by which func-to-llvm passes a function's buffers, and
/// those of calls to it, as bare pointers.
constexpr StringLiteral kBarePointers = "llvm.bareptr";

/// Whether a function taking `types` can receive its buffers as bare
/// pointers: each has a static shape, strides and offset, so the descriptor
/// tells nothing the type does not.
bool takesBarePointers(TypeRange types) {
  return llvm::all_of(types, [](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return !memref || LLVMTypeConverter::canConvertToBarePtr(memref);
  });
}

struct OutlineLoopNests
    : gacc::impl::OutlineLoopNestsBase<OutlineLoopNests> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> nests;
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics())
          nests.push_back(op);
      });
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> outlined;
    for (linalg::LinalgOp nest : nests)
      outline(nest, symbols, outlined);
  }

  /// Replaces `nest` by a call of a function holding it: a new one, or one
  /// outlined before from an identical nest.
  void outline(linalg::LinalgOp nest, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &outlined) {
    Operation *op = nest.getOperation();
    // The arguments: the op's operands and what its body reads from above,
    // each once (an op reading and writing one buffer keeps saying so),
    // except constants, which are copied in.
    llvm::SetVector<Value> arguments(op->operand_begin(), op->operand_end());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    SmallVector<Operation *> constants;
    for (Value value : captured) {
      Operation *definition = value.getDefiningOp();
      if (definition && matchPattern(definition, m_Constant()))
        constants.push_back(definition);
      else
        arguments.insert(value);
    }

    OpBuilder b(op->getContext());
    Location loc = op->getLoc();
    auto type = b.getFunctionType(TypeRange(arguments.getArrayRef()), {});
    auto function = func::FuncOp::create(loc, "gacc_nest", type);
    function.setPrivate();
    function->setAttr("passthrough", b.getStrArrayAttr({"noinline"}));
    // A pointer per buffer instead of a descriptor: the calls stay small,
    // and so does the entry function, with thousands of them.
    bool barePointers = takesBarePointers(type.getInputs());
    if (barePointers)
      function->setAttr(kBarePointers,
                        b.getUnitAttr());
    Block *entry = function.addEntryBlock();
    IRMapping mapping;
    mapping.map(arguments.getArrayRef(), entry->getArguments());
    b.setInsertionPointToStart(entry);
    for (Operation *constant : constants)
      b.clone(*constant, mapping);
    b.clone(*op, mapping);
    func::ReturnOp::create(b, loc);

    std::string key = getStructuralKey(function);
    auto [it, inserted] = outlined.try_emplace(key, function);
    if (inserted)
      symbols.insert(function);
    else
      function.erase();
    b.setInsertionPoint(op);
    auto call = func::CallOp::create(b, loc, it->second, arguments.getArrayRef());
    if (barePointers)
      call->setAttr(kBarePointers, b.getUnitAttr());
    op->erase();
  }
};
} // namespace
