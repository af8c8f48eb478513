//===- MatmulToCall.cpp - bufferized matmuls to the runtime's BLAS kernel ---===//

#include "compiler/target/common/Contractions.h"
#include "compiler/target/cpu/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
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

/// Replaces the embedding gradient `op` by the runtime's row additions,
/// `gacc_cpu_embedding_gradient_<float>_<id>(ids, dy, C, accumulate)`, and
/// drops the one-hot where nothing else reads it. False when the runtime
/// has no kernel for the types.
bool addRowsInstead(OpBuilder &b, ModuleOp module, linalg::LinalgOp op,
                    EmbeddingGradient gradient, bool accumulate) {
  Value ids = gradient.ids, dy = op.getDpsInputs()[1],
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
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  createRuntimeCall(
      b, loc, module, name,
      {ids, dy, out,
       arith::ConstantIntOp::create(b, loc, b.getI32Type(), accumulate)});
  op.erase();
  if (gradient.oneHotOnlyUse)
    gradient.oneHot.erase();
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
      if (std::optional<EmbeddingGradient> gradient =
              getEmbeddingGradient(op)) {
        linalg::FillOp zeroInit = findZeroInit(op, out);
        if (addRowsInstead(b, module, op, *gradient, !zeroInit)) {
          if (zeroInit)
            zeroInit.erase();
          continue;
        }
      }
      Type in = elementOf(lhs);
      StringRef name = getCpuMatmulKernel(in, elementOf(out));
      if (elementOf(rhs) != in || name.empty())
        continue; // the contraction stays
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      unsigned batch = op.getNumLoops() - 3;
      SmallVector<Value> args;
      for (OpOperand *input : op.getDpsInputOperands())
        args.push_back(alignBatch(b, loc, input->get(),
                                  op.getMatchingIndexingMap(input), batch));
      args.push_back(out);
      linalg::FillOp zeroInit = findZeroInit(op, out);
      for (bool flag :
           {shape.transposeLhs, shape.transposeRhs, /*accumulate=*/!zeroInit})
        args.push_back(
            arith::ConstantIntOp::create(b, loc, b.getI32Type(), flag));
      if (zeroInit)
        zeroInit.erase();
      createRuntimeCall(b, loc, module, name, args);
      op.erase();
    }
  }
};
} // namespace
