//===- CollectivesToCalls.cpp - collectives to the runtime's communicator ---===//
//
// A collective becomes a call of the runtime (gacc/runtime/Collectives.h):
// the operand's buffer (any layout) and a fresh result buffer, passed as
// unranked memrefs, then the element type and the reduction or root. The
// runtime runs it on the job's communicator (MPI, or one rank). Each element
// type has its own declaration (`gacc_comm_all_reduce_bf16`, ...), since
// MLIR types the memrefs; the runtime binds them to one function.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::gacc;

/// The element type as the runtime numbers it (gacc::rt::DType: F64, F32,
/// F16, BF16).
static int32_t runtimeDType(Type element) {
  if (element.isF64())
    return 0;
  if (element.isF16())
    return 2;
  if (element.isBF16())
    return 3;
  return 1;
}

/// The declaration of `name(memref<*xT>, memref<*xT>, i32, i32)`.
static func::FuncOp declareCollective(OpBuilder &b, Operation *op,
                                      StringRef name, Type element) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  auto unranked = UnrankedMemRefType::get(element, 0);
  return func::createFnDecl(
      b, module, name,
      b.getFunctionType({unranked, unranked, b.getI32Type(), b.getI32Type()},
                        {}),
      /*setPrivate=*/true);
}

/// Replaces `op` (one tensor in, one out) by a call of `base`_<type> (one
/// declaration per element type; the runtime binds them all to `base`).
static void replaceByCall(ConversionPatternRewriter &rewriter, Operation *op,
                          StringRef base, Value input, int32_t argument) {
  Location loc = op->getLoc();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type element = inputType.getElementType();
  std::string name;
  llvm::raw_string_ostream(name) << base << "_" << element;
  // The input in whatever layout it has; the runtime packs strided ones.
  Value in = bufferization::ToBufferOp::create(
      rewriter, loc,
      bufferization::getMemRefTypeWithFullyDynamicLayout(inputType), input,
      /*read_only=*/true);
  auto outType = MemRefType::get(resultType.getShape(), element);
  Value out = memref::AllocOp::create(rewriter, loc, outType);
  auto unranked = UnrankedMemRefType::get(element, 0);
  func::FuncOp callee = declareCollective(rewriter, op, name, element);
  auto i32 = [&](int32_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                        value);
  };
  func::CallOp::create(
      rewriter, loc, callee,
      ValueRange{memref::CastOp::create(rewriter, loc, unranked, in),
                 memref::CastOp::create(rewriter, loc, unranked, out),
                 i32(runtimeDType(element)), i32(argument)});
  rewriter.replaceOp(op, bufferization::ToTensorOp::create(
                             rewriter, loc, resultType, out,
                             /*restrict=*/true, /*writable=*/true));
}

static int32_t reductionCode(CollectiveReduction reduction) {
  return reduction == CollectiveReduction::mean ? 1 : 0;
}

// Per op: the runtime function, its last argument, and what is lowered
// (shards are runs of the flat tensor only along dimension 0; broadcasts of
// floats).
static StringRef runtimeName(AllReduceOp) { return "gacc_comm_all_reduce"; }
static StringRef runtimeName(ReduceScatterOp) {
  return "gacc_comm_reduce_scatter";
}
static StringRef runtimeName(AllGatherOp) { return "gacc_comm_all_gather"; }
static StringRef runtimeName(CollectiveBroadcastOp) {
  return "gacc_comm_broadcast";
}
static int32_t callArgument(AllReduceOp op) {
  return reductionCode(op.getReduction());
}
static int32_t callArgument(ReduceScatterOp op) {
  return reductionCode(op.getReduction());
}
static int32_t callArgument(AllGatherOp) { return 0; }
static int32_t callArgument(CollectiveBroadcastOp op) {
  return static_cast<int32_t>(op.getRoot());
}
static bool lowerable(AllReduceOp) { return true; }
static bool lowerable(ReduceScatterOp op) { return op.getDim() == 0; }
static bool lowerable(AllGatherOp op) { return op.getDim() == 0; }
static bool lowerable(CollectiveBroadcastOp op) {
  return isa<FloatType>(op.getInput().getType().getElementType());
}

namespace {
template <typename Op> struct CollectiveToCall : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!lowerable(op))
      return rewriter.notifyMatchFailure(
          op, "only dimension 0 and float broadcasts are lowered");
    replaceByCall(rewriter, op, runtimeName(op), adaptor.getInput(),
                  callArgument(op));
    return success();
  }
};
} // namespace

void mlir::gacc::populateCollectivesToCallsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<CollectiveToCall<AllReduceOp>, CollectiveToCall<ReduceScatterOp>,
               CollectiveToCall<AllGatherOp>,
               CollectiveToCall<CollectiveBroadcastOp>>(patterns.getContext());
}
