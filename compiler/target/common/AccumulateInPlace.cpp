//===- AccumulateInPlace.cpp - loop-carried sums updated in place -----------===//

#include "compiler/target/common/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_ACCUMULATEINPLACE
#include "compiler/target/common/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
bool isElementwise(linalg::GenericOp op) {
  return op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops();
}

/// `op` computes `in0 + in1`, every operand indexed by the identity.
bool isIdentityAdd(linalg::GenericOp op) {
  if (!isElementwise(op) || op.getNumDpsInputs() != 2 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || &body.front() != add.getOperation())
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1);
  return (add.getLhs() == in0 && add.getRhs() == in1) ||
         (add.getLhs() == in1 && add.getRhs() == in0);
}

/// `acc + A·B` with the contraction starting from zeros: the contraction,
/// now accumulating into `acc` (a named contraction adds to its init).
bool foldIntoMatmul(linalg::GenericOp add, Value acc) {
  if (!isIdentityAdd(add))
    return false;
  Value other = add.getDpsInputs()[0] == acc ? add.getDpsInputs()[1]
                                             : add.getDpsInputs()[0];
  auto matmul = other.getDefiningOp<linalg::LinalgOp>();
  if (!matmul || !isa<linalg::ContractionOpInterface>(matmul.getOperation()) ||
      !matmul->hasOneUse() || other.getType() != acc.getType())
    return false;
  auto fill = matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
    return false;
  matmul.getDpsInitsMutable()[0].assign(acc);
  // The matmul must come after everything else that reads `acc`.
  matmul->moveBefore(add);
  add.getResult(0).replaceAllUsesWith(matmul->getResult(0));
  add.erase();
  return true;
}

/// An elementwise update that reads `acc` where it writes: write into it.
bool writeIntoAccumulator(linalg::GenericOp update, Value acc) {
  if (!isElementwise(update) || update.getResult(0).getType() != acc.getType())
    return false;
  OpOperand *init = update.getDpsInitOperand(0);
  if (update.payloadUsesValueFromOperand(init))
    return false;
  AffineMap written = update.getMatchingIndexingMap(init);
  for (OpOperand *input : update.getDpsInputOperands())
    if (input->get() == acc &&
        update.getMatchingIndexingMap(input) == written) {
      init->set(acc);
      return true;
    }
  return false;
}

/// A splat constant initializing an iteration argument, as a fill.
void fillInitialValue(scf::ForOp loop, OpOperand &init) {
  auto constant = init.get().getDefiningOp<arith::ConstantOp>();
  auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                        : SplatElementsAttr();
  if (!splat)
    return;
  OpBuilder b(loop);
  auto type = cast<RankedTensorType>(splat.getType());
  Value empty = tensor::EmptyOp::create(b, loop.getLoc(), type.getShape(),
                                        type.getElementType());
  Value value = arith::ConstantOp::create(b, loop.getLoc(),
                                          splat.getSplatValue<TypedAttr>());
  init.set(linalg::FillOp::create(b, loop.getLoc(), value, empty).result());
}

/// The update of `acc` that `next` yields: a generic reading `acc`, or one
/// reading `acc` with unit dimensions added (tensor.expand_shape) whose result
/// drops them again (tensor.collapse_shape), as elementwise fusion leaves a
/// sum that was reshaped. Sets `view` to what the update reads: `acc` or its
/// expansion, which it may then write in place.
linalg::GenericOp findUpdate(Value next, BlockArgument acc, Value &view) {
  view = acc;
  if (auto update = next.getDefiningOp<linalg::GenericOp>())
    return update->hasOneUse() ? update : linalg::GenericOp();
  auto collapse = next.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !collapse->hasOneUse())
    return {};
  auto update = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  if (!update || !update->hasOneUse())
    return {};
  for (Value input : update.getDpsInputs())
    if (auto expand = input.getDefiningOp<tensor::ExpandShapeOp>())
      if (expand.getSrc() == acc && expand.getReassociationIndices() ==
                                        collapse.getReassociationIndices()) {
        view = expand.getResult();
        return update;
      }
  return {};
}

struct AccumulateInPlacePass
    : public gacc::impl::AccumulateInPlaceBase<AccumulateInPlacePass> {
  void runOnOperation() override {
    getOperation()->walk([](scf::ForOp loop) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [init, acc, next] :
           llvm::zip(loop.getInitArgsMutable(), loop.getRegionIterArgs(),
                     yield->getOpOperands())) {
        if (!isa<RankedTensorType>(acc.getType()))
          continue;
        Value view;
        linalg::GenericOp update = findUpdate(next.get(), acc, view);
        if (!update)
          continue;
        if (!foldIntoMatmul(update, view))
          writeIntoAccumulator(update, view);
        fillInitialValue(loop, init);
      }
    });
  }
};
} // namespace
