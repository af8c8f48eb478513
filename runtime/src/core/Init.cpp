//===- Init.cpp - parameter initializers ------------------------------------===//

#include "gacc/runtime/Init.h"

#include <cmath>

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

void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data) {
  const std::vector<int64_t> &shape = param.slot.shape;
  int64_t count = elementCount(shape).value_or(0);
  // torch.nn.init._calculate_fan_in_and_fan_out for [out, in, k...].
  double receptive = 1.0;
  for (size_t d = 2; d < shape.size(); ++d)
    receptive *= static_cast<double>(shape[d]);
  double fanIn = shape.size() >= 2 ? shape[1] * receptive : 1.0;
  double fanOut = shape.size() >= 2 ? shape[0] * receptive : 1.0;

  Random random(mixSeeds(param.seed, runSeed));
  double gain = param.scale;
  auto fill = [&](auto sample) {
    for (int64_t i = 0; i < count; ++i)
      storeElement(param.slot.dtype, data, i, sample());
  };
  auto uniformIn = [&](double bound) {
    fill([&] { return (2.0 * random.uniform() - 1.0) * bound; });
  };
  auto normalWith = [&](double std) {
    fill([&] { return random.normal() * std; });
  };
  switch (param.init) {
  case InitKind::Zeros:
    return fill([] { return 0.0; });
  case InitKind::Ones:
    return fill([] { return 1.0; });
  case InitKind::Normal:
    return normalWith(param.scale);
  case InitKind::Uniform:
    return uniformIn(param.scale);
  case InitKind::XavierUniform:
    return uniformIn(gain * std::sqrt(6.0 / (fanIn + fanOut)));
  case InitKind::XavierNormal:
    return normalWith(gain * std::sqrt(2.0 / (fanIn + fanOut)));
  case InitKind::KaimingUniform:
    return uniformIn(gain * std::sqrt(3.0 / fanIn));
  case InitKind::KaimingNormal:
    return normalWith(gain / std::sqrt(fanIn));
  }
}

} // namespace gacc::rt
