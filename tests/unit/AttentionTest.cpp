//===- AttentionTest.cpp - the attention kernels compiled CPU code calls --===//
//
// gacc_cpu_attention_<type> and gacc_cpu_attention_grad_<type> against a
// double-precision softmax(scale · Q Kᵀ + bias) V and its gradient: lengths
// that are not multiples of the kernels' 64-query blocks, the causal mask
// with T < S, a key bias, Q, K and V read through a [B, T, H, D] layout
// (strided views, as a model's head split gives), f64, f16, bf16, results
// that do not depend on the thread count, and NaN for a query that sees no
// key (causal with T > S), which gives K and V no gradient wherever the
// kernels' blocks of queries begin.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Tensor.h"
#include "gacc/runtime/ThreadPool.h"

#include "MemrefDescriptor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#define GACC_DECLARE_ATTENTION(SUFFIX)                                         \
  extern "C" void gacc_cpu_attention_##SUFFIX(                                 \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, double, int32_t, int32_t);             \
  extern "C" void gacc_cpu_attention_grad_##SUFFIX(                            \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, int64_t, void *, int64_t, void *,      \
      int64_t, void *, int64_t, void *, double, int32_t, int32_t);
GACC_DECLARE_ATTENTION(f32)
GACC_DECLARE_ATTENTION(f64)
GACC_DECLARE_ATTENTION(f16)
GACC_DECLARE_ATTENTION(bf16)
#undef GACC_DECLARE_ATTENTION

using namespace gacc::rt;
using gacc::test::Memref;
using gacc::test::rowMajorStrides;

namespace {
struct Shape {
  int64_t batch, heads, queries, keys, headSize;
  bool causal, keyBias;
  /// Q, K, V stored [B, N, H, D] and read as [B, H, N, D].
  bool headsInner;
};

/// The problem in doubles, values as the kernel's storage type rounds them.
struct Problem {
  Shape shape;
  double scale;
  std::vector<double> q, k, v, dOut, bias; // [B, H, N, D], bias [B, S]

  Problem(const Shape &s, DType dtype, unsigned seed)
      : shape(s), scale(1.0 / std::sqrt(double(s.headSize))) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    auto fill = [&](std::vector<double> &x, int64_t n) {
      x.resize(n);
      for (double &value : x) {
        value = normal(rng);
        if (dtype == DType::BF16)
          value = fromBF16(toBF16(static_cast<float>(value)));
        else if (dtype == DType::F16)
          value = fromF16(toF16(static_cast<float>(value)));
        else if (dtype == DType::F32)
          value = static_cast<float>(value);
      }
    };
    int64_t bh = s.batch * s.heads;
    fill(q, bh * s.queries * s.headSize);
    fill(k, bh * s.keys * s.headSize);
    fill(v, bh * s.keys * s.headSize);
    fill(dOut, bh * s.queries * s.headSize);
    bias.assign(s.batch * s.keys, 0.0);
    if (s.keyBias)
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t j = 0; j < s.keys; ++j)
          bias[b * s.keys + j] = (j + b) % 5 == 0 ? -1e4 : 0.25 * normal(rng);
  }

  bool visible(int64_t i, int64_t j) const {
    return !shape.causal || j <= i + shape.keys - shape.queries;
  }
};

/// What the kernels compute, in doubles. A query that sees no key has NaN
/// output and log-sum-exp, and gives nothing to any gradient.
struct Reference {
  std::vector<double> out, lse, delta, dq, dk, dv;

  explicit Reference(const Problem &p) {
    const Shape &s = p.shape;
    int64_t t = s.queries, n = s.keys, d = s.headSize;
    out.assign(p.q.size(), 0);
    dq.assign(p.q.size(), 0);
    dk.assign(p.k.size(), 0);
    dv.assign(p.v.size(), 0);
    lse.assign(s.batch * s.heads * t, 0);
    delta = lse;
    std::vector<double> probs(n), dp(n);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h) {
        int64_t bh = b * s.heads + h;
        const double *q = &p.q[bh * t * d], *k = &p.k[bh * n * d],
                     *v = &p.v[bh * n * d], *dO = &p.dOut[bh * t * d];
        for (int64_t i = 0; i < t; ++i) {
          if (!p.visible(i, 0)) {
            for (int64_t c = 0; c < d; ++c)
              out[(bh * t + i) * d + c] = NAN;
            lse[bh * t + i] = NAN;
            continue;
          }
          double max = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            double score = 0;
            for (int64_t c = 0; c < d; ++c)
              score += q[i * d + c] * k[j * d + c];
            probs[j] = p.visible(i, j)
                           ? p.scale * score + p.bias[b * n + j]
                           : -INFINITY;
            max = std::max(max, probs[j]);
          }
          double sum = 0;
          for (int64_t j = 0; j < n; ++j)
            sum += probs[j] = std::exp(probs[j] - max);
          lse[bh * t + i] = max + std::log(sum);
          double rowDelta = 0;
          for (int64_t j = 0; j < n; ++j) {
            probs[j] /= sum;
            for (int64_t c = 0; c < d; ++c)
              out[(bh * t + i) * d + c] += probs[j] * v[j * d + c];
          }
          for (int64_t c = 0; c < d; ++c)
            rowDelta += dO[i * d + c] * out[(bh * t + i) * d + c];
          delta[bh * t + i] = rowDelta;
          for (int64_t j = 0; j < n; ++j) {
            double dpj = 0;
            for (int64_t c = 0; c < d; ++c) {
              dpj += dO[i * d + c] * v[j * d + c];
              dv[(bh * n + j) * d + c] += probs[j] * dO[i * d + c];
            }
            double ds = probs[j] * (dpj - rowDelta);
            for (int64_t c = 0; c < d; ++c) {
              dq[(bh * t + i) * d + c] += p.scale * ds * k[j * d + c];
              dk[(bh * n + j) * d + c] += p.scale * ds * q[i * d + c];
            }
          }
        }
      }
  }
};

/// A [B, H, N, D] tensor as the kernel reads it: stored [B, H, N, D], or
/// [B, N, H, D] and viewed through strides.
template <typename T> struct Operand {
  std::vector<T> data;
  Memref memref;

  Operand(const std::vector<double> &values, const Shape &s, int64_t length,
          T (*convert)(double))
      : data(values.size()), memref(nullptr, {}, std::vector<int64_t>{}) {
    int64_t d = s.headSize;
    std::vector<int64_t> strides =
        s.headsInner
            ? std::vector<int64_t>{length * s.heads * d, d, s.heads * d, 1}
            : rowMajorStrides({s.batch, s.heads, length, d});
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h)
        for (int64_t i = 0; i < length; ++i)
          for (int64_t c = 0; c < d; ++c)
            data[b * strides[0] + h * strides[1] + i * strides[2] + c] =
                convert(values[((b * s.heads + h) * length + i) * d + c]);
    memref = Memref(data.data(), {s.batch, s.heads, length, d}, strides);
  }

  /// The element at the reference's index of a [B, H, N, D] tensor.
  const T &at(int64_t index) const {
    const int64_t *sizes = memref.fields.data() + 3, *strides = sizes + 4;
    int64_t c = index % sizes[3], i = index / sizes[3] % sizes[2],
            h = index / (sizes[3] * sizes[2]) % sizes[1],
            b = index / (sizes[3] * sizes[2] * sizes[1]);
    return data[b * strides[0] + h * strides[1] + i * strides[2] + c];
  }
};

/// Runs both kernels of storage type T (compute type A) on `p` and checks
/// them against the reference within `tolerance` (relative to each
/// tensor's largest magnitude). Returns the outputs' bits, to compare runs.
template <typename T, typename A, typename Forward, typename Backward>
std::vector<double> runAndCheck(const Problem &p, Forward forward,
                                Backward backward, T (*convert)(double),
                                double (*widen)(T), double tolerance) {
  const Shape &s = p.shape;
  Operand<T> q(p.q, s, s.queries, convert), k(p.k, s, s.keys, convert),
      v(p.v, s, s.keys, convert), dOut(p.dOut, s, s.queries, convert);
  // Outputs start as NaN, which the kernels must overwrite.
  std::vector<double> nans(p.q.size(), NAN);
  Operand<T> out(nans, s, s.queries, convert), dq(nans, s, s.queries, convert);
  nans.assign(p.k.size(), NAN);
  Operand<T> dk(nans, s, s.keys, convert), dv(nans, s, s.keys, convert);
  std::vector<A> bias(p.bias.begin(), p.bias.end());
  std::vector<A> lse(s.batch * s.heads * s.queries, NAN);
  Memref biasRef(bias.data(), {s.batch, s.keys});
  Memref lseRef(lse.data(), {s.batch, s.heads, s.queries});
  forward(4, q.memref.descriptor(), 4, k.memref.descriptor(), 4,
          v.memref.descriptor(), 2, biasRef.descriptor(), 4,
          out.memref.descriptor(), 3, lseRef.descriptor(), p.scale, s.causal,
          s.keyBias);
  Reference ref(p);
  // delta from the kernel's own output, as the compiled VJP computes it.
  std::vector<A> delta(lse.size());
  for (size_t row = 0; row < delta.size(); ++row) {
    double sum = 0;
    for (int64_t c = 0; c < s.headSize; ++c)
      sum += p.dOut[row * s.headSize + c] *
             widen(out.at(row * s.headSize + c));
    delta[row] = static_cast<A>(sum);
  }
  Memref deltaRef(delta.data(), {s.batch, s.heads, s.queries});
  backward(4, q.memref.descriptor(), 4, k.memref.descriptor(), 4,
           v.memref.descriptor(), 4, dOut.memref.descriptor(), 3,
           lseRef.descriptor(), 3, deltaRef.descriptor(), 2,
           biasRef.descriptor(), 4, dq.memref.descriptor(), 4,
           dk.memref.descriptor(), 4, dv.memref.descriptor(), p.scale,
           s.causal, s.keyBias);

  std::vector<double> results;
  auto check = [&](const char *name, const std::vector<double> &expected,
                   auto actual) {
    double scale = 1e-30;
    for (double x : expected)
      scale = std::max(scale, std::abs(x));
    for (size_t i = 0; i < expected.size(); ++i) {
      double got = actual(i);
      results.push_back(got);
      if (std::isnan(expected[i]))
        ASSERT_TRUE(std::isnan(got)) << name << " element " << i;
      else
        ASSERT_NEAR(got, expected[i], tolerance * scale)
            << name << " element " << i;
    }
  };
  check("out", ref.out, [&](size_t i) { return widen(out.at(i)); });
  check("logsumexp", ref.lse, [&](size_t i) { return double(lse[i]); });
  check("dQ", ref.dq, [&](size_t i) { return widen(dq.at(i)); });
  check("dK", ref.dk, [&](size_t i) { return widen(dk.at(i)); });
  check("dV", ref.dv, [&](size_t i) { return widen(dv.at(i)); });
  return results;
}

float toFloat(double x) { return static_cast<float>(x); }
double fromFloat(float x) { return x; }
double toDouble(double x) { return x; }
double fromDouble(double x) { return x; }
uint16_t toBf16(double x) { return toBF16(static_cast<float>(x)); }
double fromBf16(uint16_t x) { return fromBF16(x); }
uint16_t toHalf(double x) { return toF16(static_cast<float>(x)); }
double fromHalf(uint16_t x) { return fromF16(x); }

std::vector<double> runF32(const Shape &shape, unsigned seed) {
  return runAndCheck<float, float>(
      Problem(shape, DType::F32, seed), gacc_cpu_attention_f32,
      gacc_cpu_attention_grad_f32, toFloat, fromFloat, 2e-5);
}

TEST(Attention, F32CausalUnevenBlocks) {
  runF32({2, 3, 100, 100, 24, /*causal=*/true, /*keyBias=*/false, false}, 1);
}

TEST(Attention, F32CausalFewerQueriesThanKeysWithKeyBias) {
  runF32({2, 2, 70, 130, 16, true, true, false}, 2);
}

TEST(Attention, F32KeyBiasStridedHeads) {
  runF32({3, 4, 65, 65, 32, false, true, /*headsInner=*/true}, 3);
}

TEST(Attention, F64MatchesTheReferenceClosely) {
  runAndCheck<double, double>(
      Problem({2, 2, 70, 70, 8, true, true, true}, DType::F64, 4),
      gacc_cpu_attention_f64, gacc_cpu_attention_grad_f64, toDouble,
      fromDouble, 1e-12);
}

TEST(Attention, Bf16WithinItsRounding) {
  // Outputs and gradients are rounded to bf16 (8 bits of mantissa).
  runAndCheck<uint16_t, float>(
      Problem({2, 3, 80, 80, 32, true, false, false}, DType::BF16, 5),
      gacc_cpu_attention_bf16, gacc_cpu_attention_grad_bf16, toBf16,
      fromBf16, 1e-2);
}

TEST(Attention, F16WithinItsRounding) {
  runAndCheck<uint16_t, float>(
      Problem({2, 2, 70, 70, 16, true, true, true}, DType::F16, 7),
      gacc_cpu_attention_f16, gacc_cpu_attention_grad_f16, toHalf, fromHalf,
      2e-3);
}

TEST(Attention, QueriesThatSeeNoKeyGiveNoGradient) {
  // Causal, T = 100 > S = 30: queries 0-69 see no key, a whole block of 64
  // and the first rows of the next, whose delta is NaN too.
  runF32({1, 2, 100, 30, 8, true, false, false}, 8);
  // T - S = 64: the block boundary.
  runF32({1, 1, 94, 30, 8, true, true, false}, 9);
}

TEST(Attention, ResultsDoNotDependOnTheThreadCount) {
  Shape shape{2, 3, 130, 130, 16, true, true, true};
  setThreads(1);
  std::vector<double> one = runF32(shape, 6);
  setThreads(3);
  std::vector<double> three = runF32(shape, 6);
  setThreads(0);
  ASSERT_EQ(one.size(), three.size());
  EXPECT_EQ(0, std::memcmp(one.data(), three.data(),
                           one.size() * sizeof(double)));
}

TEST(Attention, AQueryThatSeesNoKeyIsNaN) {
  // Causal with T = 4 > S = 2: queries 0 and 1 see no key.
  Shape s{1, 1, 4, 2, 4, true, false, false};
  std::vector<float> q(16, 0.5f), k(8, 0.25f), v(8, 1.0f), out(16, 0.0f),
      lse(4, 0.0f);
  Memref qRef(q.data(), {1, 1, 4, 4}), kRef(k.data(), {1, 1, 2, 4}),
      vRef(v.data(), {1, 1, 2, 4}), outRef(out.data(), {1, 1, 4, 4}),
      lseRef(lse.data(), {1, 1, 4});
  gacc_cpu_attention_f32(4, qRef.descriptor(), 4, kRef.descriptor(), 4,
                         vRef.descriptor(), 3, lseRef.descriptor(), 4,
                         outRef.descriptor(), 3, lseRef.descriptor(), 0.5,
                         s.causal, 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(std::isnan(lse[i]));
    EXPECT_TRUE(std::isnan(out[i * 4]));
  }
  for (int i = 2; i < 4; ++i) {
    EXPECT_FALSE(std::isnan(lse[i]));
    EXPECT_FLOAT_EQ(out[i * 4], 1.0f);
  }
}
} // namespace
