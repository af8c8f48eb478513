//===- Contractions.cpp - named contractions read as matmuls ----------------===//

#include "compiler/target/common/Contractions.h"

using namespace mlir;

/// Whether `expr` is the loop dimension `dim`.
static bool isDim(AffineExpr expr, unsigned dim) {
  auto d = dyn_cast<AffineDimExpr>(expr);
  return d && d.getPosition() == dim;
}

/// How `map` reads its operand: an increasing subsequence of the first
/// `batch` loops, then (`row`, `col`) (false) or, transposed, (`col`, `row`)
/// (true). std::nullopt when it reads anything else.
static std::optional<bool> readsMatrix(AffineMap map, unsigned batch,
                                       unsigned row, unsigned col) {
  unsigned r = map.getNumResults();
  if (r < 2)
    return std::nullopt;
  int64_t previous = -1;
  for (AffineExpr expr : map.getResults().drop_back(2)) {
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d || d.getPosition() >= batch ||
        static_cast<int64_t>(d.getPosition()) <= previous)
      return std::nullopt;
    previous = d.getPosition();
  }
  AffineExpr first = map.getResult(r - 2), second = map.getResult(r - 1);
  if (isDim(first, row) && isDim(second, col))
    return false;
  if (isDim(first, col) && isDim(second, row))
    return true;
  return std::nullopt;
}

std::optional<gacc::MatmulShape> gacc::getMatmulShape(linalg::LinalgOp op) {
  if (!isa<linalg::ContractionOpInterface>(op.getOperation()) ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  for (Value operand : op->getOperands())
    if (!isa<FloatType>(getElementTypeOrSelf(operand.getType())))
      return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (loops < 3)
    return std::nullopt;
  // Loops (batch..., m, n, k): m batch loops come first.
  unsigned m = loops - 3, n = loops - 2, k = loops - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // C is indexed by every loop but k, in order.
  if (maps[2] != AffineMap::getMultiDimIdentityMap(loops, op.getContext())
                     .getMajorSubMap(loops - 1))
    return std::nullopt;
  std::optional<bool> lhs = readsMatrix(maps[0], /*batch=*/m, m, k);
  std::optional<bool> rhs = readsMatrix(maps[1], /*batch=*/m, k, n);
  if (!lhs || !rhs)
    return std::nullopt;
  return MatmulShape{*lhs, *rhs};
}

SmallVector<unsigned> gacc::getBatchLoops(AffineMap map) {
  SmallVector<unsigned> loops;
  for (AffineExpr expr : map.getResults().drop_back(2))
    loops.push_back(cast<AffineDimExpr>(expr).getPosition());
  return loops;
}
