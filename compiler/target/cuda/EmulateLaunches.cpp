//===- EmulateLaunches.cpp - run gpu.launch bodies on the CPU ---------------===//
//
// Barriers split the kernel body into thread loops (the technique of POCL
// and Polygeist's barrier lowering): code between two barriers runs for
// every thread of the block before any thread passes the next barrier.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/Passes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_EMULATELAUNCHES
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {

/// Expands each `OpT` of `launch` with `expand`, first to last.
template <typename OpT>
LogicalResult expandEach(gpu::LaunchOp launch,
                         function_ref<LogicalResult(OpT)> expand) {
  SmallVector<OpT> ops;
  launch.getBody().walk([&](OpT op) { ops.push_back(op); });
  for (OpT op : ops)
    if (failed(expand(op)))
      return failure();
  return success();
}

/// Where the thread that runs the code at `ib` is: its place in the block,
/// its lane and the first thread of its warp.
struct ThreadPlace {
  Value linear, lane, warpStart;
};
ThreadPlace threadPlace(gacc::KernelIndexBuilder &ib) {
  ImplicitLocOpBuilder &b = ib.b;
  auto threadId = [&](gpu::Dimension d) -> Value {
    return gpu::ThreadIdOp::create(b, d);
  };
  auto blockDim = [&](gpu::Dimension d) -> Value {
    return gpu::BlockDimOp::create(b, d);
  };
  Value linear = ib.linearize(
      {threadId(gpu::Dimension::z), threadId(gpu::Dimension::y),
       threadId(gpu::Dimension::x)},
      {blockDim(gpu::Dimension::y), blockDim(gpu::Dimension::x)});
  Value lane = ib.rem(linear, 32);
  return {linear, lane, arith::SubIOp::create(b, linear, lane)};
}

/// Rewrites each warp-level nvvm.mma.sync of `launch` (m16n8k16, A row-
/// and B column-major, f16 or bf16 into f32: what TileMatmuls emits) as
/// what one lane computes of it: every lane stores its fragments to
/// workgroup memory; after a barrier each lane sums its four elements of D
/// from its warp's fragments (in the layouts of PTX's mma.m16n8k16) into
/// private memory; another barrier frees the fragments' memory for the
/// next mma. The barriers are the block's, which is what a warp's lanes
/// running in lockstep amount to.
class MmaExpander {
public:
  explicit MmaExpander(gpu::LaunchOp launch) : launch(launch) {}

  LogicalResult run() {
    return expandEach<NVVM::MmaOp>(
        launch, [&](NVVM::MmaOp mma) { return expand(mma); });
  }

private:
  LogicalResult expand(NVVM::MmaOp mma) {
    Type f32 = Float32Type::get(mma.getContext());
    std::optional<NVVM::MMATypes> type = mma.getMultiplicandAPtxType();
    auto fourFloats = dyn_cast<LLVM::LLVMStructType>(mma.getType());
    if (mma.getShape().getM() != 16 || mma.getShape().getN() != 8 ||
        mma.getShape().getK() != 16 ||
        mma.getLayoutA() != NVVM::MMALayout::row ||
        mma.getLayoutB() != NVVM::MMALayout::col || !type ||
        (*type != NVVM::MMATypes::f16 && *type != NVVM::MMATypes::bf16) ||
        mma.getMultiplicandBPtxType() != type || !fourFloats ||
        fourFloats.getBody() != ArrayRef<Type>{f32, f32, f32, f32})
      return mma.emitOpError("cannot be emulated (only m16n8k16, row-col, "
                             "f16 or bf16 into f32)");
    Type element = *type == NVVM::MMATypes::f16
                       ? Type(Float16Type::get(mma.getContext()))
                       : Type(BFloat16Type::get(mma.getContext()));
    if (failed(allocateScratch(mma, element)))
      return failure();
    gacc::KernelIndexBuilder ib(mma.getLoc(), mma);
    ImplicitLocOpBuilder &b = ib.b;
    ThreadPlace place = threadPlace(ib);
    Value linear = place.linear, lane = place.lane, warpStart = place.warpStart;

    // The fragments, two 16-bit elements per register, the low half first.
    auto storeFragment = [&](ValueRange registers, Value scratch) {
      for (auto [r, reg] : llvm::enumerate(registers)) {
        Value pair = reg;
        if (!isa<VectorType>(pair.getType()))
          pair = LLVM::BitcastOp::create(b, VectorType::get({2}, element), reg);
        for (int64_t e = 0; e < 2; ++e)
          memref::StoreOp::create(b, vector::ExtractOp::create(b, pair, e),
                                  scratch,
                                  ValueRange{linear, ib.index(2 * r + e)});
      }
    };
    storeFragment(mma.getOperandA(), aScratch);
    storeFragment(mma.getOperandB(), bScratch);
    for (auto [i, c] : llvm::enumerate(mma.getOperandC()))
      memref::StoreOp::create(b, c, cScratch, ValueRange{linear, ib.index(i)});
    gpu::BarrierOp::create(b);

    // D[row][col] = C[row][col] + sum over k of A[row][k] B[k][col], for
    // this lane's rows g, g + 8 and columns 2t, 2t + 1.
    Value g = ib.div(lane, 4), twoT = ib.mul(ib.rem(lane, 4), 2);
    SmallVector<Value> sums;
    for (int64_t i = 0; i < 4; ++i)
      sums.push_back(
          memref::LoadOp::create(b, cScratch, ValueRange{linear, ib.index(i)}));
    auto kLoop =
        scf::ForOp::create(b, ib.index(0), ib.index(16), ib.index(1), sums);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value k = kLoop.getInductionVar();
      Value kPair = ib.div(ib.rem(k, 8), 2), kHalf = ib.div(k, 8),
            kOdd = ib.rem(k, 2);
      // A[g + 8h][k]: lane 4g + (k % 8) / 2, slot 2 (h + 2 (k / 8)) + k % 2.
      auto aAt = [&](int64_t h) -> Value {
        Value source = ib.add(warpStart, ib.add(ib.mul(g, 4), kPair));
        Value slot =
            ib.add(ib.mul(ib.add(ib.index(h), ib.mul(kHalf, 2)), 2), kOdd);
        return arith::ExtFOp::create(
            b, f32,
            memref::LoadOp::create(b, aScratch, ValueRange{source, slot})
                .getResult());
      };
      // B[k][n]: lane 4n + (k % 8) / 2, slot 2 (k / 8) + k % 2.
      auto bAt = [&](Value n) -> Value {
        Value source = ib.add(warpStart, ib.add(ib.mul(n, 4), kPair));
        Value slot = ib.add(ib.mul(kHalf, 2), kOdd);
        return arith::ExtFOp::create(
            b, f32,
            memref::LoadOp::create(b, bScratch, ValueRange{source, slot})
                .getResult());
      };
      Value a[2] = {aAt(0), aAt(1)};
      Value bCols[2] = {bAt(twoT), bAt(ib.add(twoT, ib.index(1)))};
      SmallVector<Value> next;
      for (int64_t i = 0; i < 4; ++i)
        next.push_back(arith::AddFOp::create(
            b, kLoop.getRegionIterArgs()[i],
            arith::MulFOp::create(b, a[i / 2], bCols[i % 2])));
      scf::YieldOp::create(b, next);
    }
    for (int64_t i = 0; i < 4; ++i)
      memref::StoreOp::create(b, kLoop.getResult(i), dPrivate,
                              ValueRange{ib.index(i)});
    gpu::BarrierOp::create(b);
    Value d = LLVM::PoisonOp::create(b, fourFloats);
    for (int64_t i = 0; i < 4; ++i)
      d = LLVM::InsertValueOp::create(
          b, d, memref::LoadOp::create(b, dPrivate, ValueRange{ib.index(i)}),
          i);
    mma.replaceAllUsesWith(d);
    mma.erase();
    return success();
  }

  /// Per lane: A's 8 and B's 4 elements, C's 4 (workgroup memory, a row
  /// per thread of the block), D's 4 (private).
  LogicalResult allocateScratch(NVVM::MmaOp mma, Type element) {
    if (aScratch) {
      if (cast<MemRefType>(aScratch.getType()).getElementType() != element)
        return mma.emitOpError("cannot be emulated beside an mma.sync of "
                               "another type");
      return success();
    }
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    std::optional<int64_t> x = getConstantIntValue(block.x),
                           y = getConstantIntValue(block.y),
                           z = getConstantIntValue(block.z);
    if (!x || !y || !z)
      return mma.emitOpError("cannot be emulated in blocks of dynamic size");
    int64_t threads = *x * *y * *z;
    MLIRContext *context = mma.getContext();
    auto workgroup = gpu::AddressSpaceAttr::get(
        context, gpu::GPUDialect::getWorkgroupAddressSpace());
    auto privateSpace = gpu::AddressSpaceAttr::get(
        context, gpu::GPUDialect::getPrivateAddressSpace());
    Type f32 = Float32Type::get(context);
    Location loc = launch.getLoc();
    aScratch = launch.addWorkgroupAttribution(
        MemRefType::get({threads, 8}, element, nullptr, workgroup), loc);
    bScratch = launch.addWorkgroupAttribution(
        MemRefType::get({threads, 4}, element, nullptr, workgroup), loc);
    cScratch = launch.addWorkgroupAttribution(
        MemRefType::get({threads, 4}, f32, nullptr, workgroup), loc);
    dPrivate = launch.addPrivateAttribution(
        MemRefType::get({4}, f32, nullptr, privateSpace), loc);
    return success();
  }

  gpu::LaunchOp launch;
  Value aScratch, bScratch, cScratch, dPrivate;
};

/// Rewrites each cp.async of `launch` (nvgpu.device_async_copy, which
/// TileMatmuls emits to fill shared tiles) as the copy it makes, done when
/// issued, element by element (past `srcElements`, zeros), and drops the
/// commit groups and waits: on the CPU a thread's copies have landed
/// before it reaches its wait, and the barrier after the wait orders them
/// before other threads' reads as on the GPU.
LogicalResult expandAsyncCopies(gpu::LaunchOp launch) {
  SmallVector<Operation *> tokens;
  launch.getBody().walk([&](Operation *op) {
    if (isa<nvgpu::DeviceAsyncWaitOp>(op))
      op->erase();
    else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op))
      tokens.push_back(op);
  });
  for (Operation *group : tokens)
    group->erase();
  return expandEach<nvgpu::DeviceAsyncCopyOp>(
      launch, [](nvgpu::DeviceAsyncCopyOp copy) {
        gacc::KernelIndexBuilder ib(copy.getLoc(), copy);
        ImplicitLocOpBuilder &b = ib.b;
        int64_t elements = copy.getDstElements().getZExtValue();
        Value copied = copy.getSrcElements() ? Value(copy.getSrcElements())
                                             : ib.index(elements);
        Type element = copy.getDst().getType().getElementType();
        SmallVector<Value> from(copy.getSrcIndices()), to(copy.getDstIndices());
        Value lastFrom = from.back(), lastTo = to.back();
        for (int64_t j = 0; j < elements; ++j) {
          from.back() = ib.add(lastFrom, j);
          to.back() = ib.add(lastTo, j);
          Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                               ib.index(j), copied);
          auto value = scf::IfOp::create(
              b, inside,
              [&](OpBuilder &nested, Location loc) {
                scf::YieldOp::create(
                    nested, loc,
                    memref::LoadOp::create(nested, loc, copy.getSrc(), from)
                        .getResult());
              },
              [&](OpBuilder &nested, Location loc) {
                scf::YieldOp::create(
                    nested, loc,
                    arith::ConstantOp::create(nested, loc,
                                              nested.getZeroAttr(element))
                        .getResult());
              });
          memref::StoreOp::create(b, value.getResult(0), copy.getDst(), to);
        }
        copy.erase();
        return success();
      });
}

/// Rewrites each warp-level nvgpu.ldmatrix of `launch` (what TileMatmuls
/// emits for mma fragments) as what one lane receives of it, in PTX's
/// layouts (lane l, register j: row l / 4 of matrix j, elements 2 (l % 4)
/// and the next; transposed, rows 2 (l % 4) and the next of matrix j,
/// element l / 4), each row starting where the lane that gives it points.
/// That lane's indices are computed again with its thread id: they must be
/// pure functions of the thread id and values of the block, as the
/// kernels' are. No barriers, so that the CPU code stays small.
class LdMatrixExpander {
public:
  explicit LdMatrixExpander(gpu::LaunchOp launch) : launch(launch) {}

  LogicalResult run() {
    return expandEach<nvgpu::LdMatrixOp>(
        launch, [&](nvgpu::LdMatrixOp load) { return expand(load); });
  }

private:
  LogicalResult expand(nvgpu::LdMatrixOp load) {
    auto resultType = cast<VectorType>(load.getType());
    int64_t tiles = load.getNumTiles();
    gpu::KernelDim3 size = launch.getBlockSizeOperandValues();
    std::optional<int64_t> sizeX = getConstantIntValue(size.x),
                           sizeY = getConstantIntValue(size.y);
    if (resultType.getShape() != ArrayRef<int64_t>{tiles, 2} ||
        resultType.getElementType().getIntOrFloatBitWidth() != 16)
      return load.emitOpError("cannot be emulated (only 16-bit elements)");
    if (!sizeX || !sizeY)
      return load.emitOpError("cannot be emulated in blocks of dynamic size");
    gacc::KernelIndexBuilder ib(load.getLoc(), load);
    ImplicitLocOpBuilder &b = ib.b;
    gpu::KernelDim3 id = launch.getThreadIds();
    ThreadPlace place = threadPlace(ib);
    Value lane = place.lane, warpStart = place.warpStart;
    Value quad = ib.div(lane, 4), pair = ib.mul(ib.rem(lane, 4), 2);
    SmallVector<Value> received;
    for (int64_t j = 0; j < tiles; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        // The lane that gives the row, and the element along it.
        Value source = load.getTranspose()
                           ? ib.add(warpStart, ib.add(pair, 8 * j + e))
                           : ib.add(warpStart, ib.add(quad, 8 * j));
        Value along = load.getTranspose() ? quad : ib.add(pair, e);
        IRMapping asSource;
        asSource.map(id.x, ib.rem(source, *sizeX));
        asSource.map(id.y, ib.rem(ib.div(source, *sizeX), *sizeY));
        asSource.map(id.z, ib.div(source, *sizeX * *sizeY));
        SmallVector<Value> at;
        for (Value index : load.getIndices()) {
          FailureOr<Value> theirs = recompute(b, index, asSource);
          if (failed(theirs))
            return load.emitOpError("cannot be emulated: its indices are not "
                                    "pure functions of the thread id");
          at.push_back(*theirs);
        }
        at.back() = ib.add(at.back(), along);
        received.push_back(memref::LoadOp::create(b, load.getSrcMemref(), at));
      }
    load.replaceAllUsesWith(
        vector::FromElementsOp::create(b, resultType, received).getResult());
    load.erase();
    return success();
  }

  /// `value` as another thread computes it: the pure ops of the launch it
  /// is made of cloned at `b` with `mapping` (the thread ids).
  FailureOr<Value> recompute(OpBuilder &b, Value value, IRMapping &mapping) {
    if (Value mapped = mapping.lookupOrNull(value))
      return mapped;
    Operation *def = value.getDefiningOp();
    if (!def) {
      // The same in every thread: the launch's ids and sizes (but the
      // thread ids, mapped), and the induction variables of loops.
      auto argument = cast<BlockArgument>(value);
      Operation *owner = argument.getOwner()->getParentOp();
      bool uniform = owner == launch.getOperation() ||
                     !launch->isAncestor(owner) ||
                     (isa<scf::ForOp>(owner) &&
                      value == cast<scf::ForOp>(owner).getInductionVar());
      if (!uniform)
        return failure();
      return value;
    }
    if (!launch.getBody().isAncestor(def->getParentRegion()))
      return value;
    if (isa<gpu::ThreadIdOp, gpu::LaneIdOp>(def))
      return failure();
    if (def->getNumRegions() || !isMemoryEffectFree(def))
      return failure();
    for (Value operand : def->getOperands())
      if (failed(recompute(b, operand, mapping)))
        return failure();
    return b.clone(*def, mapping)
        ->getResult(cast<OpResult>(value).getResultNumber());
  }

  gpu::LaunchOp launch;
};

bool containsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Emits one gpu.launch as a loop over blocks holding thread loops.
class LaunchEmulator {
public:
  explicit LaunchEmulator(gpu::LaunchOp launch)
      : launch(launch), b(launch), loc(launch.getLoc()) {}

  LogicalResult run();

private:
  bool inLaunch(Value value) {
    return launch.getBody().isAncestor(value.getParentRegion());
  }
  /// `value` at the block level, or null if it depends on the thread.
  Value uniformValue(Value value) {
    if (!inLaunch(value))
      return value;
    return uniform.lookupOrNull(value);
  }
  bool isUniform(Operation *op) {
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           llvm::all_of(op->getOperands(),
                        [&](Value v) { return uniformValue(v); });
  }

  LogicalResult emitBlock(Block &block);
  LogicalResult emitUniformRegionOp(Operation *op);
  LogicalResult flushSegment();
  LogicalResult cloneIntoThread(Operation *op, IRMapping &thread,
                                OpBuilder &threadBuilder);

  gpu::LaunchOp launch;
  OpBuilder b;
  Location loc;
  /// Launch values -> their values at the block level (block ids, sizes,
  /// workgroup buffers, ops that do not depend on the thread).
  IRMapping uniform;
  /// The ops of the current segment (between barriers), not yet emitted.
  SmallVector<Operation *> segment;
  /// Private attributions -> one buffer per block with a row per thread.
  SmallVector<std::pair<BlockArgument, Value>> privateBuffers;
};

LogicalResult LaunchEmulator::run() {
  if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
    return launch.emitOpError("with async tokens, dynamic shared memory or "
                              "clusters cannot be emulated");
  // Id and size ops become the launch's region arguments, so that the loop
  // indices replace one kind of value.
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  auto select = [](gpu::KernelDim3 dims, gpu::Dimension dim) {
    return dim == gpu::Dimension::x   ? dims.x
           : dim == gpu::Dimension::y ? dims.y
                                      : dims.z;
  };
  SmallVector<Operation *> idOps;
  launch.getBody().walk([&](Operation *op) {
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replacement = select(blockIds, id.getDimension());
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replacement = select(threadIds, id.getDimension());
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      replacement = select(gridArgs, dim.getDimension());
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      replacement = select(blockArgs, dim.getDimension());
    if (!replacement)
      return;
    op->getResult(0).replaceAllUsesWith(replacement);
    idOps.push_back(op);
  });
  for (Operation *op : idOps)
    op->erase();

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  // The blocks run one after the other, so they share one workgroup buffer
  // and one private buffer (with a row per thread), on the heap: a launch
  // may sit in a loop, where stack allocations would pile up.
  SmallVector<Value> buffers;
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    buffers.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType())));
    uniform.map(buffer, buffers.back());
  }
  if (!launch.getPrivateAttributions().empty()) {
    Value threads = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block.x, block.y), block.z);
    for (BlockArgument buffer : launch.getPrivateAttributions()) {
      auto type = cast<MemRefType>(buffer.getType());
      SmallVector<int64_t> shape{ShapedType::kDynamic};
      llvm::append_range(shape, type.getShape());
      buffers.push_back(memref::AllocOp::create(
          b, loc, MemRefType::get(shape, type.getElementType()),
          ValueRange{threads}));
      privateBuffers.push_back({buffer, buffers.back()});
    }
  }
  for (Value buffer : buffers)
    memref::DeallocOp::create(b, loc, buffer);
  if (!buffers.empty())
    b.setInsertionPoint(buffers.back().getDefiningOp()->getNextNode());

  // Blocks run last to first: CUDA promises no order between blocks, and a
  // kernel whose blocks read what other blocks write (two ops of a fused
  // chain meeting in reused memory) is likelier to give a wrong answer
  // here in an order its author did not think of.
  for (auto [id, size] : {std::pair{blockIds.z, grid.z},
                          {blockIds.y, grid.y},
                          {blockIds.x, grid.x}}) {
    Value last = arith::SubIOp::create(b, loc, size, one);
    auto loop = scf::ForOp::create(b, loc, zero, size, one);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    uniform.map(id, arith::SubIOp::create(b, loc, last, loop.getInductionVar()));
  }
  for (auto [arg, size] : {std::pair{gridArgs.x, grid.x},
                           {gridArgs.y, grid.y},
                           {gridArgs.z, grid.z},
                           {blockArgs.x, block.x},
                           {blockArgs.y, block.y},
                           {blockArgs.z, block.z}})
    uniform.map(arg, size);
  if (failed(emitBlock(launch.getBody().front())))
    return failure();
  launch.erase();
  return success();
}

/// Emits `block`'s ops at `b`: barriers end segments, ops that contain
/// barriers run once per block, uniform ops are hoisted out of the thread
/// loops, every other op joins the current segment.
LogicalResult LaunchEmulator::emitBlock(Block &block) {
  for (Operation &op : block.without_terminator()) {
    if (isa<gpu::BarrierOp>(op)) {
      if (failed(flushSegment()))
        return failure();
    } else if (containsBarrier(&op)) {
      if (failed(flushSegment()) || failed(emitUniformRegionOp(&op)))
        return failure();
    } else if (isUniform(&op)) {
      b.clone(op, uniform);
    } else {
      segment.push_back(&op);
    }
  }
  return flushSegment();
}

LogicalResult LaunchEmulator::emitUniformRegionOp(Operation *op) {
  auto divergent = [&]() {
    return op->emitOpError("holds a gpu.barrier but depends on the thread "
                           "(every thread of a block must reach a barrier)");
  };
  OpBuilder::InsertionGuard guard(b);
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    Value lower = uniformValue(loop.getLowerBound());
    Value upper = uniformValue(loop.getUpperBound());
    Value step = uniformValue(loop.getStep());
    if (!lower || !upper || !step)
      return divergent();
    if (loop.getNumRegionIterArgs())
      return op->emitOpError("holding a gpu.barrier cannot carry values "
                             "(keep them in private memory)");
    auto emulated = scf::ForOp::create(b, loop.getLoc(), lower, upper, step);
    uniform.map(loop.getInductionVar(), emulated.getInductionVar());
    b.setInsertionPoint(emulated.getBody()->getTerminator());
    return emitBlock(*loop.getBody());
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    Value condition = uniformValue(branch.getCondition());
    if (!condition)
      return divergent();
    if (branch.getNumResults())
      return op->emitOpError("holding a gpu.barrier cannot yield values");
    bool hasElse = !branch.getElseRegion().empty();
    auto emulated = scf::IfOp::create(b, branch.getLoc(), condition, hasElse);
    b.setInsertionPoint(emulated.thenBlock()->getTerminator());
    if (failed(emitBlock(*branch.thenBlock())))
      return failure();
    if (!hasElse)
      return success();
    b.setInsertionPoint(emulated.elseBlock()->getTerminator());
    return emitBlock(*branch.elseBlock());
  }
  return op->emitOpError("holds a gpu.barrier and cannot be emulated "
                         "(only scf.for and scf.if can)");
}

/// Emits the pending segment as a loop over the block's threads.
LogicalResult LaunchEmulator::flushSegment() {
  if (segment.empty())
    return success();
  Location segmentLoc = segment.front()->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, segmentLoc, 0);
  Value one = arith::ConstantIndexOp::create(b, segmentLoc, 1);
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  auto threads =
      scf::ParallelOp::create(b, segmentLoc, {zero, zero, zero},
                              {block.z, block.y, block.x}, {one, one, one});
  OpBuilder threadBuilder(threads.getBody()->getTerminator());
  IRMapping thread = uniform;
  ValueRange ivs = threads.getInductionVars();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  thread.map(threadIds.z, ivs[0]);
  thread.map(threadIds.y, ivs[1]);
  thread.map(threadIds.x, ivs[2]);
  if (!privateBuffers.empty()) {
    // Row (tz·by + ty)·bx + tx of each private buffer is this thread's.
    Value row =
        gacc::KernelIndexBuilder(segmentLoc, threads.getBody()->getTerminator())
            .linearize(ivs, {block.y, block.x});
    for (auto [arg, buffer] : privateBuffers) {
      auto type = cast<MemRefType>(arg.getType());
      SmallVector<OpFoldResult> offsets(type.getRank() + 1,
                                        threadBuilder.getIndexAttr(0));
      offsets[0] = row;
      SmallVector<OpFoldResult> sizes{threadBuilder.getIndexAttr(1)};
      for (int64_t size : type.getShape())
        sizes.push_back(threadBuilder.getIndexAttr(size));
      SmallVector<OpFoldResult> strides(type.getRank() + 1,
                                        threadBuilder.getIndexAttr(1));
      auto sourceType = cast<MemRefType>(buffer.getType());
      MemRefType rowType = memref::SubViewOp::inferRankReducedResultType(
          type.getShape(), sourceType, offsets, sizes, strides);
      thread.map(arg,
                 memref::SubViewOp::create(threadBuilder, segmentLoc, rowType,
                                           buffer, offsets, sizes, strides));
    }
  }
  for (Operation *op : segment)
    if (failed(cloneIntoThread(op, thread, threadBuilder)))
      return failure();
  segment.clear();
  return success();
}

/// Clones `op` into the thread loop; pure values it uses from an earlier
/// segment are computed again.
LogicalResult LaunchEmulator::cloneIntoThread(Operation *op, IRMapping &thread,
                                              OpBuilder &threadBuilder) {
  SmallVector<Value> used(op->getOperands());
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()))
        used.push_back(v);
  });
  for (Value v : used) {
    if (!inLaunch(v) || thread.contains(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumRegions() || !isMemoryEffectFree(def))
      return op->emitOpError("uses a value computed before a gpu.barrier "
                             "(keep it in private memory)");
    if (failed(cloneIntoThread(def, thread, threadBuilder)))
      return failure();
  }
  threadBuilder.clone(*op, thread);
  return success();
}

struct EmulateLaunchesPass
    : public gacc::impl::EmulateLaunchesBase<EmulateLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(expandAsyncCopies(launch)) ||
          failed(LdMatrixExpander(launch).run()) ||
          failed(MmaExpander(launch).run()) ||
          failed(LaunchEmulator(launch).run()))
        return signalPassFailure();
  }
};
} // namespace
