//===- ArenaViews.cpp - which bytes of which memory a buffer is -----------===//

#include "passes/ArenaViews.h"
#include "dialects/gacc/GaccDialect.h"
#include "dialects/gacc/GaccShapes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::gacc;

namespace {
ArenaView rootView(ArenaView::Kind kind, Value root) {
  ArenaView view;
  view.kind = kind;
  view.root = root;
  return view;
}

/// The initial buffer of `value`, a loop's region argument or result, when
/// the loop yields that buffer unchanged; null otherwise.
Value inPlaceInit(Value value) {
  scf::ForOp loop;
  unsigned index = 0;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0) // the induction variable
      return Value();
    index = arg.getArgNumber() - 1;
  } else {
    loop = value.getDefiningOp<scf::ForOp>();
    if (!loop)
      return Value();
    index = cast<OpResult>(value).getResultNumber();
  }
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (yield.getOperand(index) != loop.getRegionIterArgs()[index])
    return Value();
  return loop.getInitArgs()[index];
}

/// A view at a constant byte shift of a source whose base is known is the
/// bytes from there; otherwise it stays within its source.
ArenaView viewAt(memref::ViewOp view) {
  ArenaView result = getArenaView(view.getSource());
  std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
  if (!result.base || !shift) {
    result.base = std::nullopt;
    return result;
  }
  result.base = *result.base + *shift;
  if (std::optional<int64_t> bytes = getStaticByteSize(view.getType())) {
    result.begin = *result.base;
    result.end = *result.base + *bytes;
  }
  return result;
}

/// The result of an scf.if: the bytes either branch yields, when both
/// address one memory.
ArenaView eitherBranch(scf::IfOp branch, unsigned index) {
  ArenaView a = getArenaView(branch.thenYield().getOperand(index));
  ArenaView b = getArenaView(branch.elseYield().getOperand(index));
  if (!a.hasSameRoot(b))
    return rootView(ArenaView::Opaque, branch.getResult(index));
  a.begin = std::min(a.begin, b.begin);
  a.end = std::max(a.end, b.end);
  if (a.base != b.base)
    a.base = std::nullopt;
  return a;
}

/// Whether two memrefs of `type` at one base address address alike.
bool hasStaticAddressing(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.hasStaticShape() &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// The values to which the owner of `use` may hand on its memory, one step.
LogicalResult aliasesThrough(OpOperand &use, SmallVectorImpl<Value> &aliases) {
  Operation *user = use.getOwner();
  if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
    if (view.getViewSource() == use.get())
      llvm::append_range(aliases, user->getResults());
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(user)) {
    if (OpResult result = loop.getTiedLoopResult(&use)) {
      aliases.push_back(loop.getTiedLoopRegionIterArg(&use));
      aliases.push_back(result);
    }
    return success();
  }
  if (isa<scf::YieldOp>(user)) {
    Operation *parent = user->getParentOp();
    unsigned index = use.getOperandNumber();
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      aliases.push_back(loop.getRegionIterArgs()[index]);
      aliases.push_back(loop.getResult(index));
      return success();
    }
    if (isa<scf::IfOp>(parent)) {
      aliases.push_back(parent->getResult(index));
      return success();
    }
    return failure();
  }
  if (user->hasTrait<OpTrait::IsTerminator>())
    return failure();
  // Any other op that returns a memref might return this one.
  for (Value result : user->getResults())
    if (isa<BaseMemRefType>(result.getType()))
      aliases.push_back(result);
  return success();
}
} // namespace

bool ArenaView::hasSameRoot(const ArenaView &other) const {
  if (kind != other.kind)
    return false;
  if (kind != Global)
    return root == other.root;
  return root.getDefiningOp<memref::GetGlobalOp>().getName() ==
         other.root.getDefiningOp<memref::GetGlobalOp>().getName();
}

bool ArenaView::mayOverlap(const ArenaView &other) const {
  if (hasSameRoot(other))
    return begin < other.end && other.begin < end;
  return kind == Opaque || other.kind == Opaque;
}

ArenaView gacc::getArenaView(Value value) {
  while (true) {
    if (Value init = inPlaceInit(value)) {
      value = init;
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      bool isArgument = arg.getOwner()->isEntryBlock() &&
                        isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
      return rootView(isArgument ? ArenaView::Argument : ArenaView::Opaque,
                      arg);
    }
    Operation *def = value.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return rootView(ArenaView::Allocation, value);
    if (isa<memref::GetGlobalOp>(def))
      return rootView(ArenaView::Global, value);
    if (auto view = dyn_cast<memref::ViewOp>(def))
      return viewAt(view);
    // Subviews, casts, reshapes: within their source, at its base address.
    if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def)) {
      value = viewLike.getViewSource();
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(def))
      return eitherBranch(branch, cast<OpResult>(value).getResultNumber());
    return rootView(ArenaView::Opaque, value);
  }
}

StringRef gacc::getArenaRole(Value memref) {
  ArenaView view = getArenaView(memref);
  auto argument = dyn_cast_or_null<BlockArgument>(view.root);
  if (view.kind != ArenaView::Argument || !argument)
    return "";
  auto function =
      dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
  if (!function)
    return "";
  unsigned index = argument.getArgNumber();
  if (auto role = function.getArgAttrOfType<StringAttr>(
          index, GaccDialect::ArenaAttrHelper::getNameStr()))
    return role.getValue();
  StringRef name = SymbolTable::getSymbolName(function).getValue();
  if ((name == "gacc_step" || name == "gacc_eval") &&
      function.getNumArguments() == std::size(kArenaRoles))
    return kArenaRoles[index];
  return "";
}

bool gacc::mayOverlap(Value a, Value b) {
  return getArenaView(a).mayOverlap(getArenaView(b));
}

bool gacc::isSameBuffer(Value a, Value b) {
  if (a == b)
    return true;
  auto type = dyn_cast<MemRefType>(a.getType());
  return type && type == b.getType() && hasStaticAddressing(type) &&
         getArenaView(a).hasSameBase(getArenaView(b));
}

LogicalResult
gacc::walkAliasUses(Value memref,
                    function_ref<LogicalResult(OpOperand &)> visit) {
  SmallVector<Value> worklist{memref};
  DenseSet<Value> seen{memref};
  SmallVector<Value> aliases;
  while (!worklist.empty()) {
    for (OpOperand &use : worklist.pop_back_val().getUses()) {
      aliases.clear();
      if (failed(visit(use)) || failed(aliasesThrough(use, aliases)))
        return failure();
      for (Value alias : aliases)
        if (seen.insert(alias).second)
          worklist.push_back(alias);
    }
  }
  return success();
}
