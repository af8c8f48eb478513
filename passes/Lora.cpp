//===- Lora.cpp - low-rank adapters on frozen weights ----------------------===//
//
// LoRA (Hu et al. 2021) as peft applies it to nn.Linear: every parameter is
// frozen, and each matmul that reads a matched weight W gains a trainable
// low-rank branch,
// y = x·Wᵀ + (alpha/r)·(dropout(x)·Aᵀ)·Bᵀ. The branch is built from the
// activations, never as W + (alpha/r)·B·A, so the backward pass has no
// weight-gradient matmul for W (autodiff builds nothing that only a frozen
// parameter needs) and the adapters' gradients cost O(r) per token.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccBuilders.h"
#include "passes/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/xxhash.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_LORA
#include "passes/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using namespace mlir::gacc;

namespace {
/// The gain of PyTorch's default Linear initializer, kaiming_uniform_ with
/// a = sqrt(5), which peft gives A.
constexpr double kLinearGain = 0.57735026918962584;

/// How the matmuls read a matched weight: its [out, in] sizes and whether
/// it is stored transposed ([in, out]).
struct WeightUse {
  int64_t in = 0, out = 0;
  bool transposed = false;
};

/// The reads of `param`, each feeding only matmuls as their rhs in one
/// layout; or a diagnostic at the op that reads it otherwise.
FailureOr<WeightUse> findUses(ParamOp param, ArrayRef<LoadOp> loads) {
  // In program order (loads come in walk order; each one's users sorted
  // within its block), so that a diagnostic names the later read.
  SmallVector<OpOperand *> uses;
  for (LoadOp load : loads) {
    size_t first = uses.size();
    for (OpOperand &use : load->getUses())
      uses.push_back(&use);
    std::stable_sort(
        uses.begin() + first, uses.end(), [](OpOperand *x, OpOperand *y) {
          Operation *a = x->getOwner(), *b = y->getOwner();
          return a->getBlock() == b->getBlock() && a->isBeforeInBlock(b);
        });
  }
  std::optional<bool> transposed;
  for (OpOperand *use : uses) {
    auto matmul = dyn_cast<MatmulOp>(use->getOwner());
    if (!matmul || use->getOperandNumber() != 1 || matmul.getTransposeLhs())
      return use->getOwner()->emitOpError("reads the LoRA target '")
             << param.getSymName()
             << "' otherwise than as the rhs of a gacc.matmul (without "
                "transpose_lhs), which gacc-lora cannot adapt";
    bool rowMajorOut = matmul.getTransposeRhs();
    if (transposed && *transposed == rowMajorOut)
      return matmul.emitOpError("reads the LoRA target '")
             << param.getSymName()
             << "' in both layouts, [out, in] and [in, out]";
    transposed = !rowMajorOut;
  }
  if (!transposed)
    return param.emitOpError("is a LoRA target that the model never reads");
  ArrayRef<int64_t> shape = param.getTensorType().getShape();
  WeightUse use;
  use.transposed = *transposed;
  use.out = use.transposed ? shape[1] : shape[0];
  use.in = use.transposed ? shape[0] : shape[1];
  return use;
}

/// Adds `+ scale·(dropout(x)·Aᵀ)·Bᵀ` to `matmul`'s result, for every user.
void addBranch(MatmulOp matmul, ParamOp a, ParamOp b, double scale,
               double dropout, int64_t seed) {
  OpBuilder builder(matmul->getContext());
  builder.setInsertionPointAfter(matmul);
  Location loc = matmul.getLoc();
  Value x = matmul.getLhs();
  if (dropout > 0.0)
    x = DropoutOp::create(builder, loc, x.getType(), x, Value(),
                          builder.getF64FloatAttr(dropout),
                          builder.getI64IntegerAttr(seed));
  Value readA = LoadOp::create(builder, loc, a.getTensorType(),
                               FlatSymbolRefAttr::get(a.getSymNameAttr()));
  Value readB = LoadOp::create(builder, loc, b.getTensorType(),
                               FlatSymbolRefAttr::get(b.getSymNameAttr()));
  Value low = buildMatmul(builder, loc, x, readA, false, true);
  Value branch = buildMatmul(builder, loc, low, readB, false, true);
  TensorMath m = tensorMath(builder, matmul, branch);
  Value sum = m.add(matmul.getResult(), m.mul(branch, m.c(scale)));
  matmul.getResult().replaceAllUsesExcept(sum, sum.getDefiningOp());
}

/// The trainable matrices of `module` whose whole names match `targets`.
FailureOr<SmallVector<ParamOp>> matchTargets(ModuleOp module,
                                             StringRef targets) {
  llvm::Regex regex(("^(" + targets + ")$").str());
  std::string error;
  if (!regex.isValid(error))
    return module.emitError("gacc-lora: targets '")
           << targets << "' is not a regular expression: " << error;
  SmallVector<ParamOp> matched;
  for (ParamOp param : module.getOps<ParamOp>())
    if (!param.getFrozen() && param.getTensorType().getRank() == 2 &&
        regex.match(param.getSymName()))
      matched.push_back(param);
  if (matched.empty())
    return module.emitError("gacc-lora: no trainable matrix (gacc.param of "
                            "rank 2) matches targets '")
           << targets << "'";
  return matched;
}
} // namespace

LogicalResult gacc::applyLora(ModuleOp module, const LoraConfig &config) {
  if (config.rank < 1)
    return module.emitError("gacc-lora: the rank must be positive, got ")
           << config.rank;
  if (!(config.dropout >= 0.0 && config.dropout < 1.0))
    return module.emitError("gacc-lora: dropout must be in [0, 1), got ")
           << config.dropout;
  if (config.targets.empty())
    return module.emitError(
        "gacc-lora: give targets, a regular expression over parameter names");
  // Adapted once: the entry points that configure a step before its
  // pipeline runs again leave an adapted module as it is.
  if (llvm::any_of(module.getOps<ParamOp>(), [](ParamOp param) {
        return param->hasAttr(GaccDialect::LoraAttrHelper::getNameStr());
      }))
    return success();
  FailureOr<SmallVector<ParamOp>> targets =
      matchTargets(module, config.targets);
  if (failed(targets))
    return failure();
  llvm::StringMap<SmallVector<LoadOp>> loads;
  module.walk([&](LoadOp load) { loads[load.getName()].push_back(load); });
  uint64_t nextSeed = 0;
  for (ParamOp param : module.getOps<ParamOp>())
    nextSeed = std::max(nextSeed, param.getInit().getSeed() + 1);
  double scale = config.alpha / static_cast<double>(config.rank);
  OpBuilder builder(module.getContext());
  // Every target checked before anything changes.
  SmallVector<WeightUse> uses;
  for (ParamOp param : *targets) {
    FailureOr<WeightUse> use = findUses(param, loads[param.getSymName()]);
    if (failed(use))
      return failure();
    uses.push_back(*use);
  }
  // As peft (bias="none"): only the adapters train.
  for (ParamOp param : module.getOps<ParamOp>())
    param.setFrozen(true);
  for (auto [param, use] : llvm::zip_equal(*targets, uses)) {
    SmallVector<LoadOp> &reads = loads[param.getSymName()];
    Type element = param.getTensorType().getElementType();
    builder.setInsertionPointAfter(param);
    auto adapter = [&](StringRef suffix, ArrayRef<int64_t> shape,
                       InitAttr init) {
      return ParamOp::create(builder, param.getLoc(),
                             (param.getSymName() + suffix).str(),
                             RankedTensorType::get(shape, element), init);
    };
    MLIRContext *context = module.getContext();
    ParamOp a = adapter(".lora_A", {config.rank, use.in},
                        InitAttr::get(context, InitKind::kaiming_uniform,
                                      APFloat(kLinearGain), nextSeed++));
    ParamOp b =
        adapter(".lora_B", {use.out, config.rank},
                InitAttr::get(context, InitKind::zeros, APFloat(1.0), 0));
    param->setAttr(GaccDialect::LoraAttrHelper::getNameStr(),
                   LoraAttr::get(context,
                                 FlatSymbolRefAttr::get(a.getSymNameAttr()),
                                 FlatSymbolRefAttr::get(b.getSymNameAttr()),
                                 APFloat(scale), use.transposed));
    // A seed of the name, the same in every process (hash_value is not).
    int64_t dropoutSeed = static_cast<int64_t>(
        llvm::xxh3_64bits(param.getSymName()) & 0x7fffffff);
    for (LoadOp load : reads)
      for (Operation *user : llvm::make_early_inc_range(load->getUsers()))
        addBranch(cast<MatmulOp>(user), a, b, scale, config.dropout,
                  dropoutSeed);
  }
  return success();
}

FailureOr<LoraConfig>
gacc::parseLoraConfig(StringRef text,
                      function_ref<InFlightDiagnostic()> emitError) {
  static constexpr llvm::StringLiteral keys[] = {"rank", "alpha", "dropout",
                                                 "targets"};
  auto startsKey = [](StringRef rest) {
    return llvm::any_of(keys, [&](StringRef key) {
      return rest.starts_with(key) && rest.drop_front(key.size()).starts_with("=");
    });
  };
  // Split at the commas that start a key, so that a regular expression
  // keeps its own.
  SmallVector<StringRef> items;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == ',' && startsKey(text.drop_front(i + 1))) {
      items.push_back(text.slice(start, i));
      start = i + 1;
    }
  items.push_back(text.drop_front(start));
  LoraConfig config;
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    if (!startsKey(item))
      return emitError() << "--lora: '" << item
                         << "' is not one of rank=N, alpha=X, dropout=X, "
                            "targets=REGEX";
    bool bad = false;
    if (key == "rank")
      bad = value.getAsInteger(10, config.rank);
    else if (key == "alpha")
      bad = value.getAsDouble(config.alpha);
    else if (key == "dropout")
      bad = value.getAsDouble(config.dropout);
    else
      config.targets = value.str();
    if (bad)
      return emitError() << "--lora: " << key << " '" << value
                         << "' is not a number";
  }
  return config;
}

namespace {
struct LoraPass : public gacc::impl::LoraBase<LoraPass> {
  using LoraBase::LoraBase;
  void runOnOperation() override {
    LoraConfig config{rank, alpha, dropout, targets};
    if (failed(applyLora(getOperation(), config)))
      signalPassFailure();
  }
};
} // namespace
