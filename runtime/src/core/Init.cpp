//===- Init.cpp - parameter initializers ------------------------------------===//
//
// Parameters come from Philox4x32-10, a counter-based generator: element i
// of a parameter is a function of (its seed mixed with the run's, i) alone,
// so a parameter is filled by many threads at once, a shard alone, and the
// same on any machine. The values are computed in f32 with additions,
// multiplications and sqrt only (no libm; no contraction into FMAs: this
// file is compiled with -ffp-contract=off), so whichever vector code a
// machine runs, it computes the same bits (docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Init.h"
#include "gacc/runtime/Tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

namespace gacc::rt {

uint64_t Random::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Random::uniform() { return (next() >> 11) * 0x1.0p-53; }

double Random::normal() {
  double u1 = uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t mixSeeds(uint64_t a, uint64_t b) {
  Random random(a * 0x9e3779b97f4a7c15ull ^ b);
  return random.next();
}

namespace {
// Philox4x32's multipliers and key increments (Random123).
constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;
} // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key) {
  for (int round = 0; round < kRounds; ++round) {
    uint64_t product0 = uint64_t{kMultiplier0} * counter[0];
    uint64_t product1 = uint64_t{kMultiplier1} * counter[2];
    counter = {static_cast<uint32_t>(product1 >> 32) ^ counter[1] ^ key[0],
               static_cast<uint32_t>(product1),
               static_cast<uint32_t>(product0 >> 32) ^ counter[3] ^ key[1],
               static_cast<uint32_t>(product0)};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return counter;
}

namespace {
/// Counters per block, side by side in vector registers: block b holds
/// counters [16b, 16b + 16), and element 64b + 16w + l is word w of
/// counter 16b + l (so a block's words are stored contiguously).
constexpr int kLanes = 16;
constexpr int kBlock = 4 * kLanes;

/// What a block of random words becomes: (2u - 1)·scale or z·scale, with u
/// uniform in [0, 1) and z standard normal.
struct Distribution {
  bool normal = false;
  float scale = 1.0f;
};

inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
inline float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// ln x for normal x > 0 (Cephes' logf: x = m·2^e with m in [√½, √2),
/// ln m = f - f²/2 + f³·P(f) with f = m - 1; within 2 ulp).
inline float logOf(float x) {
  uint32_t bits = bitsOf(x);
  int32_t exponent = static_cast<int32_t>(bits >> 23) - 127;
  float m = floatOf((bits & 0x7fffffu) | 0x3f800000u); // [1, 2)
  bool above = m > 1.41421356f;
  m *= above ? 0.5f : 1.0f;
  exponent += above;
  float f = m - 1.0f, z = f * f, e = static_cast<float>(exponent);
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = f * z * p - 2.12194440e-4f * e - 0.5f * z;
  return f + y + 0.693359375f * e;
}

/// sin and cos of 2π·k/2^24 for k in [0, 2^24): the quadrant q = round(k /
/// 2^22) exactly in integers, then Cephes' sinf/cosf polynomials on the
/// rest, x in [-π/4, π/4], and a rotation by q quarter turns.
inline void sinCosOfTurns(uint32_t k, float &sine, float &cosine) {
  uint32_t quadrant = (k + (1u << 21)) >> 22;
  int32_t rest = static_cast<int32_t>(k) - static_cast<int32_t>(quadrant << 22);
  float x = static_cast<float>(rest) * 3.74507028e-7f; // 2π / 2^24
  float z = x * x;
  float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z -
             1.6666654611e-1f) * z * x + x;
  float c = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z +
             4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
  bool odd = quadrant & 1u;
  sine = (odd ? c : s) * ((quadrant & 2u) ? -1.0f : 1.0f);
  cosine = (odd ? s : c) * (((quadrant + 1u) & 2u) ? -1.0f : 1.0f);
}

// The block's loops vectorize; machines with wider vectors get their own
// copy of it (the same operations, so the same values).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GACC_VECTOR_CLONES                                                     \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GACC_VECTOR_CLONES
#endif

/// The 64 values of block `block` of the stream `key`.
GACC_VECTOR_CLONES void fillBlock(uint32_t key0, uint32_t key1, uint64_t block,
                                  Distribution d, float *out) {
  uint32_t w0[kLanes], w1[kLanes], w2[kLanes], w3[kLanes];
  uint64_t first = block * kLanes;
  for (int l = 0; l < kLanes; ++l) {
    w0[l] = static_cast<uint32_t>(first + l);
    w1[l] = static_cast<uint32_t>((first + l) >> 32);
    w2[l] = w3[l] = 0;
  }
  for (int round = 0; round < kRounds; ++round) {
    for (int l = 0; l < kLanes; ++l) {
      uint64_t product0 = uint64_t{kMultiplier0} * w0[l];
      uint64_t product1 = uint64_t{kMultiplier1} * w2[l];
      uint32_t next0 = static_cast<uint32_t>(product1 >> 32) ^ w1[l] ^ key0;
      uint32_t next2 = static_cast<uint32_t>(product0 >> 32) ^ w3[l] ^ key1;
      w1[l] = static_cast<uint32_t>(product1);
      w3[l] = static_cast<uint32_t>(product0);
      w0[l] = next0;
      w2[l] = next2;
    }
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  // 24 random bits per word: uniforms on the grid of 2^-24.
  if (!d.normal) {
    const uint32_t *words[4] = {w0, w1, w2, w3};
    for (int w = 0; w < 4; ++w)
      for (int l = 0; l < kLanes; ++l)
        out[w * kLanes + l] =
            (static_cast<float>(static_cast<int32_t>(words[w][l] >> 8)) *
                 0x1.0p-23f -
             1.0f) *
            d.scale;
    return;
  }
  // Box-Muller on words (0, 1) and (2, 3): the radius from u in (0, 1],
  // never ln 0, the angle from the other word.
  for (int pair = 0; pair < 2; ++pair) {
    const uint32_t *radii = pair ? w2 : w0, *angles = pair ? w3 : w1;
    float *cosines = out + 2 * pair * kLanes, *sines = cosines + kLanes;
    for (int l = 0; l < kLanes; ++l) {
      float u = static_cast<float>(static_cast<int32_t>(radii[l] >> 8) + 1) *
                0x1.0p-24f;
      float radius = std::sqrt(-2.0f * logOf(u)) * d.scale;
      float sine, cosine;
      sinCosOfTurns(angles[l] >> 8, sine, cosine);
      cosines[l] = radius * cosine;
      sines[l] = radius * sine;
    }
  }
}

/// How a value is stored in each element type, chosen once per range.
template <typename T> void storeAll(std::byte *out, const float *in, int n) {
  T *target = reinterpret_cast<T *>(out);
  for (int i = 0; i < n; ++i)
    target[i] = static_cast<T>(in[i]);
}
template <> void storeAll<bool>(std::byte *out, const float *in, int n) {
  for (int i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>(in[i] != 0.0f);
}
struct BF16 {};
struct F16 {};
template <> void storeAll<BF16>(std::byte *out, const float *in, int n) {
  uint16_t *target = reinterpret_cast<uint16_t *>(out);
  for (int i = 0; i < n; ++i)
    target[i] = toBF16(in[i]);
}
template <> void storeAll<F16>(std::byte *out, const float *in, int n) {
  uint16_t *target = reinterpret_cast<uint16_t *>(out);
  for (int i = 0; i < n; ++i)
    target[i] = toF16(in[i]);
}

using Store = void (*)(std::byte *, const float *, int);
Store storeFor(DType dtype) {
  switch (dtype) {
  case DType::F64: return storeAll<double>;
  case DType::F32: return storeAll<float>;
  case DType::F16: return storeAll<F16>;
  case DType::BF16: return storeAll<BF16>;
  case DType::I64: return storeAll<int64_t>;
  case DType::I32: return storeAll<int32_t>;
  case DType::I8: return storeAll<int8_t>;
  case DType::U8: return storeAll<uint8_t>;
  case DType::Bool: return storeAll<bool>;
  }
  return storeAll<float>;
}

/// The distribution of `param`'s initializer, or the constant it fills.
Distribution distributionOf(const Parameter &param, float &constant,
                            bool &fixed) {
  const std::vector<int64_t> &shape = param.slot.shape;
  // torch.nn.init._calculate_fan_in_and_fan_out for [out, in, k...].
  double receptive = 1.0;
  for (size_t d = 2; d < shape.size(); ++d)
    receptive *= static_cast<double>(shape[d]);
  double fanIn = shape.size() >= 2 ? shape[1] * receptive : 1.0;
  double fanOut = shape.size() >= 2 ? shape[0] * receptive : 1.0;
  double gain = param.scale;
  fixed = false;
  auto uniform = [](double bound) {
    return Distribution{false, static_cast<float>(bound)};
  };
  auto normal = [](double std) {
    return Distribution{true, static_cast<float>(std)};
  };
  switch (param.init) {
  case InitKind::Zeros:
  case InitKind::Ones:
    fixed = true;
    constant = param.init == InitKind::Ones ? 1.0f : 0.0f;
    return {};
  case InitKind::Normal:
    return normal(param.scale);
  case InitKind::Uniform:
    return uniform(param.scale);
  case InitKind::XavierUniform:
    return uniform(gain * std::sqrt(6.0 / (fanIn + fanOut)));
  case InitKind::XavierNormal:
    return normal(gain * std::sqrt(2.0 / (fanIn + fanOut)));
  case InitKind::KaimingUniform:
    return uniform(gain * std::sqrt(3.0 / fanIn));
  case InitKind::KaimingNormal:
    return normal(gain / std::sqrt(fanIn));
  }
  return {};
}

/// Elements [begin, end) of `range` (within its [begin, end)).
void fillPart(const InitRange &range, uint64_t runSeed, int64_t begin,
              int64_t end) {
  float constant = 0.0f;
  bool fixed = false;
  Distribution d = distributionOf(range.param, constant, fixed);
  uint64_t seed = mixSeeds(range.param.seed, runSeed);
  auto key0 = static_cast<uint32_t>(seed), key1 = static_cast<uint32_t>(seed >> 32);
  Store store = storeFor(range.param.slot.dtype);
  Store storeCopy = range.copy ? storeFor(range.copyType) : nullptr;
  size_t width = byteWidth(range.param.slot.dtype);
  size_t copyWidth = byteWidth(range.copyType);
  alignas(64) float values[kBlock];
  if (fixed)
    std::fill(values, values + kBlock, constant);
  for (int64_t block = begin / kBlock; block * kBlock < end; ++block) {
    if (!fixed)
      fillBlock(key0, key1, static_cast<uint64_t>(block), d, values);
    int64_t from = std::max(begin, block * kBlock);
    int64_t to = std::min(end, (block + 1) * kBlock);
    int n = static_cast<int>(to - from);
    const float *first = values + (from - block * kBlock);
    store(range.data + (from - range.begin) * width, first, n);
    if (storeCopy)
      storeCopy(range.copy + (from - range.begin) * copyWidth, first, n);
  }
}
} // namespace

void initializeParameters(const std::vector<InitRange> &ranges,
                          uint64_t runSeed, unsigned threads) {
  // Pieces of about 2^16 elements, cut at block boundaries, taken in turn
  // by the threads.
  constexpr int64_t kPiece = int64_t{1} << 16;
  struct Piece {
    const InitRange *range;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  int64_t total = 0;
  for (const InitRange &range : ranges) {
    for (int64_t begin = range.begin; begin < range.end;) {
      int64_t end = std::min(range.end, (begin / kPiece + 1) * kPiece);
      pieces.push_back({&range, begin, end});
      begin = end;
    }
    total += std::max<int64_t>(range.end - range.begin, 0);
  }
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::clamp<int64_t>(
      std::min<int64_t>(total / kPiece, pieces.size()), 1, threads));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pieces.size();)
      fillPart(*pieces[i].range, runSeed, pieces[i].begin, pieces[i].end);
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &worker : workers)
    worker.join();
}

void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data, unsigned threads) {
  InitRange range;
  range.param = param;
  range.data = data;
  range.end = elementCount(param.slot.shape).value_or(0);
  initializeParameters({range}, runSeed, threads);
}

} // namespace gacc::rt
