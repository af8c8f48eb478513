//===- TileMatmuls.cpp - shared-memory tiled matmul kernels ---------------===//
//
// Both kernels compute a tile of C per block, A and B passing through
// workgroup memory a slice of K at a time (each element loaded once per
// block instead of once per thread, 16 bytes at a time where aligned). The
// classic SGEMM kernel: 64x64 tiles, 16x16 threads, each a 4x4 piece of
// the tile in private memory (registers once LLVM unrolls the constant
// loops), 16 of K at a time. The tensor-core kernel, for f16/bf16 operands
// into f32: 4 warps (by default), each a quarter of a 64x64 or 128x128 tile
// as m16n8k16 mma.sync tiles, 32 of K at a time (by default), fragments
// read with ldmatrix. Both are software-pipelined over K. Where A and B
// move 16 bytes at a time, the tensor-core kernel copies them with cp.async
// straight into shared memory, several slices ahead of the one it
// multiplies; otherwise the next slice is loaded into registers while the
// block multiplies the one in shared memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/common/Contractions.h"
#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/MmaFragments.h"
#include "compiler/target/cuda/Passes.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "passes/ArenaViews.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_TILEMATMULS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using gacc::kMmaK;
using gacc::kMmaM;
using gacc::kMmaN;

namespace {
constexpr int64_t kTile = 64; // C tile per block: kTile x kTile
// Row tiles of C that consecutive blocks go down before the next column.
constexpr int64_t kGroupRows = 8;
// Shared tiles per operand where the next slice passes through registers:
// one multiplied while the next is loaded.
constexpr int64_t kRegisterStages = 2;
// The SGEMM kernel: 16x16 threads, each a 4x4 piece of the tile.
constexpr int64_t kThreads = 16;
constexpr int64_t kPerThread = kTile / kThreads;
constexpr int64_t kSgemmDepth = 16; // K elements per shared tile
// The tensor-core kernel (by default; see the pass's `warps` option): 2x2
// warps, each a quarter of the block's tile:
// 32x32 (2x4 m16n8 tiles) of 64x64, or 64x64 (4x8) of 128x128 where C is
// that large. The larger tile reads A and B from shared memory once per 32
// mma instead of per 8 (the fragment loads bound the kernel), at the cost
// of 128 accumulators per lane.
constexpr int64_t kLargeTile = 128;
// Its shared tiles' rows (of K, 32 elements, or k-major, 64 or 128) are
// padded by 8 elements (16 bytes), so that the 8 rows of 16 bytes an
// ldmatrix reads for each 8x8 matrix fall in 8 different groups of 4
// banks: rows of 80, 144 or 272 bytes, odd multiples of 16, put 8
// consecutive rows in 8 different 16-byte groups modulo 128.
constexpr int64_t kMmaRowPad = 8;

/// Whether `op` (a matmul, see getMatmulShape) can become a tiled kernel:
/// buffers of static shapes.
bool isTileable(linalg::LinalgOp op) {
  return op.hasPureBufferSemantics() &&
         llvm::all_of(op->getOperandTypes(), [](Type type) {
           auto memref = dyn_cast<MemRefType>(type);
           return memref && memref.hasStaticShape();
         });
}

/// Whether tensor cores can compute `op`: f16 or bf16 operands (both the
/// same) accumulated in f32.
bool fitsTensorCores(linalg::LinalgOp op) {
  auto elementType = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Type lhs = elementType(op.getDpsInputs()[0]);
  return (lhs.isF16() || lhs.isBF16()) &&
         elementType(op.getDpsInputs()[1]) == lhs &&
         elementType(op.getDpsInits()[0]).isF32();
}

/// An elementwise op that reads C just after the matmul (a bias add, an
/// activation, a residual add, the 16-bit rounding), which the kernel
/// computes where it has C's element in registers: it stores the op's
/// result, and C only if something reads C later.
struct Epilogue {
  linalg::GenericOp op;
  /// The operand of `op` that reads C.
  unsigned cOperand;
  /// Whether C's values are read after `op`.
  bool keepC;
};

/// The epilogue `op`'s kernel can take: the next op with memory effects
/// after it, a linalg.generic of parallel loops over C's shape that reads C
/// once through the identity and writes one other buffer through the
/// identity, with a body of pure scalar ops. Its result must not share
/// bytes with A or B (blocks still read them while others store), nor with
/// its other inputs unless it is one of them element for element.
std::optional<Epilogue> epilogueAfter(linalg::LinalgOp op) {
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!epilogue || !isTileable(epilogue) || epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumLoops() != epilogue.getNumParallelLoops())
    return std::nullopt;
  Value c = op.getDpsInits()[0];
  Value result = epilogue.getDpsInits()[0];
  AffineMap resultMap = epilogue.getIndexingMapsArray().back();
  if (SmallVector<int64_t>(cast<MemRefType>(c.getType()).getShape()) !=
          epilogue.getStaticLoopRanges() ||
      !resultMap.isIdentity() || gacc::mayOverlap(result, c) ||
      llvm::any_of(op.getDpsInputs(),
                   [&](Value v) { return gacc::mayOverlap(result, v); }))
    return std::nullopt;
  std::optional<unsigned> cOperand;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() == c) {
      if (cOperand || !map.isIdentity())
        return std::nullopt;
      cOperand = input->getOperandNumber();
    } else if (gacc::mayOverlap(input->get(), c) ||
               (gacc::mayOverlap(input->get(), result) &&
                !(gacc::isSameBuffer(input->get(), result) &&
                  map == resultMap))) {
      return std::nullopt;
    }
  }
  if (!cOperand)
    return std::nullopt;
  for (Operation &inner : epilogue.getRegion().front().without_terminator())
    if (!isPure(&inner) || inner.getNumRegions())
      return std::nullopt;
  // C is dead after the epilogue if its memory is the step's own (the
  // workspace, whose bytes the memory plan reuses only after the last use of
  // each buffer's views, or an allocation; not an arena the caller reads),
  // C is made in the matmul's block (not a buffer carried between a loop's
  // trips), and the first later use of its memory in that block, if any, is
  // a fill of all of it.
  Block *block = op->getBlock();
  bool ownMemory = gacc::getArenaView(c).kind == gacc::ArenaView::Allocation ||
                   gacc::getArenaRole(c) == "workspace";
  bool keepC = !ownMemory || c.getParentBlock() != block;
  Operation *firstLater = nullptr;
  if (failed(gacc::walkAliasUses(c, [&](OpOperand &use) {
        Operation *user = block->findAncestorOpInBlock(*use.getOwner());
        if (!user)
          keepC = true;
        else if (epilogue->isBeforeInBlock(user) &&
                 (!firstLater || user->isBeforeInBlock(firstLater)))
          firstLater = user;
        return success();
      })))
    keepC = true;
  auto fill = dyn_cast_or_null<linalg::FillOp>(firstLater);
  if (firstLater && !(fill && fill.getDpsInits()[0] == c))
    keepC = true;
  return Epilogue{epilogue, *cOperand, keepC};
}

/// What the two kernels share: the launch over C's tiles (the batch in
/// blockIdx.z), the shared tiles of A and B and how they are filled, and
/// the accumulation into C.
class MatmulKernel : public gacc::KernelIndexBuilder {
public:
  /// Each block computes a `tileRows` x `tileCols` piece of C; `depthStep`
  /// elements of K pass through the shared tiles at a time. The SGEMM
  /// kernel's tiles are k-major ([depthStep][tile]); the tensor-core
  /// kernel's (`tensorCores`) are laid out as the operand is in memory,
  /// padded by kMmaRowPad: rows of K ([tile][depthStep + pad]) where K is
  /// contiguous, else k-major ([depthStep][tile + pad]), `tile` being A's
  /// rows or B's columns.
  /// `asyncStages`: the shared tiles per operand where cp.async fills them
  /// (tensor cores, 16-byte vectors of A and B; 0: never).
  MatmulKernel(linalg::LinalgOp op, gacc::MatmulShape shape, Value initial,
               std::optional<Epilogue> epilogue, int64_t tileRows,
               int64_t tileCols, int64_t depthStep, bool tensorCores,
               int64_t asyncStages = 0)
      : KernelIndexBuilder(op.getLoc(), op), shape(shape), tileRows(tileRows),
        tileCols(tileCols), depthStep(depthStep), tensorCores(tensorCores),
        asyncStages(asyncStages), out(op.getDpsInits()[0]), initial(initial),
        epilogue(epilogue), maps(op.getIndexingMapsArray()),
        ranges(op.getStaticLoopRanges()) {
    batchLoops = ranges.size() - 3;
    rows = ranges[batchLoops];
    cols = ranges[batchLoops + 1];
    depth = ranges[batchLoops + 2];
    // A is [m][k] (k contiguous) or transposed, [k][m]; B is [k][n] (n
    // contiguous) or transposed, [n][k].
    operands[0] = {op.getDpsInputs()[0], maps[0], /*rowLoop=*/0,
                   /*alongK=*/!shape.transposeLhs, tileRows};
    operands[1] = {op.getDpsInputs()[1], maps[1], /*rowLoop=*/1,
                   /*alongK=*/shape.transposeRhs, tileCols};
    for (TileOperand &operand : operands) {
      operand.kMajor = !tensorCores || !operand.alongK;
      operand.pad = tensorCores ? kMmaRowPad : 0;
    }
    lhsType = cast<MemRefType>(operands[0].value.getType()).getElementType();
    accType = cast<MemRefType>(out.getType()).getElementType();
  }

  /// Creates the launch of `threadsX` x `threadsY` threads per block, with
  /// the shared tiles (`stages` of each operand), each thread's staging
  /// registers unless cp.async fills the tiles, and a private accumulator of
  /// `accShape` (zeros), and starts its body.
  gpu::LaunchOp launch(int64_t threadsX, int64_t threadsY,
                       ArrayRef<int64_t> accShape) {
    int64_t batches = 1;
    for (unsigned i = 0; i < batchLoops; ++i)
      batches *= ranges[i];
    auto launch = gpu::LaunchOp::create(
        b, index(llvm::divideCeil(cols, tileCols)),
        index(llvm::divideCeil(rows, tileRows)), index(batches),
        index(threadsX), index(threadsY), index(1));
    threads = threadsX * threadsY;
    for (TileOperand &operand : operands)
      operand.width = vectorWidth(operand);
    // cp.async moves 16 bytes from global memory into the tile as they are
    // (tensor-core tiles are laid out as the operand is in memory).
    asyncCopies = tensorCores && asyncStages >= 2 &&
                  llvm::all_of(operands, [](const TileOperand &operand) {
                    return operand.width * operand.elementBits() == 128;
                  });
    stages = asyncCopies ? asyncStages : kRegisterStages;
    for (TileOperand &operand : operands) {
      Type element = cast<MemRefType>(operand.value.getType()).getElementType();
      SmallVector<int64_t> tileShape =
          operand.kMajor ? SmallVector<int64_t>{stages, depthStep,
                                                operand.tile + operand.pad}
                         : SmallVector<int64_t>{stages, operand.tile,
                                                depthStep + operand.pad};
      operand.shared = addWorkgroupBuffer(launch, tileShape, element);
      if (!asyncCopies)
        operand.staging = addPrivateBuffer(
            launch, {operand.tile * depthStep / threads}, element);
    }
    acc = addPrivateBuffer(launch, accShape, accType);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 block = launch.getBlockIds();
    loopIndex.assign(ranges.size(), Value());
    SmallVector<unsigned> batchDims =
        llvm::to_vector(llvm::seq<unsigned>(0, batchLoops));
    gacc::delinearize(b, block.z, batchDims, ranges, loopIndex);
    auto [row, col] = groupedTile(block.x, block.y);
    rowBase = mul(row, tileRows);
    colBase = mul(col, tileCols);
    // Unrolled: with constant indices, LLVM keeps the private accumulator
    // in registers (SROA) instead of local memory.
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(accType));
    SmallVector<int64_t> strides = computeStrides(accShape);
    for (int64_t i = 0, e = computeProduct(accShape); i < e; ++i) {
      SmallVector<Value> at;
      for (int64_t position : delinearize(i, strides))
        at.push_back(index(position));
      memref::StoreOp::create(b, zero, acc, at);
    }
    return launch;
  }

  /// The tile of C (row, column) of the block (`x`, `y`) of a batch.
  /// Blocks start in launch order, x fastest: consecutive blocks take
  /// kGroupRows row tiles down one column, then the next column (Triton's
  /// grouped order), so that the blocks resident at once share A's row
  /// tiles and B's column tiles in L2. In row-major order they would
  /// stream all of B once per row tile: GPT-2's logits read the 77 MB
  /// embedding (more than the H100's 50 MB of L2) from memory 64 times.
  std::pair<Value, Value> groupedTile(Value x, Value y) {
    int64_t rowTiles = llvm::divideCeil(rows, tileRows);
    int64_t colTiles = llvm::divideCeil(cols, tileCols);
    int64_t perGroup = kGroupRows * colTiles;
    Value linear = add(mul(y, colTiles), x);
    Value firstRow = mul(div(linear, perGroup), kGroupRows);
    // The last group holds the rows left.
    Value groupRows = arith::MinUIOp::create(
        b, index(kGroupRows),
        arith::SubIOp::create(b, index(rowTiles), firstRow));
    Value inGroup = rem(linear, perGroup);
    return {add(firstRow, arith::RemUIOp::create(b, inGroup, groupRows)),
            arith::DivUIOp::create(b, inGroup, groupRows)};
  }

  /// The loop over K, software-pipelined: while the block multiplies the
  /// tiles of one stage (`multiply(stage)`), each thread (`linear` of
  /// `threads`) has the next slice of A and B on its way from global
  /// memory into registers, stored into the other stage's tiles after the
  /// multiplication; one barrier per slice. The loads' latency hides
  /// behind the tensor-core or FMA work instead of stalling it.
  void pipelineOverK(Value linear, function_ref<void(Value stage)> multiply) {
    if (asyncCopies)
      return pipelineAsync(linear, multiply);
    Value first = index(0);
    for (TileOperand &operand : operands)
      fetch(operand, first, linear);
    for (TileOperand &operand : operands)
      deposit(operand, first, linear);
    gpu::BarrierOp::create(b);
    loop(0, depth, depthStep, [&](Value k0) {
      Value stage = rem(div(k0, depthStep), stages);
      Value next = add(k0, depthStep);
      Value more = less(next, depth);
      ifThen(more, [&] {
        for (TileOperand &operand : operands)
          fetch(operand, next, linear);
      });
      multiply(stage);
      ifThen(more, [&] {
        Value nextStage = rem(add(stage, 1), stages);
        for (TileOperand &operand : operands)
          deposit(operand, nextStage, linear);
      });
      gpu::BarrierOp::create(b);
    });
  }

  /// The loop over K with cp.async (sm_80+): A's and B's slices go from
  /// global into shared memory without passing through registers, `stages`
  /// - 1 slices ahead of the one the block multiplies, a commit group per
  /// slice. After multiplying a slice, each thread waits until its copies of
  /// the next one have landed (at most `stages` - 2 groups in flight); the
  /// barrier then shows every thread's copies to the block and frees the
  /// stage just multiplied for the copies the next trip starts. One barrier
  /// per slice; the copies' latency hides behind `stages` - 1 slices of
  /// tensor-core work.
  void pipelineAsync(Value linear, function_ref<void(Value stage)> multiply) {
    Value group;
    for (int64_t s = 0; s + 1 < stages; ++s)
      group = copySlice(index(s * depthStep), index(s), linear);
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(stages - 2));
    gpu::BarrierOp::create(b);
    loop(0, depth, depthStep, [&](Value k0) {
      Value slice = div(k0, depthStep);
      Value group = copySlice(add(k0, (stages - 1) * depthStep),
                              rem(add(slice, stages - 1), stages), linear);
      multiply(rem(slice, stages));
      nvgpu::DeviceAsyncWaitOp::create(b, group,
                                       b.getI32IntegerAttr(stages - 2));
      gpu::BarrierOp::create(b);
    });
    // The copies past K's end (zeros) land before the kernel goes on, so
    // that nothing after the loop races with them.
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(0));
  }

  /// Starts this thread's cp.async copies of A's and B's slices at `k0` into
  /// the tiles of `stage`, 16 bytes each, as one commit group (returned).
  /// Vectors past the matrix edges (all of them past K's end, where the
  /// pipeline runs ahead of the last slice) are zeros: cp.async reads none
  /// of their bytes, from an address clamped into the operand.
  Value copySlice(Value k0, Value stage, Value linear) {
    SmallVector<Value> copies;
    for (TileOperand &operand : operands) {
      Value base = operand.rowLoop == 0 ? rowBase : colBase;
      int64_t extent = operand.rowLoop == 0 ? rows : cols;
      for (int64_t i = 0, e = vectorsPerThread(operand); i < e; ++i) {
        auto [kk, rc] = place(operand, linear, i);
        Value r = add(base, rc), k = add(k0, kk);
        Value rowInside = less(r, extent), kInside = less(k, depth);
        Value zero = index(0);
        r = arith::SelectOp::create(b, rowInside, r, zero);
        k = arith::SelectOp::create(b, kInside, k, zero);
        Value elements = arith::SelectOp::create(
            b, arith::AndIOp::create(b, rowInside, kInside),
            index(operand.width), zero);
        copies.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), operand.shared,
            tilePosition(operand, stage, kk, rc), operand.value,
            indices(operand.map, r, r, k), b.getIndexAttr(operand.width),
            elements,
            /*bypassL1=*/b.getUnitAttr()));
      }
    }
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), copies);
  }

  /// C[m][n] += `value` (C[m][n] = initial + `value` when C's fill was
  /// taken in), where (m, n) is inside C; with an epilogue, its result at
  /// that element instead (and C as well if C is read later).
  void accumulate(Value m, Value n, Value value) {
    Value inside = arith::AndIOp::create(b, less(m, rows), less(n, cols));
    ifThen(inside, [&] {
      SmallVector<Value> at = indices(maps[2], m, n, m);
      Value old = initial ? initial : memref::LoadOp::create(b, out, at);
      Value total = arith::AddFOp::create(b, old, value);
      if (!epilogue || epilogue->keepC)
        memref::StoreOp::create(b, total, out, at);
      if (epilogue)
        storeEpilogue(at, total);
    });
  }

  /// The epilogue's body at C's element `at` (the epilogue's loop indices,
  /// C being read through the identity), C's value being `c`.
  void storeEpilogue(ArrayRef<Value> at, Value c) {
    linalg::GenericOp op = epilogue->op;
    Block &body = op.getRegion().front();
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body.getArgument(operand.getOperandNumber());
      if (operand.getOperandNumber() == epilogue->cOperand)
        mapping.map(arg, c);
      else if (!arg.use_empty())
        mapping.map(arg, memref::LoadOp::create(
                             b, operand.get(),
                             gacc::applyMap(
                                 b, op.getMatchingIndexingMap(&operand), at)));
    }
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        mapping.map(index.getResult(), at[index.getDim()]);
      else
        b.clone(inner, mapping);
    }
    memref::StoreOp::create(
        b, mapping.lookupOrDefault(body.getTerminator()->getOperand(0)),
        op.getDpsInits()[0], at);
  }

  /// One of A and B on its way to the shared tiles.
  struct TileOperand {
    Value value;
    AffineMap map;
    /// The loop (0: m, 1: n) that indexes the tile's rows.
    unsigned rowLoop;
    /// Whether K is contiguous in memory (A [m][k], B transposed [n][k]).
    bool alongK;
    /// How many rows of the operand the tile holds: C's rows for A, C's
    /// columns for B.
    int64_t tile;
    /// Elements moved at a time (vectorWidth).
    int64_t width = 1;
    /// The shared tiles' layout: k-major ([K][rows]) or rows of K, and the
    /// padding of their rows.
    bool kMajor;
    int64_t pad;
    /// The tiles ([stages][...]) and this thread's staging registers (none
    /// with cp.async).
    Value shared, staging;

    int64_t elementBits() const {
      return cast<MemRefType>(value.getType()).getElementTypeBitWidth();
    }
  };

  gacc::MatmulShape shape;
  int64_t tileRows, tileCols;
  int64_t depthStep;
  bool tensorCores;
  int64_t asyncStages;
  /// Whether cp.async fills the shared tiles, and how many per operand.
  bool asyncCopies = false;
  int64_t stages = kRegisterStages;
  Value out;
  /// C's value before the matmul, when a fill set all of it; else null.
  Value initial;
  std::optional<Epilogue> epilogue;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranges;
  unsigned batchLoops;
  int64_t rows, cols, depth;
  Type lhsType, accType;
  /// A and B.
  std::array<TileOperand, 2> operands;
  int64_t threads = 0;
  Value acc, rowBase, colBase;

private:
  /// The element of `operand` (indexed by `map`) at loop indices (m, n, k).
  SmallVector<Value> indices(AffineMap map, Value m, Value n, Value k) {
    loopIndex[batchLoops] = m;
    loopIndex[batchLoops + 1] = n;
    loopIndex[batchLoops + 2] = k;
    return gacc::applyMap(b, map, loopIndex);
  }

  /// How many elements of `operand` each thread moves at a time along its
  /// innermost dimension: 16 bytes where that dimension is the operand's
  /// contiguous loop with unit stride, every vector starts 16 bytes aligned
  /// (the offset, the other strides and the loop's range multiples of it;
  /// arena slots are 64-byte aligned), and the tile's vectors are a whole
  /// number per thread; else 1.
  int64_t vectorWidth(const TileOperand &operand) {
    unsigned loop = operand.alongK ? 2 : operand.rowLoop;
    int64_t extent = operand.alongK         ? depth
                     : operand.rowLoop == 0 ? rows
                                            : cols;
    AffineMap map = operand.map;
    auto type = cast<MemRefType>(operand.value.getType());
    int64_t bits = type.getElementTypeBitWidth();
    if (bits < 8 || bits % 8 || bits > 128)
      return 1;
    int64_t width = 16 / (bits / 8);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
        strides.back() != 1 || ShapedType::isDynamic(offset) ||
        offset % width || extent % width || operand.tile % width ||
        depthStep % width || (operand.tile * depthStep / width) % threads ||
        map.getResults().back() != b.getAffineDimExpr(batchLoops + loop))
      return 1;
    for (AffineExpr result : map.getResults().drop_back())
      if (result.isFunctionOfDim(batchLoops + loop))
        return 1;
    for (int64_t stride : ArrayRef(strides).drop_back())
      if (ShapedType::isDynamic(stride) || stride % width)
        return 1;
    return width;
  }

  /// How many vectors of `operand`'s tile x depthStep slice each thread
  /// moves.
  int64_t vectorsPerThread(const TileOperand &operand) const {
    return operand.tile * depthStep / operand.width / threads;
  }

  /// The indices in `operand`'s shared tiles of the element at (position
  /// along K `kk`, row `rc`) of `stage`.
  SmallVector<Value> tilePosition(const TileOperand &operand, Value stage,
                                  Value kk, Value rc) const {
    return operand.kMajor ? SmallVector<Value>{stage, kk, rc}
                          : SmallVector<Value>{stage, rc, kk};
  }

  /// Where the `i`th vector of this thread (`linear`) lies in `operand`'s
  /// tile x depthStep piece: (position along K, row), consecutive threads
  /// on consecutive addresses of memory.
  std::pair<Value, Value> place(const TileOperand &operand, Value linear,
                                int64_t i) {
    int64_t perLine =
        (operand.alongK ? depthStep : operand.tile) / operand.width;
    Value e = add(linear, i * threads);
    Value along = mul(rem(e, perLine), operand.width), across = div(e, perLine);
    return operand.alongK ? std::pair{along, across} : std::pair{across, along};
  }

  /// Loads this thread's share of `operand`'s tile x depthStep piece at
  /// (row base, `k0`) into its staging registers, a vector at a time where
  /// vectorWidth allows; elements past the matrix edges are zeros.
  /// Unrolled, so that the registers are registers (constant indices).
  void fetch(TileOperand &operand, Value k0, Value linear) {
    Value base = operand.rowLoop == 0 ? rowBase : colBase;
    int64_t extent = operand.rowLoop == 0 ? rows : cols;
    int64_t width = operand.width;
    Type element = cast<MemRefType>(operand.value.getType()).getElementType();
    Type type = width == 1 ? element : VectorType::get({width}, element);
    for (int64_t i = 0, e = vectorsPerThread(operand); i < e; ++i) {
      auto [kk, rc] = place(operand, linear, i);
      Value r = add(base, rc), k = add(k0, kk);
      Value inBounds =
          arith::AndIOp::create(b, less(r, extent), less(k, depth));
      SmallVector<Value> at = indices(operand.map, r, r, k);
      auto branch = scf::IfOp::create(
          b, inBounds,
          [&](OpBuilder &nested, Location loc) {
            Value v =
                width == 1
                    ? memref::LoadOp::create(nested, loc, operand.value, at)
                          .getResult()
                    : vector::LoadOp::create(
                          nested, loc, type, operand.value, at,
                          /*nontemporal=*/false, llvm::MaybeAlign(16))
                          .getResult();
            scf::YieldOp::create(nested, loc, v);
          },
          [&](OpBuilder &nested, Location loc) {
            Value zero = arith::ConstantOp::create(nested, loc,
                                                   nested.getZeroAttr(type));
            scf::YieldOp::create(nested, loc, zero);
          });
      Value slot = index(i * width);
      if (width == 1)
        memref::StoreOp::create(b, branch.getResult(0), operand.staging, slot);
      else
        vector::StoreOp::create(b, branch.getResult(0), operand.staging, slot);
    }
  }

  /// Stores this thread's staging registers into `operand`'s tile of
  /// `stage`: as a vector where the tile is contiguous the same way as
  /// memory, else element by element.
  void deposit(TileOperand &operand, Value stage, Value linear) {
    int64_t width = operand.width;
    Type element = cast<MemRefType>(operand.value.getType()).getElementType();
    auto position = [&](Value kk, Value rc) {
      return tilePosition(operand, stage, kk, rc);
    };
    for (int64_t i = 0, e = vectorsPerThread(operand); i < e; ++i) {
      auto [kk, rc] = place(operand, linear, i);
      Value slot = index(i * width);
      if (width == 1) {
        memref::StoreOp::create(
            b, memref::LoadOp::create(b, operand.staging, slot), operand.shared,
            position(kk, rc));
        continue;
      }
      Value loaded = vector::LoadOp::create(
          b, VectorType::get({width}, element), operand.staging, slot);
      // The tile is contiguous along K when it holds rows of K.
      if (operand.alongK != operand.kMajor) {
        vector::StoreOp::create(b, loaded, operand.shared, position(kk, rc),
                                /*nontemporal=*/false, llvm::MaybeAlign(16));
        continue;
      }
      for (int64_t j = 0; j < width; ++j)
        memref::StoreOp::create(b, vector::ExtractOp::create(b, loaded, j),
                                operand.shared,
                                operand.alongK ? position(add(kk, j), rc)
                                               : position(kk, add(rc, j)));
    }
  }

  SmallVector<Value> loopIndex;
};

/// The SGEMM kernel for `op` (loops (batch..., m, n, k)), before it.
void emitTiledMatmul(linalg::LinalgOp op, gacc::MatmulShape shape,
                     Value initial, std::optional<Epilogue> epilogue) {
  MatmulKernel kernel(op, shape, initial, epilogue, kTile, kTile, kSgemmDepth,
                      /*tensorCores=*/false);
  ImplicitLocOpBuilder &b = kernel.b;
  Type accType = kernel.accType;
  gpu::LaunchOp launch =
      kernel.launch(kThreads, kThreads, {kPerThread, kPerThread});
  gpu::KernelDim3 thread = launch.getThreadIds();
  Value linear = kernel.add(kernel.mul(thread.y, kThreads), thread.x);
  Value acc = kernel.acc;
  auto index = [&](int64_t v) { return kernel.index(v); };
  auto widen = [&](Value v) -> Value {
    return v.getType() == accType ? v : arith::ExtFOp::create(b, accType, v);
  };
  // The 4x4 loops are unrolled here, as the accumulator's initialization
  // is, so that it stays in registers.
  Value lhsTile = kernel.operands[0].shared,
        rhsTile = kernel.operands[1].shared;
  kernel.pipelineOverK(linear, [&](Value stage) {
    kernel.loop(0, kSgemmDepth, 1, [&](Value kk) {
      SmallVector<Value> a, bv;
      for (int64_t i = 0; i < kPerThread; ++i) {
        a.push_back(widen(memref::LoadOp::create(
            b, lhsTile,
            ValueRange{stage, kk,
                       kernel.add(kernel.mul(thread.y, kPerThread), i)})));
        bv.push_back(widen(memref::LoadOp::create(
            b, rhsTile,
            ValueRange{stage, kk,
                       kernel.add(kernel.mul(thread.x, kPerThread), i)})));
      }
      for (int64_t i = 0; i < kPerThread; ++i)
        for (int64_t j = 0; j < kPerThread; ++j) {
          ValueRange at{index(i), index(j)};
          Value sum = memref::LoadOp::create(b, acc, at);
          sum = arith::AddFOp::create(b, sum,
                                      arith::MulFOp::create(b, a[i], bv[j]));
          memref::StoreOp::create(b, sum, acc, at);
        }
    });
  });
  // C += this thread's piece.
  for (int64_t i = 0; i < kPerThread; ++i)
    for (int64_t j = 0; j < kPerThread; ++j)
      kernel.accumulate(
          kernel.add(
              kernel.add(kernel.rowBase, kernel.mul(thread.y, kPerThread)), i),
          kernel.add(
              kernel.add(kernel.colBase, kernel.mul(thread.x, kPerThread)), j),
          memref::LoadOp::create(b, acc, ValueRange{index(i), index(j)}));
  gpu::TerminatorOp::create(b);
}

/// The tensor-core kernel for `op`, before it (fragment layouts: see
/// MmaFragments.h).
void emitTensorCoreMatmul(linalg::LinalgOp op, gacc::MatmulShape shape,
                          Value initial, std::optional<Epilogue> epilogue,
                          int64_t asyncStages, int64_t warps, int64_t depthStep,
                          bool wideTiles) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = ranges[ranges.size() - 3], cols = ranges[ranges.size() - 2];
  bool large = rows >= kLargeTile && cols >= kLargeTile;
  int64_t tileRows = large ? kLargeTile : kTile, tileCols = tileRows;
  // 128x256 tiles: 8 warps of 64x64, a third more products per byte
  // loaded than 128x128.
  if (wideTiles && large && cols >= 2 * kLargeTile) {
    tileCols = 2 * kLargeTile;
    warps = 8;
  }
  MatmulKernel kernel(op, shape, initial, epilogue, tileRows, tileCols,
                      depthStep,
                      /*tensorCores=*/true, asyncStages);
  ImplicitLocOpBuilder &b = kernel.b;
  // 2 x (warps / 2) warps, each a warpRows x warpCols piece of the tile.
  int64_t warpColumns = warps / 2;
  int64_t warpRows = tileRows / 2, warpCols = tileCols / warpColumns;
  int64_t mTiles = warpRows / kMmaM, nTiles = warpCols / kMmaN;
  Type elementType = kernel.lhsType;
  gpu::LaunchOp launch = kernel.launch(32, warps, {mTiles, nTiles, 4});
  // threadIdx.x is the lane, threadIdx.y the warp.
  gpu::KernelDim3 thread = launch.getThreadIds();
  Value lane = thread.x, warp = thread.y;
  Value linear = kernel.add(kernel.mul(warp, 32), lane);
  Value g = kernel.div(lane, 4), t = kernel.rem(lane, 4);
  Value warpRow = kernel.mul(kernel.div(warp, warpColumns), warpRows);
  Value warpCol = kernel.mul(kernel.rem(warp, warpColumns), warpCols);
  Value acc = kernel.acc;
  // Four 8x8 matrices of a shared tile as four mma registers, one
  // ldmatrix: lane l gives the address of row l % 8 of matrix l / 8, whose
  // `rowOffset` and `kOffset` `offsets` gives; a rows-of-K tile is read as
  // it is, a k-major one transposed (ldmatrix.trans), so that each lane
  // holds the two consecutive k of its fragment either way. Each fragment
  // is loaded once per 16 of K and used by a row or column of mma: A's of
  // each m16 tile, then B's of each pair of n8 tiles.
  Value q = kernel.div(lane, 8), r = kernel.rem(lane, 8);
  gacc::MmaFragments fragments(kernel, launch, mTiles + nTiles / 2,
                               elementType);
  auto loadFragments = [&](const MatmulKernel::TileOperand &operand,
                           Value stage, int64_t k16, Value rowBase,
                           std::pair<Value, Value> offsets, int64_t slot) {
    auto [rowOffset, kOffset] = offsets;
    Value row = kernel.add(rowBase, rowOffset);
    Value k = kernel.add(kOffset, k16);
    SmallVector<Value> at =
        operand.kMajor ? SmallVector<Value>{stage, kernel.add(k, r), row}
                       : SmallVector<Value>{stage, kernel.add(row, r), k};
    fragments.load(operand.shared, at, /*transpose=*/operand.kMajor, slot);
  };
  std::pair aOffsets{kernel.mul(kernel.rem(q, 2), 8),
                     kernel.mul(kernel.div(q, 2), 8)};
  std::pair bOffsets{kernel.mul(kernel.div(q, 2), 8),
                     kernel.mul(kernel.rem(q, 2), 8)};
  const MatmulKernel::TileOperand &lhs = kernel.operands[0],
                                  &rhs = kernel.operands[1];
  kernel.pipelineOverK(linear, [&](Value stage) {
    for (int64_t k16 = 0; k16 < depthStep; k16 += kMmaK) {
      for (int64_t mi = 0; mi < mTiles; ++mi)
        loadFragments(lhs, stage, k16, kernel.add(warpRow, mi * kMmaM),
                      aOffsets, /*slot=*/mi);
      for (int64_t pair = 0; pair < nTiles / 2; ++pair)
        loadFragments(rhs, stage, k16, kernel.add(warpCol, pair * 2 * kMmaN),
                      bOffsets,
                      /*slot=*/mTiles + pair);
      for (int64_t mi = 0; mi < mTiles; ++mi)
        for (int64_t ni = 0; ni < nTiles; ++ni) {
          // (A's registers first: arguments have no evaluation order.)
          SmallVector<Value> a = fragments.registers(mi);
          fragments.mma(a, fragments.pair(mTiles + ni / 2, ni % 2), acc,
                        {mi, ni});
        }
    }
  });
  // C += this warp's piece.
  Value twoT = kernel.mul(t, 2);
  for (int64_t mi = 0; mi < mTiles; ++mi)
    for (int64_t ni = 0; ni < nTiles; ++ni)
      for (int64_t i = 0; i < 4; ++i) {
        Value m = kernel.add(kernel.add(kernel.rowBase, warpRow),
                             kernel.add(g, mi * kMmaM + 8 * (i / 2)));
        Value n = kernel.add(kernel.add(kernel.colBase, warpCol),
                             kernel.add(twoT, ni * kMmaN + i % 2));
        kernel.accumulate(m, n,
                          memref::LoadOp::create(b, acc,
                                                 ValueRange{kernel.index(mi),
                                                            kernel.index(ni),
                                                            kernel.index(i)}));
      }
  gpu::TerminatorOp::create(b);
}

/// The embedding gradient `op` (`gradient`: C[v, d] += one_hot(ids)[p, v] ·
/// dy[p, d]) as additions of dy's rows into C's, before it: a thread per
/// column of C and a range of its rows, adding, in position order, the row
/// of dy of each id in its range (the CPU's order; no atomics, so the sums
/// do not depend on scheduling). Every block reads all the ids (broadcast,
/// cached), which is cheap next to the product over the one-hot (at GPT-2's
/// vocabulary and 8192 positions, 316 G multiply-adds for 6.3 M
/// additions). False, and nothing changes, where dy does not widen to C.
bool emitRowAdditions(linalg::LinalgOp op, gacc::EmbeddingGradient gradient) {
  Value dy = op.getDpsInputs()[1], out = op.getDpsInits()[0];
  auto dyType = cast<FloatType>(cast<MemRefType>(dy.getType()).getElementType());
  auto outType =
      cast<FloatType>(cast<MemRefType>(out.getType()).getElementType());
  if (dyType != outType && dyType.getWidth() >= outType.getWidth())
    return false;
  gacc::KernelIndexBuilder k(op.getLoc(), op);
  ImplicitLocOpBuilder &b = k.b;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = ranges[0], cols = ranges[1], positions = ranges[2];
  // The ids as one row of positions (contiguous, see getEmbeddingGradient).
  Value ids = gradient.ids;
  auto idsType = cast<MemRefType>(ids.getType());
  if (idsType.getRank() != 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, idsType.getRank()));
    ids = memref::CollapseShapeOp::create(b, ids, ArrayRef{all});
  }
  // About 1024 blocks (an H100 holds 2112 of 128 threads at once): each
  // reads every id, so more blocks read more ids for fewer rows each.
  constexpr int64_t kColumnsPerBlock = 128, kBlocks = 1024;
  int64_t columnBlocks = llvm::divideCeil(cols, kColumnsPerBlock);
  int64_t rowsPerBlock = llvm::divideCeil(
      rows, std::min<int64_t>(rows, llvm::divideCeil(kBlocks, columnBlocks)));
  auto launch = gpu::LaunchOp::create(
      b, k.index(columnBlocks), k.index(llvm::divideCeil(rows, rowsPerBlock)),
      k.index(1), k.index(kColumnsPerBlock), k.index(1), k.index(1));
  b.setInsertionPointToStart(&launch.getBody().front());
  Value col = k.add(k.mul(launch.getBlockIds().x, kColumnsPerBlock),
                    launch.getThreadIds().x);
  Value first = k.mul(launch.getBlockIds().y, rowsPerBlock);
  Value end = arith::MinUIOp::create(b, k.add(first, rowsPerBlock),
                                     k.index(rows));
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto inside = scf::IfOp::create(b, k.less(col, cols), false);
  b.setInsertionPoint(inside.thenBlock()->getTerminator());
  auto positionLoop = scf::ForOp::create(b, k.index(0), k.index(positions),
                                         k.index(1));
  b.setInsertionPoint(positionLoop.getBody()->getTerminator());
  Value p = positionLoop.getInductionVar();
  Value id = arith::IndexCastOp::create(
      b, b.getIndexType(), memref::LoadOp::create(b, ids, p));
  // Ids outside [0, rows) add nothing, as their one-hot rows are zero.
  Value ours = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::sge, id, first),
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, id, end));
  auto inRange = scf::IfOp::create(b, ours, false);
  b.setInsertionPoint(inRange.thenBlock()->getTerminator());
  SmallVector<Value> loopIndex = {id, col, p};
  Value value = memref::LoadOp::create(
      b, dy, gacc::applyMap(b, maps[1], loopIndex));
  if (dyType != outType)
    value = arith::ExtFOp::create(b, outType, value);
  SmallVector<Value> at = gacc::applyMap(b, maps[2], loopIndex);
  Value sum =
      arith::AddFOp::create(b, memref::LoadOp::create(b, out, at), value);
  memref::StoreOp::create(b, sum, out, at);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b);
  op.erase();
  if (gradient.oneHotOnlyUse)
    gradient.oneHot.erase();
  return true;
}

/// The fill that sets all of C just before `op` (only ops without memory
/// effects between them), which the kernel can take in: C = value + A·B,
/// without writing C twice and reading it back. C is indexed by every
/// parallel loop (getMatmulShape), so each element is written once.
linalg::FillOp fillBefore(linalg::LinalgOp op) {
  Operation *prev = op->getPrevNode();
  while (prev && isMemoryEffectFree(prev))
    prev = prev->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  Value out = op.getDpsInits()[0];
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInits()[0] != out ||
      fill.value().getType() != cast<MemRefType>(out.getType()).getElementType())
    return nullptr;
  return fill;
}

struct TileMatmulsPass : public gacc::impl::TileMatmulsBase<TileMatmulsPass> {
  using TileMatmulsBase::TileMatmulsBase;

  void runOnOperation() override {
    if ((warps != 4 && warps != 8) || (mmaDepth != 32 && mmaDepth != 64)) {
      getOperation()->emitError("gacc-cuda-tile-matmuls: warps must be 4 or "
                                "8 and mma-depth 32 or 64");
      return signalPassFailure();
    }
    // The stages of the largest tiles (padded 128 x mma-depth 16-bit tiles
    // of A and B, B's 256 with wide-tiles) must fit the 163 KB of shared
    // memory an sm_80 block may have.
    constexpr int64_t kMaxSharedBytes = 163 * 1024;
    int64_t stageBytes =
        (wideTiles ? 3 : 2) * kLargeTile * (mmaDepth + kMmaRowPad) * 2;
    int64_t maxStages = kMaxSharedBytes / stageBytes;
    if (asyncStages == 1 || asyncStages < 0 || asyncStages > maxStages) {
      getOperation()->emitError("gacc-cuda-tile-matmuls: async-stages must "
                                "be 0 (no cp.async) or 2 to ")
          << maxStages << " (" << stageBytes
          << " bytes of shared memory each, 163 KB at most), not "
          << static_cast<int64_t>(asyncStages);
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, gacc::MatmulShape>> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<gacc::MatmulShape> shape = gacc::getMatmulShape(op))
        if (isTileable(op))
          matmuls.push_back({op, *shape});
    });
    for (auto [op, shape] : matmuls) {
      // Its zero fill stays: rows no id hits are zeros.
      if (std::optional<gacc::EmbeddingGradient> gradient =
              gacc::getEmbeddingGradient(op))
        if (emitRowAdditions(op, *gradient))
          continue;
      linalg::FillOp fill = fillBefore(op);
      Value initial = fill ? fill.value() : Value();
      std::optional<Epilogue> epilogue = epilogueAfter(op);
      // The kernel goes where the matmul is: what the epilogue reads that
      // is made between them (views, constants; no memory effects) moves
      // up.
      if (epilogue)
        while (op->getNextNode() != epilogue->op)
          op->getNextNode()->moveBefore(op);
      if (fitsTensorCores(op))
        emitTensorCoreMatmul(op, shape, initial, epilogue, asyncStages, warps,
                             mmaDepth, wideTiles);
      else
        emitTiledMatmul(op, shape, initial, epilogue);
      op.erase();
      if (fill)
        fill.erase();
      if (epilogue) {
        epilogue->op.erase();
        ++numEpilogues;
        if (epilogue->keepC)
          ++numCKept;
      }
    }
  }
};
} // namespace
