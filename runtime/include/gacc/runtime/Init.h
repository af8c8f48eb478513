//===- Init.h - parameter initializers ----------------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_INIT_H
#define GACC_RUNTIME_INIT_H

#include "gacc/runtime/ModelInfo.h"

namespace gacc::rt {

/// A small, fast, reproducible generator (splitmix64), the same on every
/// platform, so a seed gives the same parameters and data everywhere.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform();
  /// Standard normal (Box-Muller).
  double normal();
  /// Uniform integer in [0, bound).
  uint64_t below(uint64_t bound) { return next() % bound; }

private:
  uint64_t state_;
};

/// Mixes several seeds into one (for per-parameter and per-step streams).
uint64_t mixSeeds(uint64_t a, uint64_t b);

/// Fills `data` (the parameter's slot) with its initializer, as
/// torch.nn.init defines them, from the parameter's seed mixed with
/// `runSeed`.
void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data);

} // namespace gacc::rt

#endif // GACC_RUNTIME_INIT_H
