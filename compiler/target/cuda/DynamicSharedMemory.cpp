//===- DynamicSharedMemory.cpp - large workgroup memory made dynamic
//-------===//
//
// A kernel's static shared memory stops at 48 KB; beyond that it must be
// dynamic shared memory, sized at each launch and allowed per kernel by the
// driver (the runtime's mgpuLaunchKernel does that). Kernels declare what
// they need as workgroup attributions, whatever the size; this pass, just
// before outlining, gives those of a launch that needs more than 48 KB one
// dynamic buffer instead, as views at 16-byte aligned offsets.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_DYNAMICSHAREDMEMORY
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
constexpr int64_t kStaticSharedBytes = 48 * 1024;
// ldmatrix and cp.async move 16 bytes at a time from 16-byte boundaries.
constexpr int64_t kAlignment = 16;

/// Moves `launch`'s workgroup attributions into dynamic shared memory if
/// they need more than the static limit.
LogicalResult makeDynamic(gpu::LaunchOp launch) {
  SmallVector<BlockArgument> buffers(launch.getWorkgroupAttributions());
  SmallVector<int64_t> offsets;
  int64_t bytes = 0;
  Type unplaceable;
  for (BlockArgument buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    Type element = type.getElementType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 ||
        !isa<gpu::AddressSpaceAttr>(type.getMemorySpace())) {
      unplaceable = type;
      continue;
    }
    offsets.push_back(bytes);
    bytes += llvm::alignTo(type.getNumElements() *
                               element.getIntOrFloatBitWidth() / 8,
                           kAlignment);
  }
  if (bytes <= kStaticSharedBytes)
    return success();
  if (unplaceable)
    return launch.emitOpError("needs more than 48 KB of workgroup memory, "
                              "but a buffer of type ")
           << unplaceable << " cannot be a view of dynamic shared memory";
  if (launch.getDynamicSharedMemorySize())
    return launch.emitOpError("needs ")
           << bytes << " bytes of workgroup memory and has dynamic shared "
           << "memory already";
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  launch.getDynamicSharedMemorySizeMutable().assign(
      arith::ConstantIntOp::create(b, loc, bytes, 32));
  b.setInsertionPointToStart(&launch.getBody().front());
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      workgroup));
  for (auto [buffer, offset] : llvm::zip_equal(buffers, offsets))
    buffer.replaceAllUsesWith(memref::ViewOp::create(
        b, loc, cast<MemRefType>(buffer.getType()), raw,
        arith::ConstantIndexOp::create(b, loc, offset), ValueRange{}));
  // The attributions are consecutive block arguments (after the ids and
  // sizes), counted by an attribute.
  unsigned first = buffers.front().getArgNumber(), count = buffers.size();
  launch.getBody().front().eraseArguments(first, count);
  launch->setAttr(gpu::LaunchOp::getNumWorkgroupAttributionsAttrName(),
                  b.getI64IntegerAttr(0));
  return success();
}

struct DynamicSharedMemoryPass
    : public gacc::impl::DynamicSharedMemoryBase<DynamicSharedMemoryPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](gpu::LaunchOp launch) {
      return failed(makeDynamic(launch)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
