//===- Init.h - parameter initializers ----------------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_INIT_H
#define GACC_RUNTIME_INIT_H

#include "gacc/runtime/ModelInfo.h"

#include <array>
#include <cstdint>

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

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3", 2011; the generator of JAX and of PyTorch on CUDA): 128 random bits
/// that depend only on `counter` and `key`, so that any element of a stream
/// is computed without the ones before it.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// Fills `data` (the parameter's slot) with its initializer, as
/// torch.nn.init defines them, from the parameter's seed mixed with
/// `runSeed`. Element i depends only on those seeds and i (Philox with the
/// counter i / 2: two uniforms of 53 bits per counter, and Box-Muller's two
/// normals from them), so the parameter is filled in parallel on up to
/// `threads` threads (0: one per core) with the same values on any number.
void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data, unsigned threads = 0);

} // namespace gacc::rt

#endif // GACC_RUNTIME_INIT_H
