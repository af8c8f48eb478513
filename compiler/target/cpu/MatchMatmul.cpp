//===- MatchMatmul.cpp - recognize the matmul contraction -------------------===//

#include "compiler/target/cpu/Passes.h"

using namespace mlir;

/// Whether `expr` is the loop dimension `dim`.
static bool isDim(AffineExpr expr, unsigned dim) {
  auto d = dyn_cast<AffineDimExpr>(expr);
  return d && d.getPosition() == dim;
}

std::optional<gacc::MatmulShape> gacc::matchMatmul(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops < 3 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  // The body: yield(acc + a * b), with a and b widened to the accumulator's
  // type when narrower (f16/bf16 operands, f32 accumulation).
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  auto operand = [&](Value value, unsigned arg) {
    if (auto ext = value.getDefiningOp<arith::ExtFOp>())
      value = ext.getIn();
    return value == body.getArgument(arg);
  };
  if (!mul || add.getLhs() != body.getArgument(2) ||
      !operand(mul.getLhs(), 0) || !operand(mul.getRhs(), 1))
    return std::nullopt;
  // Nothing else in the body (the yield, add, mul and up to two extf).
  size_t widened = (mul.getLhs() != body.getArgument(0)) +
                   (mul.getRhs() != body.getArgument(1));
  if (body.getOperations().size() != 3 + widened)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned m = loops - 3, n = loops - 2, k = loops - 1;
  // C is indexed by every parallel loop, in order.
  if (maps[2].getNumResults() != loops - 1 ||
      !llvm::all_of(llvm::seq<unsigned>(0, loops - 1), [&](unsigned i) {
        return isDim(maps[2].getResult(i), i);
      }))
    return std::nullopt;
  auto lastTwo = [](AffineMap map) {
    unsigned r = map.getNumResults();
    return std::pair(map.getResult(r - 2), map.getResult(r - 1));
  };
  auto [a0, a1] = lastTwo(maps[0]);
  auto [b0, b1] = lastTwo(maps[1]);
  MatmulShape shape;
  if (isDim(a0, m) && isDim(a1, k))
    shape.transposeLhs = false;
  else if (isDim(a0, k) && isDim(a1, m))
    shape.transposeLhs = true;
  else
    return std::nullopt;
  if (isDim(b0, k) && isDim(b1, n))
    shape.transposeRhs = false;
  else if (isDim(b0, n) && isDim(b1, k))
    shape.transposeRhs = true;
  else
    return std::nullopt;
  return shape;
}
