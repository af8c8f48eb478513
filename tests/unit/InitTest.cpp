//===- InitTest.cpp - Philox parameter initialization -----------------------===//
//
// Philox4x32-10 against Random123's known answers; fills whose elements do
// not depend on the threads, the shard or the element type; the
// distributions' moments; and a trainer that initializes without clearing
// fresh memory but clears what a step wrote.
//
//===----------------------------------------------------------------------===//

#include "gacc/runtime/Init.h"
#include "gacc/runtime/Tensor.h"
#include "gacc/runtime/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace gacc::rt;

namespace {
using Block = std::array<uint32_t, 4>;

TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

Parameter parameter(InitKind init, std::vector<int64_t> shape,
                    double scale = 1.0, DType dtype = DType::F32) {
  Parameter param;
  param.slot.dtype = dtype;
  param.slot.shape = std::move(shape);
  param.init = init;
  param.scale = scale;
  param.seed = 7;
  return param;
}

template <typename T = float>
std::vector<T> fill(const Parameter &param, unsigned threads,
                    uint64_t runSeed = 1) {
  std::vector<T> values(*elementCount(param.slot.shape));
  initializeParameter(param, runSeed,
                      reinterpret_cast<std::byte *>(values.data()), threads);
  return values;
}

/// The 32 random bits behind element i (docs/artifact.md): word (i mod 64)
/// div 16 of counter 16·(i div 64) + i mod 16.
uint32_t wordOf(const Parameter &param, uint64_t runSeed, int64_t i) {
  uint64_t seed = mixSeeds(param.seed, runSeed);
  uint64_t counter = 16 * (i / 64) + i % 16;
  Block words = philox4x32({uint32_t(counter), uint32_t(counter >> 32), 0, 0},
                           {uint32_t(seed), uint32_t(seed >> 32)});
  return words[(i % 64) / 16];
}

TEST(Initializers, UniformElementsAreTheirPhiloxWords) {
  Parameter param = parameter(InitKind::Uniform, {3, 333});
  std::vector<float> values = fill(param, 2, /*runSeed=*/5);
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    ASSERT_EQ(values[i], float(wordOf(param, 5, i) >> 8) * 0x1.0p-23f - 1.0f)
        << "element " << i;
}

TEST(Initializers, NormalIsBoxMullerOfThePhiloxWords) {
  // Pairs of words (0, 1) and (2, 3) of a counter: the radius from the
  // first, the angle from the second; f32 within a few ulp of f64.
  Parameter param = parameter(InitKind::Normal, {1000});
  std::vector<float> values = fill(param, 1, /*runSeed=*/3);
  for (int64_t i = 0; i < int64_t(values.size()); ++i) {
    int64_t word = (i % 64) / 16, first = i - (word % 2) * 16;
    double u = double((wordOf(param, 3, first) >> 8) + 1) * 0x1.0p-24;
    double turns = double(wordOf(param, 3, first + 16) >> 8) * 0x1.0p-24;
    double radius = std::sqrt(-2.0 * std::log(u));
    double expected = radius * (word % 2 ? std::sin(2 * M_PI * turns)
                                         : std::cos(2 * M_PI * turns));
    ASSERT_NEAR(values[i], expected, 2e-6 * std::max(1.0, radius))
        << "element " << i;
  }
}

TEST(Initializers, ElementsDoNotDependOnTheThreads) {
  // More than one 2^16-element piece, and not a whole number of blocks.
  for (InitKind init : {InitKind::Normal, InitKind::XavierUniform}) {
    Parameter param = parameter(init, {1001, 777});
    std::vector<float> one = fill(param, 1);
    EXPECT_EQ(one, fill(param, 2));
    EXPECT_EQ(one, fill(param, 7));
    EXPECT_NE(one, fill(param, 1, /*runSeed=*/2));
  }
}

TEST(Initializers, AShardIsASliceOfTheWhole) {
  Parameter param = parameter(InitKind::Normal, {100, 1000}, 0.02);
  std::vector<float> whole = fill(param, 2);
  // An odd range, as a shard of 3 ranks, with its bf16 weight beside it.
  int64_t begin = 33333, end = 66666;
  std::vector<float> shard(end - begin);
  std::vector<uint16_t> weight(end - begin);
  InitRange range;
  range.param = param;
  range.data = reinterpret_cast<std::byte *>(shard.data());
  range.begin = begin;
  range.end = end;
  range.copy = reinterpret_cast<std::byte *>(weight.data());
  range.copyType = DType::BF16;
  initializeParameters({range}, 1, 3);
  for (int64_t i = begin; i < end; ++i) {
    ASSERT_EQ(shard[i - begin], whole[i]) << "element " << i;
    ASSERT_EQ(weight[i - begin], toBF16(whole[i])) << "element " << i;
  }
}

TEST(Initializers, OtherTypesGetTheF32ValuesRounded) {
  Parameter single = parameter(InitKind::KaimingNormal, {40, 50});
  std::vector<float> values = fill(single, 2);
  Parameter wide = single, half = single;
  wide.slot.dtype = DType::F64;
  half.slot.dtype = DType::F16;
  std::vector<double> doubles = fill<double>(wide, 2);
  std::vector<uint16_t> halves = fill<uint16_t>(half, 2);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(doubles[i], double(values[i]));
    ASSERT_EQ(halves[i], toF16(values[i]));
  }
  EXPECT_EQ(fill(parameter(InitKind::Ones, {5}), 1),
            std::vector<float>(5, 1.0f));
}

std::pair<double, double> meanAndStd(const std::vector<float> &values) {
  double sum = 0, squares = 0;
  for (float v : values) {
    sum += v;
    squares += double(v) * v;
  }
  double mean = sum / values.size();
  return {mean, std::sqrt(squares / values.size() - mean * mean)};
}

TEST(Initializers, NormalHasItsMoments) {
  // 10^6 samples: the mean within 5 standard errors, the std within 0.5%,
  // and 68.27% of them within one std.
  std::vector<float> values =
      fill(parameter(InitKind::Normal, {1000, 1000}, 0.02), 2);
  auto [mean, std] = meanAndStd(values);
  EXPECT_NEAR(mean, 0.0, 5 * 0.02 / 1000);
  EXPECT_NEAR(std, 0.02, 0.02 * 0.005);
  int64_t within = 0;
  for (float v : values)
    within += std::fabs(v) < 0.02f;
  EXPECT_NEAR(within / 1e6, 0.682689, 5 * 0.000466);
}

TEST(Initializers, UniformHasItsMoments) {
  // Kaiming uniform on [out, in]: U(-b, b), b = sqrt(3 / in), std b / √3.
  std::vector<float> values =
      fill(parameter(InitKind::KaimingUniform, {1000, 1000}), 2);
  auto [mean, std] = meanAndStd(values);
  double bound = std::sqrt(3.0 / 1000);
  EXPECT_NEAR(mean, 0.0, 5 * bound / std::sqrt(3.0) / 1000);
  EXPECT_NEAR(std, bound / std::sqrt(3.0), bound * 0.005);
  for (float v : values)
    ASSERT_LE(std::fabs(v), float(bound));
}

/// A state arena of a normal parameter, a zeros one, and optimizer state
/// after them.
ModelInfo smallModel() {
  ModelInfo model;
  Parameter w = parameter(InitKind::Normal, {8, 4}, 0.5);
  w.slot.name = "w";
  Parameter b = parameter(InitKind::Zeros, {8});
  b.slot.name = "b";
  b.slot.offset = 128;
  model.params = {w, b};
  model.stateBytes = 256;
  model.ioBytes = 16;
  return model;
}

/// The state as the last eval found it; the eval then writes 0xff over all
/// of it, as a step writes its state.
std::vector<std::byte> seenState;
void scribble(ArenaDescriptor *state, ArenaDescriptor *, ArenaDescriptor *,
              ArenaDescriptor *) {
  auto *bytes = static_cast<std::byte *>(state->aligned);
  seenState.assign(bytes, bytes + state->size);
  std::memset(bytes, 0xff, state->size);
}

TEST(Trainer, InitializingAgainClearsWhatAStepWrote) {
  CompiledStep compiled;
  compiled.eval = scribble;
  Trainer trainer(smallModel(), compiled);
  ASSERT_TRUE(trainer.initialize(3).ok());
  ASSERT_TRUE(trainer.initialize(3).ok()); // nothing to do
  double loss;
  std::vector<Tensor> outputs;
  ASSERT_TRUE(trainer.evaluate(loss, outputs).ok());
  std::vector<std::byte> initialized = seenState;
  // The parameter, then zeros: the bias and the optimizer state.
  std::vector<float> w = fill(trainer.model().params[0], 1, /*runSeed=*/3);
  ASSERT_EQ(initialized.size(), 256u);
  EXPECT_EQ(std::memcmp(initialized.data(), w.data(), 128), 0);
  EXPECT_EQ(
      std::vector<std::byte>(initialized.begin() + 128, initialized.end()),
      std::vector<std::byte>(128, std::byte{0}));
  // The same seed again after the step wrote the state: initialized again.
  ASSERT_TRUE(trainer.initialize(3).ok());
  ASSERT_TRUE(trainer.evaluate(loss, outputs).ok());
  EXPECT_EQ(seenState, initialized);
}

// Faulting the arenas in (for a measurement that times the first step)
// leaves the initialized state as it was.
TEST(Trainer, PrefaultingKeepsTheState) {
  CompiledStep compiled;
  compiled.eval = scribble;
  double loss;
  std::vector<Tensor> outputs;
  Trainer reference(smallModel(), compiled);
  ASSERT_TRUE(reference.initialize(3).ok());
  ASSERT_TRUE(reference.evaluate(loss, outputs).ok());
  std::vector<std::byte> initialized = seenState;
  Trainer trainer(smallModel(), compiled);
  ASSERT_TRUE(trainer.initialize(3).ok());
  trainer.prefault();
  ASSERT_TRUE(trainer.evaluate(loss, outputs).ok());
  EXPECT_EQ(seenState, initialized);
}

/// A rank of 2, for the shards it keeps (no collectives).
class OneOfTwo : public Communicator {
public:
  explicit OneOfTwo(int rank) : rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  Status allReduce(void *, int64_t, DType, Reduction) override {
    return Status::error("unused");
  }
  Status reduceScatter(const void *, void *, int64_t, DType,
                       Reduction) override {
    return Status::error("unused");
  }
  Status allGather(const void *, void *, int64_t, DType) override {
    return Status::error("unused");
  }
  Status broadcast(void *, int64_t, DType, int) override {
    return Status::error("unused");
  }
  [[noreturn]] void abort(const std::string &) override { std::abort(); }

private:
  int rank_;
};

TEST(Trainer, ARankInitializesItsShardsAndTheirPadding) {
  // ZeRO's shards of 6 elements of a 10-element bf16 weight and its f32
  // master: rank 0 keeps elements 0-5, rank 1 elements 6-9 and 2 of
  // padding.
  ModelInfo model;
  model.ranks = 2;
  Parameter w = parameter(InitKind::Normal, {6}, 0.5, DType::BF16);
  w.slot.name = "w";
  w.slot.unshardedShape = {10};
  w.slot.offset = 64;
  w.master = w.slot;
  w.master->dtype = DType::F32;
  w.master->offset = 0;
  model.params = {w};
  model.stateBytes = 128;
  model.ioBytes = 16;
  CompiledStep compiled;
  compiled.eval = scribble;
  Parameter whole = w;
  whole.slot.shape = {10};
  whole.slot.dtype = DType::F32;
  std::vector<float> values = fill(whole, 1, /*runSeed=*/3);
  auto expectShard = [&](Trainer &trainer, int64_t begin, int64_t end) {
    double loss;
    std::vector<Tensor> outputs;
    ASSERT_TRUE(trainer.evaluate(loss, outputs).ok());
    std::vector<float> master(6);
    std::vector<uint16_t> weight(6);
    std::memcpy(master.data(), seenState.data(), 24);
    std::memcpy(weight.data(), seenState.data() + 64, 12);
    for (int64_t i = 0; i < 6; ++i) {
      float value = begin + i < end ? values[begin + i] : 0.0f;
      EXPECT_EQ(master[i], value) << "element " << begin + i;
      EXPECT_EQ(weight[i], toBF16(value)) << "element " << begin + i;
    }
  };
  Trainer first(model, compiled);
  OneOfTwo zero(0), one(1);
  ASSERT_TRUE(first.setCommunicator(zero).ok());
  ASSERT_TRUE(first.initialize(3).ok());
  expectShard(first, 0, 6);
  // openTrainer initializes before the rank is known, as rank 0; then the
  // rank's own shards replace those, and rank 0's values in the padding
  // are cleared.
  Trainer trainer(model, compiled);
  ASSERT_TRUE(trainer.initialize(3).ok());
  ASSERT_TRUE(trainer.setCommunicator(one).ok());
  ASSERT_TRUE(trainer.initialize(3).ok());
  expectShard(trainer, 6, 10);
}
} // namespace
