//===- FuseAttention.cpp - attention's ops into gacc.attention ------------===//
//
// Scaled dot-product attention as models write it (and as PyTorch 1.13's
// traced nn.Modules spell it) is five ops whose T x S intermediates are the
// largest activations of a transformer, and the backward keeps the
// probabilities. gacc.attention computes the same without them: its target
// recomputes them block by block.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "passes/Passes.h"

#include <cmath>

namespace mlir::gacc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// CUDA's limit on a grid's y dimension, where the kernels put the
/// (batch, head) pairs.
constexpr int64_t kMaxGridY = 65535;

/// The value of the scalar constant `v` (or of a cast of one: autocast's
/// bf16 scale), if it is one.
std::optional<double> scalarConstant(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// Whether `v` is computed from a trainable (not frozen) parameter.
bool dependsOnTrainable(Value v) {
  SmallVector<Value> work = {v};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (auto load = dyn_cast<LoadOp>(def)) {
      auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(
          load, load.getNameAttr());
      if (param && !param.getFrozen())
        return true;
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// `v`'s defining op if it is an OpTy whose result nothing else uses.
template <typename OpTy> OpTy singleUse(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->getResult(0).hasOneUse() ? op : OpTy();
}

/// What the pattern matched: `softmax(scale · q kᵀ + bias, causal) · v`.
struct Attention {
  Value query, key, value, keyBias;
  double scale = 1.0;
  bool causal = false;
  /// The matched ops, each before the ops it uses.
  SmallVector<Operation *> chain;
};

/// Matches, from the product with V back to the product of Q and K:
///   matmul(softmax(select(causal_mask, q kᵀ · scale [+ bias], -inf)), v)
/// (the scale, the bias, the mask and casts between any two of them
/// optional: autocast's), every intermediate used once. The bias is
/// [B, 1, 1, S], per key.
std::optional<Attention> match(MatmulOp product) {
  if (product.getTransposeLhs() || product.getTransposeRhs())
    return std::nullopt;
  Attention a;
  a.value = product.getRhs();
  a.chain.push_back(product);
  // `v`, or the input of the cast that gives it (autocast's f32 softmax).
  auto skipCast = [&](Value v) -> Value {
    auto cast = singleUse<CastOp>(v);
    if (!cast)
      return v;
    a.chain.push_back(cast);
    return cast.getInput();
  };
  auto softmax = singleUse<SoftmaxOp>(skipCast(product.getLhs()));
  if (!softmax || softmax.getAxis() != 3 || softmax.getType().getRank() != 4)
    return std::nullopt;
  a.chain.push_back(softmax);
  Value scores = skipCast(softmax.getInput());
  if (auto select = singleUse<SelectOp>(scores)) {
    // The mask is the scores' [T, S] (not one that broadcasts).
    auto mask = select.getCondition().getDefiningOp<CausalMaskOp>();
    std::optional<double> fill = scalarConstant(select.getFalseValue());
    if (!mask ||
        mask.getType().getShape() !=
            cast<RankedTensorType>(scores.getType()).getShape().take_back(2) ||
        !fill || !std::isinf(*fill) || *fill > 0)
      return std::nullopt;
    a.causal = true;
    a.chain.push_back(select);
    scores = skipCast(select.getTrueValue());
  }
  if (auto add = singleUse<AddOp>(scores)) {
    // The bias is the operand of shape [B, 1, 1, S], computed from no
    // trainable parameter: gacc.attention_grad gives it no gradient.
    int64_t keys = cast<RankedTensorType>(scores.getType()).getDimSize(3);
    auto perKey = [&](Value v) {
      ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
      return shape.size() == 4 && shape[1] == 1 && shape[2] == 1 &&
             shape[3] == keys && !dependsOnTrainable(v);
    };
    bool lhsBias = perKey(add.getLhs());
    a.keyBias = lhsBias ? add.getLhs() : add.getRhs();
    if (!perKey(a.keyBias))
      return std::nullopt;
    a.chain.push_back(add);
    scores = skipCast(lhsBias ? add.getRhs() : add.getLhs());
  }
  if (auto mul = singleUse<MulOp>(scores)) {
    std::optional<double> scale = scalarConstant(mul.getRhs());
    scores = mul.getLhs();
    if (!scale) {
      scale = scalarConstant(mul.getLhs());
      scores = mul.getRhs();
    }
    if (!scale)
      return std::nullopt;
    a.scale = *scale;
    a.chain.push_back(mul);
    scores = skipCast(scores);
  }
  auto qk = singleUse<MatmulOp>(scores);
  if (!qk || qk.getTransposeLhs() || !qk.getTransposeRhs())
    return std::nullopt;
  a.chain.push_back(qk);
  a.query = qk.getLhs();
  a.key = qk.getRhs();
  // One element type and [B, H, T, D] x [B, H, S, D] x [B, H, S, D].
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  RankedTensorType q = typeOf(a.query), k = typeOf(a.key), v = typeOf(a.value);
  if (q.getRank() != 4 || k != v || k.getRank() != 4 ||
      q.getElementType() != k.getElementType() ||
      typeOf(product.getResult()) != q ||
      q.getShape().take_front(2) != k.getShape().take_front(2) ||
      q.getDimSize(3) != k.getDimSize(3))
    return std::nullopt;
  if (a.keyBias && typeOf(a.keyBias).getDimSize(0) != q.getDimSize(0))
    return std::nullopt;
  return a;
}

/// Whether the CUDA target's kernels (gacc-cuda-flash-attention) take it.
bool fitsCudaKernels(const Attention &a) {
  auto q = cast<RankedTensorType>(a.query.getType());
  auto k = cast<RankedTensorType>(a.key.getType());
  int64_t headSize = q.getDimSize(3);
  return q.getElementType().getIntOrFloatBitWidth() == 16 &&
         headSize % 16 == 0 && headSize <= 64 && q.getDimSize(2) % 64 == 0 &&
         k.getDimSize(2) % 64 == 0 &&
         (!a.causal || q.getDimSize(2) == k.getDimSize(2)) &&
         q.getDimSize(0) * q.getDimSize(1) <= kMaxGridY;
}

struct FuseAttentionPass
    : public gacc::impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    // Matched one at a time: a rewrite erases values a match of another
    // attention (reading this one's output) would hold. What a rewrite
    // erases comes before its product, so no product left is erased.
    SmallVector<MatmulOp> products;
    getOperation()->walk([&](MatmulOp op) { products.push_back(op); });
    for (MatmulOp product : products) {
      std::optional<Attention> found = match(product);
      if (!found || (cudaKernelsOnly && !fitsCudaKernels(*found)))
        continue;
      Attention &a = *found;
      OpBuilder b(product);
      Location loc = product.getLoc();
      auto q = cast<RankedTensorType>(a.query.getType());
      auto k = cast<RankedTensorType>(a.key.getType());
      Type compute = AttentionOp::getComputeType(q.getElementType());
      Value keyBias = a.keyBias;
      if (keyBias) {
        auto type = cast<RankedTensorType>(keyBias.getType());
        if (type.getElementType() != compute)
          keyBias = CastOp::create(b, loc, type.clone(compute), keyBias);
        keyBias =
            buildReshape(b, loc, keyBias, {q.getDimSize(0), k.getDimSize(2)});
      }
      Value out =
          tensor::EmptyOp::create(b, loc, q.getShape(), q.getElementType());
      Value logsumexp =
          tensor::EmptyOp::create(b, loc, q.getShape().drop_back(), compute);
      auto attention = AttentionOp::create(
          b, loc, TypeRange{out.getType(), logsumexp.getType()}, a.query, a.key,
          a.value, keyBias, out, logsumexp, b.getF64FloatAttr(a.scale),
          a.causal ? b.getUnitAttr() : UnitAttr());
      product.getResult().replaceAllUsesWith(attention.getResult(0));
      // The chain, then what only it used (the mask, the constants and
      // their casts).
      SetVector<Operation *> inputs;
      auto collectInputs = [&](Operation *op) {
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp())
            inputs.insert(def);
      };
      for (Operation *op : a.chain) {
        inputs.remove(op);
        collectInputs(op);
        op->erase();
      }
      while (!inputs.empty()) {
        Operation *def = inputs.pop_back_val();
        if (!isOpTriviallyDead(def))
          continue;
        collectInputs(def);
        def->erase();
      }
      ++numFused;
    }
  }
};
} // namespace
