//===- Init.cpp - parameter initializers ------------------------------------===//

#include "gacc/runtime/Init.h"
#include "gacc/runtime/Tensor.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

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

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    uint64_t product0 = uint64_t{0xD2511F53u} * counter[0];
    uint64_t product1 = uint64_t{0xCD9E8D57u} * counter[2];
    counter = {static_cast<uint32_t>(product1 >> 32) ^ counter[1] ^ key[0],
               static_cast<uint32_t>(product1),
               static_cast<uint32_t>(product0 >> 32) ^ counter[3] ^ key[1],
               static_cast<uint32_t>(product0)};
  }
  return counter;
}

namespace {
/// What fills a parameter: affine maps of uniforms or of normals.
struct Distribution {
  bool normal = false;
  /// value = (normal ? z : 2u - 1) * scale, or `constant` when `fixed`.
  double scale = 1.0;
  bool fixed = false;
  double constant = 0.0;
};

/// The two uniforms in [0, 1) of counter `pair` of the stream `key`.
inline void uniformPair(uint64_t pair, std::array<uint32_t, 2> key,
                        double &u0, double &u1) {
  std::array<uint32_t, 4> bits = philox4x32(
      {static_cast<uint32_t>(pair), static_cast<uint32_t>(pair >> 32), 0, 0},
      key);
  uint64_t w0 = (uint64_t{bits[0]} << 32) | bits[1];
  uint64_t w1 = (uint64_t{bits[2]} << 32) | bits[3];
  u0 = (w0 >> 11) * 0x1.0p-53;
  u1 = (w1 >> 11) * 0x1.0p-53;
}

/// Elements [begin, end) of the parameter (begin even), as `T`, into
/// `out[0, end - begin)`.
template <typename T>
void fillRange(T *out, int64_t begin, int64_t end, std::array<uint32_t, 2> key,
               const Distribution &d) {
  if (d.fixed) {
    std::fill(out, out + (end - begin), static_cast<T>(d.constant));
    return;
  }
  for (int64_t i = begin; i < end; i += 2) {
    double u0, u1, v0, v1;
    uniformPair(static_cast<uint64_t>(i) / 2, key, u0, u1);
    if (d.normal) {
      // 1 - u0 is exact (u0 is on a grid of 2^-53): log, not log1p.
      double radius = std::sqrt(-2.0 * std::log(1.0 - u0));
      double angle = 2.0 * M_PI * u1;
      v0 = radius * std::cos(angle);
      v1 = radius * std::sin(angle);
    } else {
      v0 = 2.0 * u0 - 1.0;
      v1 = 2.0 * u1 - 1.0;
    }
    out[i - begin] = static_cast<T>(v0 * d.scale);
    if (i + 1 < end)
      out[i + 1 - begin] = static_cast<T>(v1 * d.scale);
  }
}

/// Elements [begin, end) of any other type, through doubles.
void fillRange(DType dtype, std::byte *data, int64_t begin, int64_t end,
               std::array<uint32_t, 2> key, const Distribution &d) {
  constexpr int64_t kChunk = 1024;
  double values[kChunk];
  for (int64_t start = begin; start < end; start += kChunk) {
    int64_t stop = std::min(end, start + kChunk);
    fillRange(values, start, stop, key, d);
    for (int64_t i = start; i < stop; ++i)
      storeElement(dtype, data, i, values[i - start]);
  }
}
} // namespace

void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data, unsigned threads) {
  const std::vector<int64_t> &shape = param.slot.shape;
  int64_t count = elementCount(shape).value_or(0);
  // torch.nn.init._calculate_fan_in_and_fan_out for [out, in, k...].
  double receptive = 1.0;
  for (size_t d = 2; d < shape.size(); ++d)
    receptive *= static_cast<double>(shape[d]);
  double fanIn = shape.size() >= 2 ? shape[1] * receptive : 1.0;
  double fanOut = shape.size() >= 2 ? shape[0] * receptive : 1.0;

  double gain = param.scale;
  Distribution d;
  switch (param.init) {
  case InitKind::Zeros:
  case InitKind::Ones:
    d.fixed = true;
    d.constant = param.init == InitKind::Ones ? 1.0 : 0.0;
    break;
  case InitKind::Normal:
    d = {true, param.scale};
    break;
  case InitKind::Uniform:
    d = {false, param.scale};
    break;
  case InitKind::XavierUniform:
    d = {false, gain * std::sqrt(6.0 / (fanIn + fanOut))};
    break;
  case InitKind::XavierNormal:
    d = {true, gain * std::sqrt(2.0 / (fanIn + fanOut))};
    break;
  case InitKind::KaimingUniform:
    d = {false, gain * std::sqrt(3.0 / fanIn)};
    break;
  case InitKind::KaimingNormal:
    d = {true, gain / std::sqrt(fanIn)};
    break;
  }
  uint64_t seed = mixSeeds(param.seed, runSeed);
  std::array<uint32_t, 2> key = {static_cast<uint32_t>(seed),
                                 static_cast<uint32_t>(seed >> 32)};
  auto fill = [&](int64_t begin, int64_t end) {
    switch (param.slot.dtype) {
    case DType::F32:
      return fillRange(reinterpret_cast<float *>(data) + begin, begin, end,
                       key, d);
    case DType::F64:
      return fillRange(reinterpret_cast<double *>(data) + begin, begin, end,
                       key, d);
    default:
      return fillRange(param.slot.dtype, data, begin, end, key, d);
    }
  };

  // Threads for large parameters only; chunks start at even elements (a
  // counter's pair).
  constexpr int64_t kPerThread = int64_t{1} << 16;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  int64_t parts = std::clamp<int64_t>(count / kPerThread, 1, threads);
  int64_t chunk = ((count + parts - 1) / parts + 1) / 2 * 2;
  std::vector<std::thread> workers;
  for (int64_t begin = chunk; begin < count; begin += chunk)
    workers.emplace_back(fill, begin, std::min(count, begin + chunk));
  fill(0, std::min(count, chunk));
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace gacc::rt
