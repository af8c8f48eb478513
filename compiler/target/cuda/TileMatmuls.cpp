//===- TileMatmuls.cpp - shared-memory tiled matmul kernels -----------------===//
//
// The classic tiled SGEMM: a block of 16x16 threads computes a 64x64 tile
// of C, each thread a 4x4 piece of it kept in private memory (registers
// once LLVM unrolls the constant loops); A and B pass through workgroup
// memory 16 columns of K at a time, each element loaded once per block
// instead of once per thread.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/cpu/Passes.h"
#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::gacc {
#define GEN_PASS_DEF_TILEMATMULS
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;

namespace {
constexpr int64_t kThreads = 16;             // per block, in x and in y
constexpr int64_t kPerThread = 4;            // C elements per thread, each way
constexpr int64_t kTile = kThreads * kPerThread; // C tile: kTile x kTile
constexpr int64_t kDepth = 16;               // K elements per shared tile

/// Whether `op` (a matched matmul) can become a tiled kernel: static shapes,
/// operands indexed by the batch loops directly.
bool isTileable(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return false;
  }
  for (AffineMap map : op.getIndexingMapsArray())
    if (!llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); }))
      return false;
  return true;
}

/// Emits the kernel for `op` (loops (batch..., m, n, k)) before it.
void emitTiledMatmul(linalg::GenericOp op, gacc::MatmulShape shape) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned batchLoops = ranges.size() - 3;
  int64_t rows = ranges[batchLoops], cols = ranges[batchLoops + 1],
          depth = ranges[batchLoops + 2];
  int64_t batches = 1;
  for (unsigned i = 0; i < batchLoops; ++i)
    batches *= ranges[i];
  Type lhsType = cast<MemRefType>(lhs.getType()).getElementType();
  Type rhsType = cast<MemRefType>(rhs.getType()).getElementType();
  Type accType = cast<MemRefType>(out.getType()).getElementType();

  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto launch = gpu::LaunchOp::create(
      b, index(llvm::divideCeil(cols, kTile)),
      index(llvm::divideCeil(rows, kTile)), index(batches), index(kThreads),
      index(kThreads), index(1));
  MLIRContext *context = b.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto privateSpace = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getPrivateAddressSpace());
  // Shared tiles are k-major: [kDepth][kTile].
  Value lhsTile = launch.addWorkgroupAttribution(
      MemRefType::get({kDepth, kTile}, lhsType, nullptr, workgroup),
      b.getLoc());
  Value rhsTile = launch.addWorkgroupAttribution(
      MemRefType::get({kDepth, kTile}, rhsType, nullptr, workgroup),
      b.getLoc());
  Value acc = launch.addPrivateAttribution(
      MemRefType::get({kPerThread, kPerThread}, accType, nullptr,
                      privateSpace),
      b.getLoc());

  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 block = launch.getBlockIds();
  gpu::KernelDim3 thread = launch.getThreadIds();
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, x, y);
  };
  auto mul = [&](Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, x, index(y));
  };
  auto div = [&](Value x, int64_t y) -> Value {
    return arith::DivUIOp::create(b, x, index(y));
  };
  auto rem = [&](Value x, int64_t y) -> Value {
    return arith::RemUIOp::create(b, x, index(y));
  };
  auto less = [&](Value x, int64_t y) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, index(y));
  };
  auto loop = [&](int64_t lower, int64_t upper, int64_t step,
                  function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, index(lower), index(upper), index(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    body(forOp.getInductionVar());
  };
  auto widen = [&](Value v) -> Value {
    return v.getType() == accType ? v : arith::ExtFOp::create(b, accType, v);
  };

  // The batch indices, from blockIdx.z.
  SmallVector<Value> loopIndex(ranges.size());
  SmallVector<unsigned> batchDims =
      llvm::to_vector(llvm::seq<unsigned>(0, batchLoops));
  gacc::delinearize(b, block.z, batchDims, ranges, loopIndex);
  // The element of `operand` (indexed by `map`) at loop indices (m, n, k).
  auto indices = [&](AffineMap map, Value m, Value n, Value k) {
    loopIndex[batchLoops] = m;
    loopIndex[batchLoops + 1] = n;
    loopIndex[batchLoops + 2] = k;
    return gacc::applyMap(b, map, loopIndex);
  };
  Value rowBase = mul(block.y, kTile), colBase = mul(block.x, kTile);
  Value linear = add(mul(thread.y, kThreads), thread.x);
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(accType));

  // The 4x4 loops are unrolled here: with constant indices, LLVM keeps
  // the private accumulator in registers (SROA) instead of local memory.
  for (int64_t i = 0; i < kPerThread; ++i)
    for (int64_t j = 0; j < kPerThread; ++j)
      memref::StoreOp::create(b, zero, acc, ValueRange{index(i), index(j)});
  loop(0, depth, kDepth, [&](Value k0) {
    // 256 threads load the kTile x kDepth pieces of A and B, 4 elements
    // each, consecutive threads reading consecutive addresses; elements
    // past the matrix edges are zeros.
    loop(0, kTile * kDepth, kThreads * kThreads, [&](Value start) {
      Value e = add(start, linear);
      auto load = [&](Value source, Type type, AffineMap map, Value m, Value n,
                      Value k, Value inBounds, Value tile, Value tileRow,
                      Value tileCol) {
        auto branch = scf::IfOp::create(
            b, inBounds,
            [&](OpBuilder &nested, Location loc) {
              Value v = memref::LoadOp::create(nested, loc, source,
                                               indices(map, m, n, k));
              scf::YieldOp::create(nested, loc, v);
            },
            [&](OpBuilder &nested, Location loc) {
              Value z = arith::ConstantOp::create(nested, loc,
                                                  nested.getZeroAttr(type));
              scf::YieldOp::create(nested, loc, z);
            });
        memref::StoreOp::create(b, branch.getResult(0), tile,
                                ValueRange{tileRow, tileCol});
      };
      // A is [m][k] (k contiguous) or transposed, [k][m].
      Value mm = shape.transposeLhs ? rem(e, kTile) : div(e, kDepth);
      Value kk = shape.transposeLhs ? div(e, kTile) : rem(e, kDepth);
      Value m = add(rowBase, mm), k = add(k0, kk);
      load(lhs, lhsType, maps[0], m, m, k,
           arith::AndIOp::create(b, less(m, rows), less(k, depth)), lhsTile,
           kk, mm);
      // B is [k][n] (n contiguous) or transposed, [n][k].
      Value nn = shape.transposeRhs ? div(e, kDepth) : rem(e, kTile);
      kk = shape.transposeRhs ? rem(e, kDepth) : div(e, kTile);
      Value n = add(colBase, nn);
      k = add(k0, kk);
      load(rhs, rhsType, maps[1], n, n, k,
           arith::AndIOp::create(b, less(n, cols), less(k, depth)), rhsTile,
           kk, nn);
    });
    gpu::BarrierOp::create(b);
    loop(0, kDepth, 1, [&](Value kk) {
      SmallVector<Value> a, bv;
      for (int64_t i = 0; i < kPerThread; ++i) {
        a.push_back(widen(memref::LoadOp::create(
            b, lhsTile,
            ValueRange{kk, add(mul(thread.y, kPerThread), index(i))})));
        bv.push_back(widen(memref::LoadOp::create(
            b, rhsTile,
            ValueRange{kk, add(mul(thread.x, kPerThread), index(i))})));
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
    gpu::BarrierOp::create(b);
  });
  // C += this thread's piece, inside the matrix.
  for (int64_t i = 0; i < kPerThread; ++i)
    for (int64_t j = 0; j < kPerThread; ++j) {
      Value m = add(add(rowBase, mul(thread.y, kPerThread)), index(i));
      Value n = add(add(colBase, mul(thread.x, kPerThread)), index(j));
      Value inside = arith::AndIOp::create(b, less(m, rows), less(n, cols));
      auto branch = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      SmallVector<Value> at = indices(maps[2], m, n, m);
      Value sum = arith::AddFOp::create(
          b, memref::LoadOp::create(b, out, at),
          memref::LoadOp::create(b, acc, ValueRange{index(i), index(j)}));
      memref::StoreOp::create(b, sum, out, at);
    }
  gpu::TerminatorOp::create(b);
}

struct TileMatmulsPass
    : public gacc::impl::TileMatmulsBase<TileMatmulsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, gacc::MatmulShape>> matmuls;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<gacc::MatmulShape> shape = gacc::matchMatmul(op))
        if (isTileable(op))
          matmuls.push_back({op, *shape});
    });
    for (auto [op, shape] : matmuls) {
      emitTiledMatmul(op, shape);
      op.erase();
    }
  }
};
} // namespace
