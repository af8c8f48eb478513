//===- Attention.cpp - gacc.attention on the CPU --------------------------===//
//
// What compiled CPU code calls for gacc.attention and gacc.attention_grad
// (compiler/target/cpu/AttentionToCall.cpp): scaled dot-product attention
// 64 queries at a time, so that the scores are never a T x S tensor in
// memory: a block's [64, S] scores, probabilities and their gradients live
// in per-thread scratch. Each block is BLAS calls (Q Kᵀ, then P V; in the
// backward also Pᵀ dO, dO Vᵀ, dS K and dSᵀ Q) around row loops that
// vectorize. The forward runs (batch, head, query block) items on the
// runtime's pool; the backward (batch, head) items, each adding its dK and
// dV over its query blocks in order. The order of every sum is fixed by
// the shapes: results depend neither on the thread count nor on the batch.
//
// The scores and the softmax are in f32 (f64 for f64 operands, gradient
// checks); 16-bit Q, K and V are widened into f32 copies of each block.
// A query that sees no key (causal with T > S) gets NaN, as a softmax over
// no scores does.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Tensor.h"
#include "gacc/runtime/ThreadPool.h"

#include "Blas.h"
#include "HalfTypes.h"
#include "MemrefView.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using gacc::rt::BFloat16;
using gacc::rt::gemm;
using gacc::rt::Half;
using gacc::rt::SingleThreadedBlas;
using gacc::rt::View;

namespace {
/// Queries per block: a block's scores (64 x S) stay in L2.
constexpr int64_t kBlockRows = 64;
/// Lanes of the row reductions' partial sums: one AVX-512 register of f32.
constexpr int64_t kLanes = 16;

// 16-bit storage types are computed in f32.
float toCompute(float x) { return x; }
double toCompute(double x) { return x; }
float toCompute(Half x) { return gacc::rt::fromF16(x.bits); }
float toCompute(BFloat16 x) { return gacc::rt::fromBF16(x.bits); }
void store(float &to, float x) { to = x; }
void store(double &to, double x) { to = x; }
void store(Half &to, float x) { to.bits = gacc::rt::toF16(x); }
void store(BFloat16 &to, float x) { to.bits = gacc::rt::toBF16(x); }

/// The (batch, head) slice of a [B, H, N, D] view: N rows of D elements.
template <typename T> struct Slice {
  T *data;
  int64_t row, col;
  Slice(const View<T> &view, int64_t b, int64_t h)
      : data(view.data + b * view.strides[0] + h * view.strides[1]),
        row(view.strides[2]), col(view.strides[3]) {}
  T &at(int64_t i, int64_t j) const { return data[i * row + j * col]; }
};

/// Rows [r0, r1) of `slice` into `to`, [r1 - r0, d] row-major.
template <typename A, typename T>
void gather(const Slice<T> &slice, int64_t r0, int64_t r1, int64_t d, A *to) {
  for (int64_t i = r0; i < r1; ++i) {
    const T *row = &slice.at(i, 0);
    A *out = to + (i - r0) * d;
    if (slice.col == 1) // the common case, which vectorizes
      for (int64_t j = 0; j < d; ++j)
        out[j] = toCompute(row[j]);
    else
      for (int64_t j = 0; j < d; ++j)
        out[j] = toCompute(row[j * slice.col]);
  }
}

/// `from` ([r1 - r0, d] row-major) into rows [r0, r1) of `slice`.
template <typename A, typename T>
void scatter(const A *from, const Slice<T> &slice, int64_t r0, int64_t r1,
             int64_t d) {
  for (int64_t i = r0; i < r1; ++i) {
    T *row = &slice.at(i, 0);
    const A *in = from + (i - r0) * d;
    if (slice.col == 1)
      for (int64_t j = 0; j < d; ++j)
        store(row[j], in[j]);
    else
      for (int64_t j = 0; j < d; ++j)
        store(row[j * slice.col], in[j]);
  }
}

/// e^x by Cephes' polynomial on the reduced argument, in plain arithmetic
/// that vectorizes (libm's expf keeps the loop scalar); a few ulp. Exact 0
/// below the smallest normal result, infinity above the largest float, NaN
/// for NaN.
inline float exponential(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kMin = -87.3f, kMax = 88.3f;
  // NaN clamps to kMin (so that the conversion to int below is defined);
  // the selects at the end give NaN back.
  float clamped = x > kMin ? (x < kMax ? x : kMax) : kMin;
  float k = std::floor(clamped * kLog2e + 0.5f);
  float r = clamped - k * kLn2Hi - k * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float power;
  std::memcpy(&power, &bits, sizeof power);
  float y = p * power;
  y = x < kMin ? 0.0f : y;
  y = x > kMax ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}
inline double exponential(double x) { return std::exp(x); }

/// The softmax of one query's scores `s` (`bias` added) over its `visible`
/// keys, in place; the rest of the `seen` keys get 0. Returns the
/// log-sum-exp of the visible scores.
template <typename A>
inline A softmaxRow(A *s, const A *bias, int64_t visible, int64_t seen) {
  constexpr A kInf = std::numeric_limits<A>::infinity();
  A top[kLanes], sum[kLanes];
  std::fill_n(top, kLanes, -kInf);
  std::fill_n(sum, kLanes, A(0));
  int64_t whole = visible / kLanes * kLanes;
  for (int64_t j = 0; j < visible; ++j)
    s[j] += bias[j];
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      top[l] = s[j + l] > top[l] ? s[j + l] : top[l];
  for (int64_t j = whole; j < visible; ++j)
    top[0] = s[j] > top[0] ? s[j] : top[0];
  A max = *std::max_element(top, top + kLanes);
  for (int64_t j = 0; j < visible; ++j)
    s[j] = exponential(s[j] - max);
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      sum[l] += s[j + l];
  for (int64_t j = whole; j < visible; ++j)
    sum[0] += s[j];
  A total = 0;
  for (int64_t l = 0; l < kLanes; ++l)
    total += sum[l];
  A inverse = A(1) / total;
  for (int64_t j = 0; j < visible; ++j)
    s[j] *= inverse;
  std::fill(s + visible, s + seen, A(0));
  return max + std::log(total);
}

/// One query's probabilities from its scores `s` (`bias` added) and the
/// forward's log-sum-exp, in place; 0 past its `visible` keys.
template <typename A>
inline void probabilitiesRow(A *s, const A *bias, A logSumExp,
                             int64_t visible, int64_t seen) {
  for (int64_t j = 0; j < visible; ++j)
    s[j] = exponential(s[j] + bias[j] - logSumExp);
  std::fill(s + visible, s + seen, A(0));
}

/// dS = P · (dP - delta) for one query, into `dp`; 0 past its `visible`
/// keys (where P is 0: so also for a query that sees no key, whose output
/// and delta are NaN, wherever the block boundaries fall).
template <typename A>
inline void scoreGradientRow(A *dp, const A *p, A delta, int64_t visible,
                             int64_t seen) {
  for (int64_t j = 0; j < visible; ++j)
    dp[j] = p[j] * (dp[j] - delta);
  std::fill(dp + visible, dp + seen, A(0));
}

// The f32 rows, compiled for x86-64-v4 (AVX-512) and v3 (AVX2, FMA) as
// well (the runtime's baseline is x86-64's SSE2), chosen at load time.
#if defined(__x86_64__)
#define GACC_VECTOR_CLONES                                                     \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GACC_VECTOR_CLONES
#endif
GACC_VECTOR_CLONES float softmaxRows(float *s, const float *bias,
                                     int64_t visible, int64_t seen) {
  return softmaxRow(s, bias, visible, seen);
}
GACC_VECTOR_CLONES void probabilitiesRows(float *s, const float *bias,
                                          float logSumExp, int64_t visible,
                                          int64_t seen) {
  probabilitiesRow(s, bias, logSumExp, visible, seen);
}
GACC_VECTOR_CLONES void scoreGradientRows(float *dp, const float *p,
                                          float delta, int64_t visible,
                                          int64_t seen) {
  scoreGradientRow(dp, p, delta, visible, seen);
}
double softmaxRows(double *s, const double *bias, int64_t visible,
                   int64_t seen) {
  return softmaxRow(s, bias, visible, seen);
}
void probabilitiesRows(double *s, const double *bias, double logSumExp,
                       int64_t visible, int64_t seen) {
  probabilitiesRow(s, bias, logSumExp, visible, seen);
}
void scoreGradientRows(double *dp, const double *p, double delta,
                       int64_t visible, int64_t seen) {
  scoreGradientRow(dp, p, delta, visible, seen);
}

/// The shapes and masks both directions share.
struct Geometry {
  int64_t batch, heads, queries, keys, headSize, blocks;
  bool causal;

  template <typename T>
  Geometry(const View<T> &q, const View<T> &k, bool causal)
      : batch(q.sizes[0]), heads(q.sizes[1]), queries(q.sizes[2]),
        keys(k.sizes[2]), headSize(q.sizes[3]),
        blocks((queries + kBlockRows - 1) / kBlockRows), causal(causal) {}

  /// The keys query `i` sees: those up to i + (S - T) when causal.
  int64_t visible(int64_t i) const {
    return causal ? std::clamp<int64_t>(i + keys - queries + 1, 0, keys)
                  : keys;
  }
};

/// A per-query value ([B, H, T]: the log-sum-exp, delta).
template <typename A>
A &perQuery(const View<A> &view, int64_t b, int64_t h, int64_t i) {
  return view.data[b * view.strides[0] + h * view.strides[1] +
                   i * view.strides[2]];
}

/// Batch `b`'s key bias ([B, S]) into `to`, or zeros without one.
template <typename A>
void gatherBias(const View<A> *bias, int64_t b, int64_t keys, A *to) {
  for (int64_t j = 0; j < keys; ++j)
    to[j] = bias ? bias->data[b * bias->strides[0] + j * bias->strides[1]]
                 : A(0);
}

/// Per-thread buffers, grown as needed and kept between calls.
template <typename A> A *scratch(std::vector<A> &buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size)
    buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

template <typename T, typename A>
void attention(const View<T> &q, const View<T> &k, const View<T> &v,
               const View<A> *bias, const View<T> &out, const View<A> &lse,
               A scale, bool causal) {
  Geometry g(q, k, causal);
  // (BLAS takes no leading dimension below 1, even for empty rows.)
  int64_t d = g.headSize, ld = std::max<int64_t>(d, 1);
  SingleThreadedBlas singleThreaded;
  gacc::rt::parallelFor(
      g.batch * g.heads * g.blocks, 1, [&](int64_t begin, int64_t end) {
        thread_local std::vector<A> qBuf, kBuf, vBuf, sBuf, oBuf, biasBuf;
        for (int64_t item = begin; item < end; ++item) {
          int64_t b = item / (g.heads * g.blocks);
          int64_t h = item / g.blocks % g.heads;
          int64_t r0 = item % g.blocks * kBlockRows;
          int64_t r1 = std::min(r0 + kBlockRows, g.queries), rows = r1 - r0;
          int64_t seen = g.visible(r1 - 1); // the keys any row sees
          A *os = scratch(oBuf, rows * d);
          if (seen == 0) {
            std::fill_n(os, rows * d, std::numeric_limits<A>::quiet_NaN());
            for (int64_t r = r0; r < r1; ++r)
              perQuery(lse, b, h, r) = std::numeric_limits<A>::quiet_NaN();
          } else {
            A *qs = scratch(qBuf, rows * d), *ks = scratch(kBuf, seen * d),
              *vs = scratch(vBuf, seen * d), *s = scratch(sBuf, rows * seen),
              *biasRow = scratch(biasBuf, seen);
            gather(Slice<T>(q, b, h), r0, r1, d, qs);
            gather(Slice<T>(k, b, h), 0, seen, d, ks);
            gather(Slice<T>(v, b, h), 0, seen, d, vs);
            gatherBias(bias, b, seen, biasRow);
            gemm(qs, ks, s, false, true, rows, seen, d, ld, ld, seen, A(0),
                 scale);
            for (int64_t r = 0; r < rows; ++r) {
              int64_t visible = g.visible(r0 + r);
              A *row = s + r * seen;
              perQuery(lse, b, h, r0 + r) =
                  visible ? softmaxRows(row, biasRow, visible, seen)
                          : std::numeric_limits<A>::quiet_NaN();
              if (!visible)
                std::fill_n(row, seen, std::numeric_limits<A>::quiet_NaN());
            }
            gemm(s, vs, os, false, false, rows, d, seen, seen, ld, ld, A(0));
          }
          scatter(os, Slice<T>(out, b, h), r0, r1, d);
        }
      });
}

template <typename T, typename A>
void attentionGrad(const View<T> &q, const View<T> &k, const View<T> &v,
                   const View<T> &dOut, const View<A> &lse,
                   const View<A> &delta, const View<A> *bias,
                   const View<T> &dq, const View<T> &dk, const View<T> &dv,
                   A scale, bool causal) {
  Geometry g(q, k, causal);
  // (BLAS takes no leading dimension below 1, even for empty rows.)
  int64_t d = g.headSize, ld = std::max<int64_t>(d, 1);
  SingleThreadedBlas singleThreaded;
  gacc::rt::parallelFor(
      g.batch * g.heads, 1, [&](int64_t begin, int64_t end) {
        thread_local std::vector<A> qBuf, kBuf, vBuf, doBuf, sBuf, dpBuf,
            dqBuf, dkBuf, dvBuf, biasBuf;
        for (int64_t item = begin; item < end; ++item) {
          int64_t b = item / g.heads, h = item % g.heads;
          A *ks = scratch(kBuf, g.keys * d), *vs = scratch(vBuf, g.keys * d),
            *dks = scratch(dkBuf, g.keys * d),
            *dvs = scratch(dvBuf, g.keys * d),
            *biasRow = scratch(biasBuf, g.keys);
          gather(Slice<T>(k, b, h), 0, g.keys, d, ks);
          gather(Slice<T>(v, b, h), 0, g.keys, d, vs);
          gatherBias(bias, b, g.keys, biasRow);
          std::fill_n(dks, g.keys * d, A(0));
          std::fill_n(dvs, g.keys * d, A(0));
          for (int64_t r0 = 0; r0 < g.queries; r0 += kBlockRows) {
            int64_t r1 = std::min(r0 + kBlockRows, g.queries), rows = r1 - r0;
            int64_t seen = g.visible(r1 - 1);
            A *dqs = scratch(dqBuf, rows * d);
            if (seen == 0) {
              std::fill_n(dqs, rows * d, A(0));
              scatter(dqs, Slice<T>(dq, b, h), r0, r1, d);
              continue;
            }
            A *qs = scratch(qBuf, rows * d), *dos = scratch(doBuf, rows * d),
              *p = scratch(sBuf, rows * seen), *dp = scratch(dpBuf, rows * seen);
            gather(Slice<T>(q, b, h), r0, r1, d, qs);
            gather(Slice<T>(dOut, b, h), r0, r1, d, dos);
            // P, recomputed from the scores and the log-sum-exp.
            gemm(qs, ks, p, false, true, rows, seen, d, ld, ld, seen, A(0),
                 scale);
            for (int64_t r = 0; r < rows; ++r)
              probabilitiesRows(p + r * seen, biasRow,
                                perQuery(lse, b, h, r0 + r),
                                g.visible(r0 + r), seen);
            // dV += Pᵀ dO; dP = dO Vᵀ; dS = P · (dP - delta).
            gemm(p, dos, dvs, true, false, seen, d, rows, seen, ld, ld, A(1));
            gemm(dos, vs, dp, false, true, rows, seen, d, ld, ld, seen, A(0));
            for (int64_t r = 0; r < rows; ++r)
              scoreGradientRows(dp + r * seen, p + r * seen,
                                perQuery(delta, b, h, r0 + r),
                                g.visible(r0 + r), seen);
            // dQ = scale · dS K; dK += scale · dSᵀ Q.
            gemm(dp, ks, dqs, false, false, rows, d, seen, seen, ld, ld, A(0),
                 scale);
            gemm(dp, qs, dks, true, false, seen, d, rows, seen, ld, ld, A(1),
                 scale);
            scatter(dqs, Slice<T>(dq, b, h), r0, r1, d);
          }
          scatter(dks, Slice<T>(dk, b, h), 0, g.keys, d);
          scatter(dvs, Slice<T>(dv, b, h), 0, g.keys, d);
        }
      });
}
} // namespace

// Each memref argument is an unranked descriptor (rank, pointer to the
// ranked one). Without a key bias (`hasKeyBias` 0) the bias argument is
// not read (the compiler passes another memref of its type).
#define GACC_ATTENTION(SUFFIX, T, A)                                           \
  extern "C" void gacc_cpu_attention_##SUFFIX(                                 \
      int64_t rq, void *q, int64_t rk, void *k, int64_t rv, void *v,           \
      int64_t rb, void *bias, int64_t ro, void *out, int64_t rl, void *lse,    \
      double scale, int32_t causal, int32_t hasKeyBias) {                      \
    std::optional<View<A>> keyBias;                                            \
    if (hasKeyBias)                                                            \
      keyBias.emplace(rb, bias);                                               \
    attention<T, A>(View<T>(rq, q), View<T>(rk, k), View<T>(rv, v),            \
                    keyBias ? &*keyBias : nullptr, View<T>(ro, out),           \
                    View<A>(rl, lse), static_cast<A>(scale), causal);          \
  }                                                                            \
  extern "C" void gacc_cpu_attention_grad_##SUFFIX(                            \
      int64_t rq, void *q, int64_t rk, void *k, int64_t rv, void *v,           \
      int64_t rdo, void *dOut, int64_t rl, void *lse, int64_t rd, void *delta, \
      int64_t rb, void *bias, int64_t rdq, void *dq, int64_t rdk, void *dk,    \
      int64_t rdv, void *dv, double scale, int32_t causal,                     \
      int32_t hasKeyBias) {                                                    \
    std::optional<View<A>> keyBias;                                            \
    if (hasKeyBias)                                                            \
      keyBias.emplace(rb, bias);                                               \
    attentionGrad<T, A>(View<T>(rq, q), View<T>(rk, k), View<T>(rv, v),        \
                        View<T>(rdo, dOut), View<A>(rl, lse),                  \
                        View<A>(rd, delta), keyBias ? &*keyBias : nullptr,     \
                        View<T>(rdq, dq), View<T>(rdk, dk), View<T>(rdv, dv),  \
                        static_cast<A>(scale), causal);                        \
  }
GACC_ATTENTION(f32, float, float)
GACC_ATTENTION(f64, double, double)
GACC_ATTENTION(f16, Half, float)
GACC_ATTENTION(bf16, BFloat16, float)
#undef GACC_ATTENTION
