//===- Init.h - parameter initializers ----------------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_INIT_H
#define GACC_RUNTIME_INIT_H

#include "gacc/runtime/ModelInfo.h"

#include <array>
#include <cstdint>
#include <vector>

namespace gacc::rt {

/// A small, fast, reproducible generator (splitmix64), the same on every
/// platform, so a seed gives the same data order everywhere (Dataset.cpp's
/// shuffles and synthetic batches). Parameters come from Philox instead.
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
/// 3", SC 2011; the generator of JAX and of PyTorch on CUDA): 128 random
/// bits that depend only on `counter` and `key`, so any part of a stream is
/// computed without the rest.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// Elements [begin, end) of a parameter's whole (unsharded, flattened)
/// tensor, to write from `data` on in `param.slot.dtype` (`param.slot` is
/// the whole tensor's), and from `copy` on in `copyType` too when `copy` is
/// set: a 16-bit weight beside its f32 master gets the master's rounding.
struct InitRange {
  Parameter param;
  std::byte *data = nullptr;
  int64_t begin = 0, end = 0;
  std::byte *copy = nullptr;
  DType copyType = DType::BF16;
};

/// Fills `ranges` with their parameters' initializers, as torch.nn.init
/// defines them, mixing each parameter's seed with `runSeed`, on up to
/// `threads` threads (0: one per core). Element i of a parameter depends on
/// the seeds and i only (docs/artifact.md, "Arenas and initial
/// parameters"): the same on any number of threads, in any shard, and on
/// every machine.
void initializeParameters(const std::vector<InitRange> &ranges,
                          uint64_t runSeed, unsigned threads = 0);

/// Fills `data` (the whole of `param.slot`) with its initializer.
void initializeParameter(const Parameter &param, uint64_t runSeed,
                         std::byte *data, unsigned threads = 0);

} // namespace gacc::rt

#endif // GACC_RUNTIME_INIT_H
