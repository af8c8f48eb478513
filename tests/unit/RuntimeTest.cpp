//===- RuntimeTest.cpp - optimizer scalars, npy, initializers, data ---------===//

#include "gacc/runtime/CpuMemory.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/Init.h"
#include "gacc/runtime/Npy.h"
#include "gacc/runtime/Optimizer.h"
#include "gacc/runtime/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace gacc::rt;

TEST(Schedule, ConstantIsTheBaseRate) {
  ScheduleConfig constant;
  EXPECT_EQ(scheduledLearningRate(constant, 0.1, 0), 0.1);
  EXPECT_EQ(scheduledLearningRate(constant, 0.1, 12345), 0.1);
}

TEST(Schedule, WarmupThenCosine) {
  ScheduleConfig cosine{ScheduleConfig::WarmupCosine, 10, 110, 0.01};
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 0), 0.1);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 9), 1.0);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 10), 1.0);
  // Halfway through the decay: the mean of lr and min_lr.
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 60), 0.505);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 110), 0.01);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(cosine, 1.0, 1000), 0.01);
}

TEST(Schedule, WarmupThenLinearAsTransformers) {
  // get_linear_schedule_with_warmup's decay: max(0, (total - s) / (total -
  // warmup)) of the base rate.
  ScheduleConfig linear{ScheduleConfig::WarmupPolynomial, 10, 110};
  EXPECT_DOUBLE_EQ(scheduledLearningRate(linear, 1.0, 4), 0.5);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(linear, 1.0, 10), 1.0);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(linear, 1.0, 35), 0.75);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(linear, 1.0, 110), 0.0);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(linear, 1.0, 500), 0.0);
}

TEST(Schedule, PolynomialDecayToItsEndRate) {
  // get_polynomial_decay_schedule_with_warmup: (lr - end)·(1 - p)^power +
  // end, then end.
  ScheduleConfig polynomial{ScheduleConfig::WarmupPolynomial, 0, 100, 1e-7,
                            2.0};
  EXPECT_DOUBLE_EQ(scheduledLearningRate(polynomial, 1e-3, 0), 1e-3);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(polynomial, 1e-3, 50),
                   (1e-3 - 1e-7) * 0.25 + 1e-7);
  EXPECT_DOUBLE_EQ(scheduledLearningRate(polynomial, 1e-3, 100), 1e-7);
}

namespace {
/// The value of the scalar `name` of `optimizer` at step `step`.
double scalar(const OptimizerConfig &optimizer, double lr, uint64_t step,
              const std::string &name) {
  StepScalars scalars;
  EXPECT_TRUE(optimizerScalars(optimizer, lr, step, scalars).ok());
  for (const auto &[known, value] : scalars)
    if (known == name)
      return value;
  ADD_FAILURE() << "no scalar " << name;
  return 0.0;
}

OptimizerConfig adamw(double weightDecay) {
  return {"adamw", 1e-3,
          {{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
           {"weight_decay", weightDecay}}};
}
} // namespace

TEST(OptimizerScalars, AdamWBiasCorrectionAsTorch) {
  OptimizerConfig optimizer = adamw(0.1);
  // Step t = 1.
  EXPECT_DOUBLE_EQ(scalar(optimizer, 1e-3, 0, "weight_decay_factor"),
                   1.0 - 1e-3 * 0.1);
  EXPECT_DOUBLE_EQ(scalar(optimizer, 1e-3, 0, "step_size"), 1e-3 / (1.0 - 0.9));
  EXPECT_DOUBLE_EQ(scalar(optimizer, 1e-3, 0, "bias_correction2_sqrt"),
                   std::sqrt(1.0 - 0.999));
  // t = 10.
  EXPECT_DOUBLE_EQ(scalar(optimizer, 1e-3, 9, "step_size"),
                   1e-3 / (1.0 - std::pow(0.9, 10)));
}

TEST(OptimizerScalars, SgdFirstStepCopiesTheGradient) {
  OptimizerConfig sgd{"sgd", 0.5, {{"momentum", 0.9}, {"dampening", 0.1}}};
  EXPECT_EQ(scalar(sgd, 0.5, 0, "lr"), 0.5);
  EXPECT_EQ(scalar(sgd, 0.5, 0, "momentum_coefficient"), 0.0); // buffer = g
  EXPECT_EQ(scalar(sgd, 0.5, 0, "gradient_coefficient"), 1.0);
  EXPECT_EQ(scalar(sgd, 0.5, 3, "momentum_coefficient"), 0.9);
  EXPECT_DOUBLE_EQ(scalar(sgd, 0.5, 3, "gradient_coefficient"), 0.9);
}

TEST(OptimizerScalars, AdafactorRelativeStepAsTransformers) {
  auto adafactor = [](bool relativeStep, bool warmupInit) {
    return OptimizerConfig{"adafactor",
                           relativeStep ? 0.0 : 0.5,
                           {{"decay_rate", -0.8},
                            {"relative_step", relativeStep ? 1.0 : 0.0},
                            {"warmup_init", warmupInit ? 1.0 : 0.0}}};
  };
  // min(1e-2, 1/sqrt(t)): 1e-2 until t = 10^4.
  EXPECT_DOUBLE_EQ(scalar(adafactor(true, false), 0.0, 0, "step_size"), 1e-2);
  EXPECT_DOUBLE_EQ(scalar(adafactor(true, false), 0.0, 39999, "step_size"),
                   1.0 / 200.0);
  // warmup_init: min(1e-6·t, 1/sqrt(t)).
  EXPECT_DOUBLE_EQ(scalar(adafactor(true, true), 0.0, 9, "step_size"), 1e-5);
  // Without relative_step, the scheduled rate.
  EXPECT_DOUBLE_EQ(scalar(adafactor(false, false), 0.25, 9, "step_size"), 0.25);
  // 1 - t^-0.8: 0 on the first step, which keeps g² + eps1 alone.
  EXPECT_DOUBLE_EQ(scalar(adafactor(true, false), 0.0, 0, "beta2t"), 0.0);
  EXPECT_DOUBLE_EQ(scalar(adafactor(true, false), 0.0, 9, "beta2t"),
                   1.0 - std::pow(10.0, -0.8));
}

TEST(OptimizerScalars, EveryOptimizerHasTheScheduledRate) {
  OptimizerConfig other{"an_optimizer_without_a_formula", 0.1, {}};
  EXPECT_EQ(scalar(other, 0.05, 7, "lr"), 0.05);
  EXPECT_EQ(scalar(adamw(0.0), 0.05, 7, "lr"), 0.05);
}

TEST(OptimizerScalars, MissingHyperparametersAreNamed) {
  OptimizerConfig sgd{"sgd", 0.5, {{"momentum", 0.9}}};
  StepScalars scalars;
  EXPECT_EQ(optimizerScalars(sgd, 0.5, 0, scalars).message(),
            "optimizer 'sgd' has no hyperparameter 'dampening'");
}

TEST(OptimizerScalars, WrittenIntoTheirSlotsByName) {
  ModelInfo model;
  model.optimizer = adamw(0.1);
  // In any order, of any float type; the io bytes around them untouched.
  model.hyper = {{"step_size", DType::F64, {}, 8},
                 {"lr", DType::F32, {}, 0},
                 {"bias_correction2_sqrt", DType::F32, {}, 4}};
  alignas(8) std::byte io[24];
  std::memset(io, 0xab, sizeof(io));
  ASSERT_TRUE(writeOptimizerScalars(model, 2e-3, 0, io).ok());
  EXPECT_EQ(loadElement(DType::F32, io, 0), static_cast<float>(2e-3));
  EXPECT_EQ(loadElement(DType::F32, io + 4, 0),
            static_cast<float>(std::sqrt(1.0 - 0.999)));
  EXPECT_EQ(loadElement(DType::F64, io + 8, 0), 2e-3 / (1.0 - 0.9));
  EXPECT_EQ(io[16], std::byte{0xab});
  EXPECT_TRUE(checkOptimizerScalars(model).ok());

  model.hyper.push_back({"momentum_coefficient", DType::F32, {}, 16});
  EXPECT_EQ(writeOptimizerScalars(model, 2e-3, 0, io).message(),
            "the step reads the per-step scalar 'momentum_coefficient', which "
            "this runtime does not compute for optimizer 'adamw'");
  EXPECT_FALSE(checkOptimizerScalars(model).ok());
}

TEST(Npy, RoundTripAndErrors) {
  Tensor tensor(DType::F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    tensor.dataAs<float>()[i] = i * 0.5f;
  std::string image = serializeNpy(tensor);
  Tensor parsed;
  Status status = parseNpy(reinterpret_cast<const std::byte *>(image.data()),
                           image.size(), "t.npy", parsed);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(parsed, tensor);

  for (size_t size = 0; size < image.size(); ++size)
    EXPECT_FALSE(parseNpy(reinterpret_cast<const std::byte *>(image.data()),
                          size, "t.npy", parsed)
                     .ok())
        << size;
  std::string fortran = image;
  size_t at = fortran.find("False");
  fortran.replace(at, 5, "True ");
  status = parseNpy(reinterpret_cast<const std::byte *>(fortran.data()),
                    fortran.size(), "t.npy", parsed);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Fortran"), std::string::npos);
}

// The header is the dict literal NumPy writes, parsed strictly: text that
// only contains the keys somewhere (as once a fuzzed input did, with digits
// of garbage read as dimensions) is an error, never a guess.
TEST(Npy, HeaderIsParsedStrictly) {
  auto parse = [](const std::string &header, size_t dataBytes, Tensor &out) {
    std::string image("\x93NUMPY\x01\x00", 8);
    image.push_back(static_cast<char>(header.size() & 0xff));
    image.push_back(static_cast<char>(header.size() >> 8));
    image += header + std::string(dataBytes, '\0');
    return parseNpy(reinterpret_cast<const std::byte *>(image.data()),
                    image.size(), "t.npy", out);
  };
  Tensor parsed;
  EXPECT_TRUE(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n",
                    12, parsed).ok());
  EXPECT_EQ(parsed.shape(), std::vector<int64_t>{3});
  EXPECT_TRUE(parse("{'shape': (2, 0), 'fortran_order': False, 'descr': '|b1'}",
                    0, parsed).ok());
  EXPECT_EQ(parsed.shape(), (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(parse("{'descr': '<i8', 'fortran_order': False, 'shape': ()}  \n",
                    8, parsed).ok());
  EXPECT_TRUE(parsed.shape().empty());

  for (const char *bad : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (x3, 1)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3 1)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}",
           "{'descr': '<f4', 'fortran_order': False}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
           "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
           "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} trailing",
           "'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
       }) {
    Status status = parse(bad, 12, parsed);
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find("malformed header"), std::string::npos)
        << status.message();
  }
}

TEST(Elements, HalfPrecisionRoundsToNearestEven) {
  std::byte buffer[2];
  storeElement(DType::F16, buffer, 0, 1.0 + 1.0 / 4096); // halfway: rounds down
  EXPECT_EQ(loadElement(DType::F16, buffer, 0), 1.0);
  storeElement(DType::F16, buffer, 0, 65520.0); // overflows to infinity
  EXPECT_TRUE(std::isinf(loadElement(DType::F16, buffer, 0)));
  storeElement(DType::BF16, buffer, 0, 3.140625);
  EXPECT_EQ(loadElement(DType::BF16, buffer, 0), 3.140625);
  storeElement(DType::F16, buffer, 0, 5.960464477539063e-08); // smallest
  EXPECT_EQ(loadElement(DType::F16, buffer, 0), 5.960464477539063e-08);
}

namespace {
ModelInfo twoInputModel() {
  ModelInfo model;
  model.batchSize = 4;
  Input x{{"x", DType::F32, {4, 3}, 0}, InputKind::Features};
  Input y{{"y", DType::I32, {4}, 64}, InputKind::Labels, 5};
  model.inputs = {x, y};
  return model;
}
} // namespace

TEST(Initializers, KaimingUniformBoundAndDeterminism) {
  Parameter param{{"w", DType::F32, {64, 100}, 0}, InitKind::KaimingUniform,
                  1.0, 3};
  Tensor a(DType::F32, {64, 100}), b(DType::F32, {64, 100});
  initializeParameter(param, 0, a.data());
  initializeParameter(param, 0, b.data());
  EXPECT_EQ(a, b);
  double bound = std::sqrt(3.0 / 100), maxSeen = 0;
  for (int i = 0; i < 6400; ++i)
    maxSeen = std::max(maxSeen, std::fabs(double(a.dataAs<float>()[i])));
  EXPECT_LE(maxSeen, bound);
  EXPECT_GT(maxSeen, 0.95 * bound);
  initializeParameter(param, 1, b.data());
  EXPECT_FALSE(a == b) << "the run seed changes the draw";
}

TEST(SyntheticData, LabelsInRangeAndStepsDeterministic) {
  ModelInfo model = twoInputModel();
  auto data = Dataset::synthetic(model, 7);
  Batch first, again, next;
  ASSERT_TRUE(data->batch(3, first).ok());
  ASSERT_TRUE(data->batch(3, again).ok());
  ASSERT_TRUE(data->batch(4, next).ok());
  EXPECT_EQ(first.at("x"), again.at("x"));
  EXPECT_FALSE(first.at("x") == next.at("x"));
  for (int i = 0; i < 4; ++i) {
    int32_t label = first.at("y").dataAs<int32_t>()[i];
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 5);
  }
}

// A compiled step whose heap has no room: the allocation returns to the
// trainer instead of handing null to code that does not check it, the call
// fails with an error naming the bytes, and the trainer, its state now
// undefined, refuses every later call.
TEST(Trainer, StepWithoutHeapRoomIsAClearError) {
  ModelInfo model;
  model.unplannedBytes = 4096;
  CompiledStep compiled;
  compiled.eval = [](ArenaDescriptor *, ArenaDescriptor *, ArenaDescriptor *,
                     ArenaDescriptor *) {
    gacc_cpu_malloc(size_t(1) << 62);
    std::abort(); // compiled code would go on with null
  };
  Trainer trainer(model, compiled);
  ASSERT_TRUE(trainer.initialize(0).ok());
  double loss;
  std::vector<Tensor> outputs;
  Status status = trainer.evaluate(loss, outputs);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "out of memory in the step: a temporary of " +
                std::to_string(size_t(1) << 62) +
                " bytes that the memory plan leaves to the heap could not be "
                "allocated (the plan: 0 bytes of arenas, up to 4096 on the "
                "heap); the step stopped midway and this trainer's state is "
                "undefined: open it again (from a checkpoint) to go on");
  EXPECT_EQ(trainer.evaluate(loss, outputs).message(), status.message());
}

// A plan whose arenas do not fit in memory: initialize() says so, naming
// the bytes the plan needs, and steps refuse to run; nothing crashes.
TEST(Trainer, ArenasThatDoNotFitAreAClearError) {
  ModelInfo model;
  model.stateBytes = int64_t(1) << 60;
  model.workspaceBytes = 1024;
  Trainer trainer(model, CompiledStep{});
  Status status = trainer.initialize(0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "the step's arenas do not fit in memory: the plan needs " +
                std::to_string((int64_t(1) << 60) + 1024) + " bytes (state " +
                std::to_string(int64_t(1) << 60) +
                ", batch 0, io 0, workspace 1024)");
  StepResult result;
  EXPECT_FALSE(trainer.step(result).ok());
}
