//===- MatmulToCall.cpp - bufferized matmuls to the runtime's BLAS kernel ---===//

#include "compiler/target/common/Contractions.h"
#include "compiler/target/cpu/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_MATMULTOCALL
#include "compiler/target/cpu/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

StringRef mlir::gacc::getCpuMatmulKernel(Type in, Type out) {
  if (in.isF32() && out.isF32())
    return "gacc_cpu_matmul_f32";
  if (in.isF64() && out.isF64())
    return "gacc_cpu_matmul_f64";
  if (in.isF16() && out.isF32())
    return "gacc_cpu_matmul_f16_f32";
  if (in.isBF16() && out.isF32())
    return "gacc_cpu_matmul_bf16_f32";
  return "";
}

namespace {
/// `operand`, read through `map` by a contraction of `batch` batch loops, as
/// the runtime reads it: its batch dimensions align with C's from the end
/// (NumPy broadcasting). When it skips a loop after the first it reads, a
/// unit dimension takes that loop's place.
Value alignBatch(OpBuilder &b, Location loc, Value operand, AffineMap map,
                 unsigned batch) {
  SmallVector<unsigned> loops = getBatchLoops(map);
  if (loops.empty() || loops.front() + loops.size() == batch)
    return operand;
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups(type.getRank());
  unsigned dim = 0;
  for (unsigned loop = loops.front(); loop < batch; ++loop) {
    bool read = dim < loops.size() && loops[dim] == loop;
    // A skipped loop joins the group of the dimension before it.
    groups[read ? dim : dim - 1].push_back(shape.size());
    shape.push_back(read ? type.getDimSize(dim++) : 1);
  }
  for (; dim < type.getRank(); ++dim) {
    groups[dim].push_back(shape.size());
    shape.push_back(type.getDimSize(dim));
  }
  return memref::ExpandShapeOp::create(b, loc, shape, operand, groups);
}

/// The zero fill of `out` that only initializes the contraction `op`: the
/// last operation before it that touches memory (in its block), writing
/// zeros into the same value. The kernel then overwrites C instead.
linalg::FillOp findZeroInit(Operation *op, Value out) {
  for (Operation *before = op->getPrevNode(); before;
       before = before->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(before))
      return fill.getDpsInits()[0] == out &&
                     matchPattern(fill.value(), m_AnyZeroFloat())
                 ? fill
                 : linalg::FillOp();
    if (!isMemoryEffectFree(before))
      return {};
  }
  return {};
}

/// Whether `generic` is a one-hot of its one input, the ids: element
/// [i..., v] = (ids[i...] == v) ? 1 : 0, as gacc.one_hot lowers.
bool isOneHot(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  Block &body = generic.getRegion().front();
  auto select =
      body.getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  auto compare =
      select ? select.getCondition().getDefiningOp<arith::CmpIOp>() : nullptr;
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq ||
      !matchPattern(select.getTrueValue(), m_OneFloat()) ||
      !matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
    return false;
  Value id = body.getArgument(0);
  Value other = compare.getLhs() == id   ? compare.getRhs()
                : compare.getRhs() == id ? compare.getLhs()
                                         : Value();
  auto cast = other ? other.getDefiningOp<arith::IndexCastOp>() : nullptr;
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  return index && index.getDim() == generic.getNumLoops() - 1;
}

/// Whether `ids` are contiguous and read from the batch arena, which the
/// step never writes or frees: the runtime reads them at the product, after
/// the one-hot, their last reader as far as buffer planning knew.
bool isBatchInput(Value ids) {
  auto type = cast<MemRefType>(ids.getType());
  if (!isa<IntegerType>(type.getElementType()) ||
      !memref::isStaticShapeAndContiguousRowMajor(type))
    return false;
  while (Operation *def = ids.getDefiningOp()) {
    if (!isa<memref::ViewOp, memref::SubViewOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::CastOp>(def))
      return false;
    ids = def->getOperand(0);
  }
  auto argument = dyn_cast<BlockArgument>(ids);
  auto function =
      argument
          ? dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp())
          : FunctionOpInterface();
  if (!function)
    return false;
  // The argument says so, or it is the batch argument of an entry point
  // (whose arguments are kArenaRoles in order; bufferization drops the
  // argument attributes).
  auto arena = function.getArgAttrOfType<StringAttr>(
      argument.getArgNumber(), GaccDialect::ArenaAttrHelper::getNameStr());
  if (arena)
    return arena.getValue() == "batch";
  StringRef name = SymbolTable::getSymbolName(function).getValue();
  return (name == "gacc_step" || name == "gacc_eval") &&
         function.getNumArguments() == std::size(kArenaRoles) &&
         kArenaRoles[argument.getArgNumber()] == "batch";
}

/// For a contraction marked gacc.embedding_gradient (`one_hot(ids)ᵀ · dy`):
/// the one-hot generic that last wrote its lhs (through reshaping views),
/// whose only input is the ids. Null when the IR is not that. Sets
/// `onlyUse` when nothing else uses the one-hot's buffer (a planned
/// workspace view may be shared with other lifetimes), so that it can go.
linalg::GenericOp findOneHot(linalg::LinalgOp op, bool &onlyUse) {
  std::optional<MatmulShape> shape = getMatmulShape(op);
  if (!op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr()) ||
      !shape || !shape->transposeLhs || shape->transposeRhs ||
      op.getNumLoops() != 3)
    return {};
  Value buffer = op.getDpsInputs()[0];
  SmallVector<Operation *> views;
  while (isa_and_present<memref::CollapseShapeOp, memref::ExpandShapeOp>(
      buffer.getDefiningOp())) {
    views.push_back(buffer.getDefiningOp());
    buffer = buffer.getDefiningOp()->getOperand(0);
  }
  // The nearest op before that touches the buffer must be the one-hot.
  linalg::GenericOp writer;
  for (Operation *before = op->getPrevNode(); before && !writer;
       before = before->getPrevNode()) {
    if (llvm::is_contained(views, before) ||
        !llvm::is_contained(before->getOperands(), buffer))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(before);
    if (!generic || !isOneHot(generic) || generic.getDpsInits()[0] != buffer)
      return {};
    writer = generic;
  }
  if (!writer || !isBatchInput(writer.getDpsInputs()[0]))
    return {};
  // Nothing but the writer, the views and the product reads any of them.
  auto ours = [&](Operation *user) {
    return user == writer || user == op || llvm::is_contained(views, user);
  };
  onlyUse = writer && llvm::all_of(buffer.getUsers(), ours) &&
            llvm::all_of(views, [&](Operation *view) {
              return llvm::all_of(view->getUsers(), ours);
            });
  return writer;
}

/// Replaces the embedding gradient `op` (see findOneHot) by the runtime's
/// row additions, `gacc_cpu_embedding_gradient_<float>_<id>(ids, dy, C,
/// accumulate)`, and drops the one-hot when `eraseOneHot`. False when the
/// runtime has no kernel for the types.
bool addRowsInstead(OpBuilder &b, ModuleOp module, linalg::LinalgOp op,
                    linalg::GenericOp oneHot, bool eraseOneHot,
                    bool accumulate) {
  Value ids = oneHot.getDpsInputs()[0], dy = op.getDpsInputs()[1],
        out = op.getDpsInits()[0];
  auto idType = cast<MemRefType>(ids.getType()).getElementType();
  auto element = cast<MemRefType>(out.getType()).getElementType();
  if (cast<MemRefType>(dy.getType()).getElementType() != element ||
      !(element.isF32() || element.isF64()) ||
      !(idType.isInteger(32) || idType.isInteger(64)))
    return false;
  std::string name =
      ("gacc_cpu_embedding_gradient_" + Twine(element.isF32() ? "f32" : "f64") +
       "_i" + Twine(idType.getIntOrFloatBitWidth()))
          .str();
  auto unrankedIds = UnrankedMemRefType::get(idType, 0);
  auto unranked = UnrankedMemRefType::get(element, 0);
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee)
    callee = func::createFnDecl(
        b, module, name,
        b.getFunctionType({unrankedIds, unranked, unranked, b.getI32Type()},
                          {}),
        /*setPrivate=*/true);
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  func::CallOp::create(
      b, loc, callee,
      ValueRange{
          memref::CastOp::create(b, loc, unrankedIds, ids),
          memref::CastOp::create(b, loc, unranked, dy),
          memref::CastOp::create(b, loc, unranked, out),
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), accumulate)});
  op.erase();
  if (eraseOneHot)
    oneHot.erase();
  return true;
}

struct MatmulToCallPass : public gacc::impl::MatmulToCallBase<MatmulToCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, MatmulShape>> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (std::optional<MatmulShape> shape = getMatmulShape(op))
        matmuls.push_back({op, *shape});
    });
    OpBuilder b(module.getContext());
    for (auto [op, shape] : matmuls) {
      auto elementOf = [](Value value) {
        return cast<MemRefType>(value.getType()).getElementType();
      };
      Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
      Value out = op.getDpsInits()[0];
      bool onlyUse = false;
      if (linalg::GenericOp oneHot = findOneHot(op, onlyUse)) {
        linalg::FillOp zeroInit = findZeroInit(op, out);
        if (addRowsInstead(b, module, op, oneHot, onlyUse, !zeroInit)) {
          if (zeroInit)
            zeroInit.erase();
          continue;
        }
      }
      Type in = elementOf(lhs);
      StringRef name = getCpuMatmulKernel(in, elementOf(out));
      if (elementOf(rhs) != in || name.empty())
        continue; // the contraction stays
      auto unrankedIn = UnrankedMemRefType::get(in, 0);
      auto unrankedOut = UnrankedMemRefType::get(elementOf(out), 0);
      auto callee = module.lookupSymbol<func::FuncOp>(name);
      if (!callee)
        callee = func::createFnDecl(
            b, module, name,
            b.getFunctionType({unrankedIn, unrankedIn, unrankedOut,
                               b.getI32Type(), b.getI32Type(), b.getI32Type()},
                              {}),
            /*setPrivate=*/true);
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      unsigned batch = op.getNumLoops() - 3;
      SmallVector<Value> args;
      for (OpOperand *input : op.getDpsInputOperands())
        args.push_back(memref::CastOp::create(
            b, loc, unrankedIn,
            alignBatch(b, loc, input->get(), op.getMatchingIndexingMap(input),
                       batch)));
      args.push_back(memref::CastOp::create(b, loc, unrankedOut, out));
      linalg::FillOp zeroInit = findZeroInit(op, out);
      for (bool flag :
           {shape.transposeLhs, shape.transposeRhs, /*accumulate=*/!zeroInit})
        args.push_back(
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), flag));
      if (zeroInit)
        zeroInit.erase();
      func::CallOp::create(b, loc, callee, args);
      op.erase();
    }
  }
};
} // namespace
