//===- FlashAttention.cpp - FlashAttention-2's kernels --------------------===//
//
// gacc.attention and gacc.attention_grad on buffers as tensor-core kernels
// that never store a T x S matrix. Each block owns 64 rows (queries, or keys
// for dK and dV), 16 per warp, kept in shared memory; it loops over the
// other side's rows 64 at a time, through shared memory too. Products are
// m16n8k16 mma.sync with fragments from ldmatrix, or, for the
// probabilities and their gradient, straight from the previous product's
// accumulators (an m16n8 tile pair's accumulators are an m16k16 A
// fragment's elements). The forward keeps a running maximum and sum per
// query (the online softmax) and writes the log-sum-exp; the backward
// recomputes the probabilities from it: one kernel for dQ (a block per
// query tile), one for dK and dV (a block per key tile), so that every
// gradient is a sum in a fixed order, without atomics.
//
//===----------------------------------------------------------------------===//

#include "compiler/target/cuda/KernelIndexing.h"
#include "compiler/target/cuda/MmaFragments.h"
#include "compiler/target/cuda/Passes.h"
#include "dialects/gacc/GaccOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::gacc {
#define GEN_PASS_DEF_FLASHATTENTION
#include "compiler/target/cuda/Passes.h.inc"
} // namespace mlir::gacc

using namespace mlir;
using gacc::kMmaK;
using gacc::kMmaM;
using gacc::kMmaN;

namespace {
constexpr int64_t kTileRows = 64; // rows of every shared tile
constexpr int64_t kWarps = 4;     // 16 of the block's rows each
// Shared tiles' rows are padded by 16 bytes, so that the 8 rows an
// ldmatrix reads fall in different banks (see TileMatmuls).
constexpr int64_t kRowPad = 8;
// Score tiles: 64 columns, 8 n8 tiles of accumulators.
constexpr int64_t kScoreTiles = kTileRows / kMmaN;

/// What the three kernels share: the launch (a block of 4 warps per 64
/// rows of one (batch, head)), the shared tiles and how they are filled,
/// the warp's products and the per-element indexing of its accumulators.
/// Accumulators are private [n8 tiles][4] f32 buffers; element i of tile nt
/// is at the warp's row g + 8 (i / 2) and column 8 nt + 2t + i % 2, with
/// g = lane / 4 and t = lane % 4 (PTX's m16n8 C layout).
class AttentionKernel : public gacc::KernelIndexBuilder {
public:
  /// For `op`, gacc.attention or gacc.attention_grad on buffers, before it.
  template <typename OpTy>
  explicit AttentionKernel(OpTy op)
      : KernelIndexBuilder(op.getLoc(), op),
        scale(op.getScale().convertToDouble()), causal(op.getCausal()),
        keyBias(op.getKeyBias()) {
    auto q = cast<MemRefType>(op.getQuery().getType());
    auto k = cast<MemRefType>(op.getKey().getType());
    batch = q.getDimSize(0);
    heads = q.getDimSize(1);
    queries = q.getDimSize(2);
    keys = k.getDimSize(2);
    headSize = q.getDimSize(3);
    element = q.getElementType();
    f32 = b.getF32Type();
  }

  /// A launch of a block per 64 of `rows` per (batch, head), with
  /// `privates` accumulators of `tiles` n8 tiles each; starts its body.
  void launch(int64_t rows, ArrayRef<int64_t> tiles) {
    gpu =
        gpu::LaunchOp::create(b, index(rows / kTileRows), index(batch * heads),
                              index(1), index(32), index(kWarps), index(1));
    for (int64_t n : tiles)
      accumulators.push_back(addPrivateBuffer(gpu, {n, 4}, f32));
    // A's fragment, and a pair of B's n8 tiles.
    fragments.emplace(*this, gpu, /*slots=*/2, element);
    b.setInsertionPointToStart(&gpu.getBody().front());
    Value y = gpu.getBlockIds().y;
    batchIndex = div(y, heads);
    headIndex = rem(y, heads);
    rowBase = mul(gpu.getBlockIds().x, kTileRows);
    lane = gpu.getThreadIds().x;
    warp = gpu.getThreadIds().y;
    warpRow = mul(warp, kMmaM);
    g = div(lane, 4);
    t = rem(lane, 4);
  }

  /// A tile of 64 rows of a [B, H, L, D] operand.
  Value sharedTile() {
    return addWorkgroupBuffer(gpu, {kTileRows, headSize + kRowPad}, element);
  }

  /// Copies rows [`first`, `first` + 64) of `source` ([B, H, L, D], this
  /// block's batch and head) into `tile`: 16 bytes per thread at a time
  /// where rows are contiguous and aligned, else element by element.
  void loadTile(Value source, Value first, Value tile) {
    int64_t width = vectorWidth(source);
    int64_t perRow = headSize / width;
    Value linear = add(mul(warp, 32), lane);
    for (int64_t i = 0, e = kTileRows * perRow / (32 * kWarps); i < e; ++i) {
      Value at = add(linear, i * 32 * kWarps);
      Value row = div(at, perRow), col = mul(rem(at, perRow), width);
      SmallVector<Value> from{batchIndex, headIndex, add(first, row), col};
      if (width == 1) {
        memref::StoreOp::create(b, memref::LoadOp::create(b, source, from),
                                tile, ValueRange{row, col});
        continue;
      }
      auto type = VectorType::get({width}, element);
      Value v =
          vector::LoadOp::create(b, type, source, from,
                                 /*nontemporal=*/false, llvm::MaybeAlign(16));
      vector::StoreOp::create(b, v, tile, ValueRange{row, col},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
  }

  /// The key tiles a block of 64 queries sees: all, or under the causal
  /// mask (T = S) those up to its own.
  Value visibleKeyTiles() {
    Value tiles = index(keys / kTileRows);
    if (!causal)
      return tiles;
    return arith::MinUIOp::create(
        b, tiles, add(gpu::BlockIdOp::create(b, gpu::Dimension::x), 1));
  }

  /// Rows [`first`, `first` + 64) of each source into its tile, between
  /// barriers: every thread is done with the tiles' previous rows before
  /// they are overwritten, and the new rows are all in before they are
  /// read.
  void loadNextTiles(Value first,
                     ArrayRef<std::pair<Value, Value>> sourcesAndTiles) {
    gpu::BarrierOp::create(b);
    for (auto [source, tile] : sourcesAndTiles)
      loadTile(source, first, tile);
    gpu::BarrierOp::create(b);
  }

  /// Sets every element of accumulator `acc` to zero (unrolled: constant
  /// indices keep it in registers).
  void zero(Value acc) {
    Value zero = constant(0.0);
    forEach(acc, [&](int64_t nt, int64_t i) {
      memref::StoreOp::create(b, zero, acc, ValueRange{index(nt), index(i)});
    });
  }

  /// `body(nt, i)` for every element of accumulator `acc`.
  void forEach(Value acc, function_ref<void(int64_t, int64_t)> body) {
    int64_t tiles = cast<MemRefType>(acc.getType()).getDimSize(0);
    for (int64_t nt = 0; nt < tiles; ++nt)
      for (int64_t i = 0; i < 4; ++i)
        body(nt, i);
  }

  /// acc += A · B for the warp's 16 rows, K = the head size: A's rows are
  /// `aTile`'s (at the warp's rows), B's columns `bTile`'s rows (B[k][n] =
  /// bTile[n][k]), 64 of them.
  void multiplyTiles(Value aTile, Value bTile, Value acc) {
    Value q = div(lane, 8), r = rem(lane, 8);
    for (int64_t k16 = 0; k16 < headSize; k16 += kMmaK) {
      // Matrix q of A: rows 8 (q % 2), k 8 (q / 2); of a pair of B's n8
      // tiles: n 8 (q / 2), k 8 (q % 2).
      fragments->load(aTile,
                      ValueRange{add(add(warpRow, mul(rem(q, 2), 8)), r),
                                 add(mul(div(q, 2), 8), k16)},
                      /*transpose=*/false, 0);
      for (int64_t pair = 0; pair < kScoreTiles / 2; ++pair) {
        fragments->load(bTile,
                        ValueRange{add(add(mul(div(q, 2), 8), r), pair * 16),
                                   add(mul(rem(q, 2), 8), k16)},
                        /*transpose=*/false, 1);
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> a = fragments->registers(0);
          fragments->mma(a, fragments->pair(1, half), acc, {2 * pair + half});
        }
      }
    }
  }

  /// acc += A · B for the warp's 16 rows, K = 64: A is the 16 x 64
  /// accumulator `aAcc` rounded to the operands' type, B[k][n] =
  /// bTile[k][n] (n < the head size).
  void multiplyAccumulators(Value aAcc, Value bTile, Value acc) {
    Value q = div(lane, 8), r = rem(lane, 8);
    for (int64_t kk = 0; kk < kTileRows / kMmaK; ++kk) {
      // A's registers: tile 2kk's elements (0, 1), (2, 3), then tile
      // 2kk + 1's: rows g and g + 8 at k 2t and 2t + 8.
      for (int64_t reg = 0; reg < 4; ++reg) {
        int64_t nt = 2 * kk + reg / 2, i = 2 * (reg % 2);
        fragments->store(load(aAcc, nt, i), load(aAcc, nt, i + 1), 0, reg);
      }
      for (int64_t pair = 0; pair < headSize / kMmaN / 2; ++pair) {
        // Matrix q: k 8 (q % 2), n 8 (q / 2), read transposed.
        fragments->load(bTile,
                        ValueRange{add(add(mul(rem(q, 2), 8), r), kk * kMmaK),
                                   add(mul(div(q, 2), 8), pair * 16)},
                        /*transpose=*/true, 1);
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> a = fragments->registers(0);
          fragments->mma(a, fragments->pair(1, half), acc, {2 * pair + half});
        }
      }
    }
  }

  Value load(Value buffer, int64_t i, int64_t j) {
    return memref::LoadOp::create(b, buffer, ValueRange{index(i), index(j)});
  }
  void store(Value value, Value buffer, int64_t i, int64_t j) {
    memref::StoreOp::create(b, value, buffer, ValueRange{index(i), index(j)});
  }
  Value constant(double value) {
    return arith::ConstantOp::create(b, b.getFloatAttr(f32, value));
  }

  /// The score of accumulator element `x` at (`row`, `col`) of the whole
  /// matrix ([queries][keys], or transposed in the dK/dV kernel): scaled,
  /// biased by its key's bias, -inf where the causal mask hides it.
  Value score(Value x, Value queryIndex, Value keyIndex) {
    x = arith::MulFOp::create(b, x, constant(scale));
    if (keyBias)
      x = arith::AddFOp::create(
          b, x,
          memref::LoadOp::create(b, keyBias, ValueRange{batchIndex, keyIndex}));
    if (!causal)
      return x;
    Value hidden = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, keyIndex,
                                         queryIndex);
    return arith::SelectOp::create(
        b, hidden, constant(-std::numeric_limits<double>::infinity()), x);
  }

  /// The warp's row of accumulator element i, and its column in tile nt.
  Value rowOf(int64_t i) { return add(add(warpRow, g), 8 * (i / 2)); }
  Value columnOf(int64_t nt, int64_t i) {
    return add(mul(t, 2), nt * kMmaN + i % 2);
  }

  /// Stores accumulator `acc` (the warp's 16 rows of a [64][D] tile) into
  /// rows [`first`, `first` + 64) of `target` ([B, H, L, D]), rounded.
  void storeTile(Value acc, Value first, Value target) {
    forEach(acc, [&](int64_t nt, int64_t i) {
      Value v = load(acc, nt, i);
      if (element != f32)
        v = arith::TruncFOp::create(b, element, v);
      memref::StoreOp::create(b, v, target,
                              ValueRange{batchIndex, headIndex,
                                         add(first, rowOf(i)),
                                         columnOf(nt, i)});
    });
  }

  double scale;
  bool causal;
  Value keyBias;
  int64_t batch, heads, queries, keys, headSize;
  Type element, f32;
  gpu::LaunchOp gpu;
  SmallVector<Value> accumulators;
  std::optional<gacc::MmaFragments> fragments;
  Value batchIndex, headIndex, rowBase, lane, warp, warpRow, g, t;

private:
  /// 16 bytes where `source`'s rows are contiguous and every row starts
  /// 16 bytes aligned, else 1.
  int64_t vectorWidth(Value source) {
    auto type = cast<MemRefType>(source.getType());
    int64_t width = 16 / (type.getElementTypeBitWidth() / 8);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || ShapedType::isDynamic(offset) ||
        offset % width || headSize % width ||
        (kTileRows * headSize / width) % (32 * kWarps))
      return 1;
    for (int64_t stride : ArrayRef(strides).drop_back())
      if (ShapedType::isDynamic(stride) || stride % width)
        return 1;
    return width;
  }
};
} // namespace

namespace {
/// gacc.attention: a block per 64 queries keeps their running maximum and
/// sum per row (lanes hold 32 of a row's 64 scores in a quad of 4 lanes,
/// which combine their partial maxima and sums through shared memory) and
/// rescales its output accumulators as the maximum grows.
void emitForward(gacc::AttentionOp op) {
  AttentionKernel k(op);
  ImplicitLocOpBuilder &b = k.b;
  k.launch(k.queries, {kScoreTiles, k.headSize / kMmaN});
  Value scores = k.accumulators[0], out = k.accumulators[1];
  // Per half h of the lane's rows (g, g + 8): the running maximum, and the
  // sum of this lane's probabilities.
  Value state = k.addPrivateBuffer(k.gpu, {2, 2}, k.f32);
  Value queryTile = k.sharedTile(), keyTile = k.sharedTile(),
        valueTile = k.sharedTile();
  Value quad = k.addWorkgroupBuffer(k.gpu, {kWarps, kMmaM, 4}, k.f32);
  Value minusInf = k.constant(-std::numeric_limits<double>::infinity());
  Value zero = k.constant(0.0);
  k.zero(out);
  for (int64_t h = 0; h < 2; ++h) {
    k.store(minusInf, state, h, 0);
    k.store(zero, state, h, 1);
  }
  k.loadTile(op.getQuery(), k.rowBase, queryTile);
  // The quad's 4 values of the lane's row h, from `quad`.
  auto quadValues = [&](int64_t h) {
    SmallVector<Value> values;
    for (int64_t lane = 0; lane < 4; ++lane)
      values.push_back(memref::LoadOp::create(
          b, quad, ValueRange{k.warp, k.add(k.g, 8 * h), k.index(lane)}));
    return values;
  };
  auto toQuad = [&](int64_t h, Value v) {
    memref::StoreOp::create(b, v, quad,
                            ValueRange{k.warp, k.add(k.g, 8 * h), k.t});
  };
  k.loop(k.index(0), k.visibleKeyTiles(), 1, [&](Value j) {
    Value first = k.mul(j, kTileRows);
    k.loadNextTiles(first,
                    {{op.getKey(), keyTile}, {op.getValue(), valueTile}});
    k.zero(scores);
    k.multiplyTiles(queryTile, keyTile, scores);
    for (int64_t h = 0; h < 2; ++h) {
      Value partial = minusInf;
      for (int64_t nt = 0; nt < kScoreTiles; ++nt)
        for (int64_t i = 2 * h; i < 2 * h + 2; ++i) {
          Value x = k.score(k.load(scores, nt, i), k.add(k.rowBase, k.rowOf(i)),
                            k.add(first, k.columnOf(nt, i)));
          k.store(x, scores, nt, i);
          partial = arith::MaximumFOp::create(b, partial, x);
        }
      toQuad(h, partial);
    }
    gpu::BarrierOp::create(b);
    for (int64_t h = 0; h < 2; ++h) {
      Value now = k.load(state, h, 0);
      Value old = now;
      for (Value v : quadValues(h))
        now = arith::MaximumFOp::create(b, now, v);
      // exp(x - max); 0 while a row has seen no visible score (-inf).
      Value unseen =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, now, minusInf);
      Value base = arith::SelectOp::create(b, unseen, zero, now);
      Value alpha = math::ExpOp::create(b, arith::SubFOp::create(b, old, base));
      k.store(now, state, h, 0);
      Value sum = zero;
      for (int64_t nt = 0; nt < kScoreTiles; ++nt)
        for (int64_t i = 2 * h; i < 2 * h + 2; ++i) {
          Value p = math::ExpOp::create(
              b, arith::SubFOp::create(b, k.load(scores, nt, i), base));
          k.store(p, scores, nt, i);
          sum = arith::AddFOp::create(b, sum, p);
        }
      k.store(arith::AddFOp::create(
                  b, arith::MulFOp::create(b, k.load(state, h, 1), alpha), sum),
              state, h, 1);
      for (int64_t dt = 0; dt < k.headSize / kMmaN; ++dt)
        for (int64_t i = 2 * h; i < 2 * h + 2; ++i)
          k.store(arith::MulFOp::create(b, k.load(out, dt, i), alpha), out, dt,
                  i);
    }
    k.multiplyAccumulators(scores, valueTile, out);
  });
  // Each row's sum over its quad; the output divided by it.
  gpu::BarrierOp::create(b);
  for (int64_t h = 0; h < 2; ++h)
    toQuad(h, k.load(state, h, 1));
  gpu::BarrierOp::create(b);
  for (int64_t h = 0; h < 2; ++h) {
    Value sum = zero;
    for (Value v : quadValues(h))
      sum = arith::AddFOp::create(b, sum, v);
    k.store(sum, state, h, 1);
  }
  k.forEach(out, [&](int64_t dt, int64_t i) {
    k.store(
        arith::DivFOp::create(b, k.load(out, dt, i), k.load(state, i / 2, 1)),
        out, dt, i);
  });
  k.storeTile(out, k.rowBase, op.getOut());
  // The log-sum-exp of each row, from one lane of its quad.
  k.ifThen(
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, k.t, k.index(0)), [&] {
        for (int64_t h = 0; h < 2; ++h) {
          Value lse = arith::AddFOp::create(
              b, k.load(state, h, 0),
              math::LogOp::create(b, k.load(state, h, 1)));
          memref::StoreOp::create(b, lse, op.getLogsumexp(),
                                  ValueRange{k.batchIndex, k.headIndex,
                                             k.add(k.rowBase, k.rowOf(2 * h))});
        }
      });
  gpu::TerminatorOp::create(b);
}

/// dQ = scale · dS K: a block per 64 queries, over the key tiles.
void emitQueryGradient(gacc::AttentionGradOp op) {
  AttentionKernel k(op);
  ImplicitLocOpBuilder &b = k.b;
  k.launch(k.queries, {kScoreTiles, kScoreTiles, k.headSize / kMmaN});
  Value scores = k.accumulators[0], dScores = k.accumulators[1],
        dQuery = k.accumulators[2];
  // Per half h of the lane's rows: the log-sum-exp and delta.
  Value rows = k.addPrivateBuffer(k.gpu, {2, 2}, k.f32);
  Value queryTile = k.sharedTile(), outGradTile = k.sharedTile(),
        keyTile = k.sharedTile(), valueTile = k.sharedTile();
  k.zero(dQuery);
  k.loadTile(op.getQuery(), k.rowBase, queryTile);
  k.loadTile(op.getOutGrad(), k.rowBase, outGradTile);
  for (int64_t h = 0; h < 2; ++h) {
    SmallVector<Value> at{k.batchIndex, k.headIndex,
                          k.add(k.rowBase, k.rowOf(2 * h))};
    k.store(memref::LoadOp::create(b, op.getLogsumexp(), at), rows, h, 0);
    k.store(memref::LoadOp::create(b, op.getDelta(), at), rows, h, 1);
  }
  Value scale = k.constant(k.scale);
  k.loop(k.index(0), k.visibleKeyTiles(), 1, [&](Value j) {
    Value first = k.mul(j, kTileRows);
    k.loadNextTiles(first,
                    {{op.getKey(), keyTile}, {op.getValue(), valueTile}});
    k.zero(scores);
    k.zero(dScores);
    k.multiplyTiles(queryTile, keyTile, scores);
    k.multiplyTiles(outGradTile, valueTile, dScores);
    // dS · scale = P (dP - delta) scale, into `scores`.
    k.forEach(scores, [&](int64_t nt, int64_t i) {
      Value x = k.score(k.load(scores, nt, i), k.add(k.rowBase, k.rowOf(i)),
                        k.add(first, k.columnOf(nt, i)));
      Value p = math::ExpOp::create(
          b, arith::SubFOp::create(b, x, k.load(rows, i / 2, 0)));
      Value dp = arith::SubFOp::create(b, k.load(dScores, nt, i),
                                       k.load(rows, i / 2, 1));
      k.store(arith::MulFOp::create(b, arith::MulFOp::create(b, p, dp), scale),
              scores, nt, i);
    });
    k.multiplyAccumulators(scores, keyTile, dQuery);
  });
  k.storeTile(dQuery, k.rowBase, op.getQueryGrad());
  gpu::TerminatorOp::create(b);
}

/// dK = scale · dSᵀ Q and dV = Pᵀ dO: a block per 64 keys, over the query
/// tiles; its accumulators hold Sᵀ (rows keys, columns queries).
void emitKeyValueGradient(gacc::AttentionGradOp op) {
  AttentionKernel k(op);
  ImplicitLocOpBuilder &b = k.b;
  int64_t outTiles = k.headSize / kMmaN;
  k.launch(k.keys, {kScoreTiles, kScoreTiles, outTiles, outTiles});
  Value scores = k.accumulators[0], dScores = k.accumulators[1],
        dKey = k.accumulators[2], dValue = k.accumulators[3];
  Value keyTile = k.sharedTile(), valueTile = k.sharedTile(),
        queryTile = k.sharedTile(), outGradTile = k.sharedTile();
  k.zero(dKey);
  k.zero(dValue);
  k.loadTile(op.getKey(), k.rowBase, keyTile);
  k.loadTile(op.getValue(), k.rowBase, valueTile);
  // Under the causal mask, the query tiles from the block's own.
  Value firstTile =
      k.causal ? gpu::BlockIdOp::create(b, gpu::Dimension::x).getResult()
               : k.index(0);
  Value scale = k.constant(k.scale);
  k.loop(firstTile, k.index(k.queries / kTileRows), 1, [&](Value i0) {
    Value first = k.mul(i0, kTileRows);
    k.loadNextTiles(first, {{op.getQuery(), queryTile},
                            {op.getOutGrad(), outGradTile}});
    k.zero(scores);
    k.zero(dScores);
    k.multiplyTiles(keyTile, queryTile, scores);
    k.multiplyTiles(valueTile, outGradTile, dScores);
    // Pᵀ into `scores`, dSᵀ · scale into `dScores`; each column's
    // log-sum-exp and delta are its query's.
    for (int64_t nt = 0; nt < kScoreTiles; ++nt)
      for (int64_t e = 0; e < 2; ++e) {
        Value query = k.add(first, k.columnOf(nt, e));
        SmallVector<Value> at{k.batchIndex, k.headIndex, query};
        Value lse = memref::LoadOp::create(b, op.getLogsumexp(), at);
        Value delta = memref::LoadOp::create(b, op.getDelta(), at);
        for (int64_t i = e; i < 4; i += 2) {
          Value x = k.score(k.load(scores, nt, i), query,
                            k.add(k.rowBase, k.rowOf(i)));
          Value p = math::ExpOp::create(b, arith::SubFOp::create(b, x, lse));
          Value dp = arith::SubFOp::create(b, k.load(dScores, nt, i), delta);
          k.store(p, scores, nt, i);
          k.store(
              arith::MulFOp::create(b, arith::MulFOp::create(b, p, dp), scale),
              dScores, nt, i);
        }
      }
    k.multiplyAccumulators(scores, outGradTile, dValue);
    k.multiplyAccumulators(dScores, queryTile, dKey);
  });
  k.storeTile(dKey, k.rowBase, op.getKeyGrad());
  k.storeTile(dValue, k.rowBase, op.getValueGrad());
  gpu::TerminatorOp::create(b);
}

/// Why the kernels cannot compute `op` (see gacc-fuse-attention's
/// cuda-kernels-only), or an empty string.
template <typename OpTy> std::string unsupported(OpTy op) {
  auto q = dyn_cast<MemRefType>(op.getQuery().getType());
  auto k = dyn_cast<MemRefType>(op.getKey().getType());
  if (!q || !k)
    return "is not on buffers";
  if (q.getElementTypeBitWidth() != 16)
    return "has f32 or f64 operands (the kernels take f16 and bf16)";
  if (q.getDimSize(3) % 16 || q.getDimSize(3) > 64)
    return "has a head size that is not a multiple of 16 up to 64";
  if (q.getDimSize(2) % kTileRows || k.getDimSize(2) % kTileRows)
    return "has lengths that are not multiples of 64";
  if (op.getCausal() && q.getDimSize(2) != k.getDimSize(2))
    return "is causal with different query and key lengths";
  if (q.getDimSize(0) * q.getDimSize(1) > 65535)
    return "has more than 65535 (batch, head) pairs (a grid's y dimension)";
  return "";
}

struct FlashAttentionPass
    : public gacc::impl::FlashAttentionBase<FlashAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<gacc::AttentionOp, gacc::AttentionGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      std::string reason = TypeSwitch<Operation *, std::string>(op)
                               .Case<gacc::AttentionOp, gacc::AttentionGradOp>(
                                   [](auto op) { return unsupported(op); });
      if (!reason.empty()) {
        op->emitOpError("cannot run on CUDA: it ") << reason;
        return signalPassFailure();
      }
      if (auto forward = dyn_cast<gacc::AttentionOp>(op)) {
        emitForward(forward);
      } else {
        auto grad = cast<gacc::AttentionGradOp>(op);
        emitQueryGradient(grad);
        emitKeyValueGradient(grad);
      }
      op->erase();
    }
  }
};
} // namespace
