//===- StepWorkTest.cpp - the work the tune cost model prices ------------===//
//
// countStepWork on a planned step: its matmuls by shape and calls (the
// accumulation loop's trips included), its other loop nests,
// predictStepSeconds's sum, and the tune search that prices them.
//
//===----------------------------------------------------------------------===//

#include "compiler/ConfigureStep.h"
#include "compiler/InitAll.h"
#include "compiler/plan/MemoryPlan.h"
#include "compiler/plan/Tune.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace {
// x [8, 4] · wᵀ [4, 3]: the forward product, and the weight gradient
// dlᵀ · x (x is an input: no gradient to it).
constexpr const char *kModel = R"mlir(
gacc.param @w : tensor<3x4xf32> = #gacc.init<xavier_uniform, seed = 1>
gacc.input @x : tensor<8x4xf32> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<f32> {
  %x = gacc.load @x : tensor<8x4xf32>
  %y = gacc.load @y : tensor<8xi32>
  %w = gacc.load @w : tensor<3x4xf32>
  %l = gacc.matmul %x, %w transpose_rhs : tensor<8x4xf32>, tensor<3x4xf32> -> tensor<8x3xf32>
  %loss = gacc.cross_entropy mean %l, %y : tensor<8x3xf32>, tensor<8xi32>
  return %loss : tensor<f32>
}
gacc.train_step @t model @m batch_size 8 optimizer #gacc.sgd<lr = 0.1>
)mlir";

/// The planned work of the model's step with `options` (a pipeline string).
mlir::gacc::StepWork plannedWork(const char *options) {
  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kModel, &context);
  EXPECT_TRUE(module);
  auto step = mlir::gacc::TrainStepOp::find(*module, "t");
  mlir::gacc::TrainingPipelineOptions parsed;
  EXPECT_TRUE(mlir::succeeded(parsed.parseFromString(options)));
  EXPECT_TRUE(mlir::succeeded(mlir::gacc::configureTrainStep(step, parsed)));
  mlir::FailureOr<mlir::gacc::MemoryPlan> plan =
      mlir::gacc::planMemory(step, "cpu");
  EXPECT_TRUE(mlir::succeeded(plan));
  return mlir::succeeded(plan) ? plan->work : mlir::gacc::StepWork();
}

/// "BxMxNxK calls" for each matmul, sorted.
std::vector<std::string> shapes(const mlir::gacc::StepWork &work) {
  std::vector<std::string> result;
  for (const mlir::gacc::MatmulWork &matmul : work.matmuls)
    result.push_back(std::to_string(matmul.batch) + "x" +
                     std::to_string(matmul.m) + "x" + std::to_string(matmul.n) +
                     "x" + std::to_string(matmul.k) + " " +
                     std::to_string(matmul.calls));
  std::sort(result.begin(), result.end());
  return result;
}

TEST(StepWork, CountsMatmulsByShapeAndCalls) {
  mlir::gacc::StepWork whole = plannedWork("");
  // Forward [8, 4]·[4, 3]; weight gradient [3, 8]·[8, 4].
  EXPECT_EQ(shapes(whole),
            (std::vector<std::string>{"1x3x4x8 1", "1x8x3x4 1"}));
  EXPECT_GT(whole.loopNests, 0);
  EXPECT_GT(whole.loopBytes, 0);
}

TEST(StepWork, MultipliesByTheAccumulationLoopsTrips) {
  mlir::gacc::StepWork whole = plannedWork("");
  mlir::gacc::StepWork micro = plannedWork("micro-batch=2");
  EXPECT_EQ(shapes(micro),
            (std::vector<std::string>{"1x2x3x4 4", "1x3x4x2 4"}));
  // The loss and its gradient run per micro-batch: more nests in all.
  EXPECT_GT(micro.loopNests, whole.loopNests);
}

TEST(StepWork, PredictedSecondsSumThePricedParts) {
  mlir::gacc::StepWork work = plannedWork("");
  mlir::gacc::KernelCosts costs;
  costs.matmulSeconds = [](const mlir::gacc::MatmulWork &matmul) {
    return matmul.flops() * 1e-9;
  };
  costs.bytesPerSecond = 1e9;
  costs.loopNestSeconds = 1e-6;
  double expected = work.loopBytes / 1e9 + work.loopNests * 1e-6 +
                    2 * 8 * 3 * 4 * 1e-9 + 2 * 3 * 4 * 8 * 1e-9;
  EXPECT_DOUBLE_EQ(mlir::gacc::predictStepSeconds(work, costs), expected);
}

TEST(StepWork, KnowsTheCostsOnlyOfKnownShapes) {
  mlir::gacc::StepWork work = plannedWork("");
  mlir::gacc::KernelCosts costs;
  EXPECT_TRUE(mlir::gacc::knowsStepCosts(work, costs)); // nothing to time
  costs.knowsMatmul = [](const mlir::gacc::MatmulWork &matmul) {
    return matmul.m == 8;
  };
  EXPECT_FALSE(mlir::gacc::knowsStepCosts(work, costs)); // 1x3x4x8 is not
}

/// The tune search's candidates on one thread or several, with costs that
/// do not know the shapes of a micro-batch of 4 (each priced once no other
/// thread plans): the same one first, and those fitted in both (pruning
/// depends on which fits finished first) predicted alike.
TEST(StepWork, TuneSearchIsTheSameOnOneThreadAndSeveral) {
  auto search = [](bool threaded) {
    mlir::DialectRegistry registry;
    mlir::gacc::registerAllDialects(registry);
    mlir::MLIRContext context(registry);
    if (!threaded)
      context.disableMultithreading();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kModel, &context);
    mlir::gacc::TrainStepOp step = mlir::gacc::TrainStepOp::find(*module, "t");
    int64_t wholePeak = mlir::gacc::planMemory(step, "cpu")->peakBytes();
    mlir::gacc::KernelCosts costs;
    costs.matmulSeconds = [](const mlir::gacc::MatmulWork &matmul) {
      return matmul.flops() * 1e-9 + 1e-6;
    };
    costs.knowsMatmul = [](const mlir::gacc::MatmulWork &matmul) {
      return matmul.m != 4;
    };
    // Options and predicted seconds, in order.
    std::vector<std::pair<std::string, double>> fitted;
    for (const mlir::gacc::TuneCandidate &candidate :
         mlir::gacc::planTuneCandidates(*module, "t", "", {}, wholePeak - 1,
                                        costs))
      if (candidate.fits)
        fitted.emplace_back(candidate.optionsText(),
                            candidate.predictedSeconds);
    return fitted;
  };
  auto serial = search(false), threaded = search(true);
  ASSERT_FALSE(serial.empty());
  ASSERT_FALSE(threaded.empty());
  EXPECT_EQ(serial.front(), threaded.front());
  int common = 0;
  for (const auto &[options, seconds] : serial)
    for (const auto &[otherOptions, otherSeconds] : threaded)
      if (options == otherOptions) {
        EXPECT_EQ(seconds, otherSeconds) << options;
        ++common;
      }
  EXPECT_GT(common, 1);
}
} // namespace
