//===- Contractions.cpp - named contractions read as matmuls ----------------===//

#include "compiler/target/common/Contractions.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "passes/ArenaViews.h"

using namespace mlir;
using namespace mlir::gacc;

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

/// Whether `generic` is a one-hot of its one input, the ids: element
/// [i..., v] = (ids[i...] == v) ? 1 : 0, as gacc.one_hot lowers.
static bool isOneHot(linalg::GenericOp generic) {
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
static bool isBatchInput(Value ids) {
  auto type = cast<MemRefType>(ids.getType());
  if (!isa<IntegerType>(type.getElementType()) ||
      !memref::isStaticShapeAndContiguousRowMajor(type))
    return false;
  return getArenaRole(ids) == "batch";
}

std::optional<gacc::EmbeddingGradient>
gacc::getEmbeddingGradient(linalg::LinalgOp op) {
  std::optional<MatmulShape> shape = getMatmulShape(op);
  if (!op->hasAttr(GaccDialect::EmbeddingGradientAttrHelper::getNameStr()) ||
      !shape || !shape->transposeLhs || shape->transposeRhs ||
      op.getNumLoops() != 3)
    return std::nullopt;
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
      return std::nullopt;
    writer = generic;
  }
  if (!writer || !isBatchInput(writer.getDpsInputs()[0]))
    return std::nullopt;
  // Nothing but the writer, the views and the product reads any of them.
  auto ours = [&](Operation *user) {
    return user == writer || user == op || llvm::is_contained(views, user);
  };
  bool onlyUse = llvm::all_of(buffer.getUsers(), ours) &&
                 llvm::all_of(views, [&](Operation *view) {
                   return llvm::all_of(view->getUsers(), ours);
                 });
  return EmbeddingGradient{writer, writer.getDpsInputs()[0], onlyUse};
}
