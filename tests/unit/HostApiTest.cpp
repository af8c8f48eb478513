//===- HostApiTest.cpp - the JIT and artifacts give the same trainer --------===//
//
// compileTrainer (the JIT, from MLIR text) and openTrainer (an artifact that
// compileArtifact wrote) train the MLP identically: the same losses and
// bitwise the same parameters after 5 steps on the same batches. Bad MLIR
// comes back as a Status with the located diagnostic. A trainer on device
// arenas (the emulated device) trains as one on host arenas. The training
// options (TrainingPipelineOptions) configure the step as its attributes
// do, from C++, from a pipeline string and from the C entry point.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/aot/Aot.h"
#include "compiler/jit/Jit.h"
#include "compiler/jit/c_api.h"
#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Trainer.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <regex>

using namespace gacc::rt;

namespace {
std::string readExample(const std::string &name) {
  std::string text;
  EXPECT_TRUE(readFile(std::string(GACC_SOURCE_DIR) + "/examples/" + name, text)
                  .ok());
  return text;
}

std::vector<double> train(Trainer &trainer, int steps) {
  std::unique_ptr<Dataset> data =
      Dataset::synthetic(trainer.model(), /*seed=*/3);
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    Batch batch;
    EXPECT_TRUE(data->batch(step, batch).ok());
    EXPECT_TRUE(trainer.setBatch(batch).ok());
    StepResult result;
    EXPECT_TRUE(trainer.step(result).ok());
    losses.push_back(result.loss);
  }
  return losses;
}

/// `trainer`'s parameters and optimizer state, as a checkpoint keeps them.
TensorFile state(const Trainer &trainer) { return trainer.checkpoint(); }

void expectBitwiseEqual(const TensorFile &a, const TensorFile &b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto &[name, tensor] : a.tensors) {
    const Tensor &other = b.tensors.at(name);
    ASSERT_EQ(tensor.byteSize(), other.byteSize()) << name;
    EXPECT_EQ(0, std::memcmp(tensor.data(), other.data(), tensor.byteSize()))
        << name;
  }
}
} // namespace

TEST(HostApi, JitAndArtifactTrainIdentically) {
  std::string text = readExample("mlp.mlir");
  mlir::gacc::TrainingPipelineOptions options;
  std::unique_ptr<Trainer> jit;
  Status status = mlir::gacc::compileTrainer(text, "mlp.mlir", options, jit);
  ASSERT_TRUE(status.ok()) << status.message();

  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  std::string unused;
  mlir::FailureOr<Artifact> artifact = mlir::gacc::compileArtifact(
      *module, options, mlir::gacc::EmitKind::Artifact, unused);
  ASSERT_TRUE(mlir::succeeded(artifact));
  std::string path = ::testing::TempDir() + "/host_api_mlp.gacc";
  ASSERT_TRUE(writeArtifact(path, *artifact).ok());
  std::unique_ptr<Trainer> aot;
  status = openTrainer(path, 0, aot);
  ASSERT_TRUE(status.ok()) << status.message();
  std::remove(path.c_str());

  EXPECT_EQ(train(*jit, 5), train(*aot, 5));
  expectBitwiseEqual(jit->parameters(), aot->parameters());
}

TEST(HostApi, BadMlirIsALocatedError) {
  std::unique_ptr<Trainer> trainer;
  Status status = mlir::gacc::compileTrainer(
      "module { gacc.bogus }", "bad.mlir",
      mlir::gacc::TrainingPipelineOptions(), trainer);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("bad.mlir:1:10: error:"), std::string::npos)
      << status.message();
  EXPECT_FALSE(trainer);
}

// A trainer whose arenas are on a device (the emulated one: separate,
// poisoned buffers) trains as one on host arenas, with the host's reads and
// writes in between: parameters read after steps come from the device,
// parameters written between steps reach it, and so does a restored
// checkpoint (in f16, with its loss scale).
TEST(HostApi, DeviceArenasFollowTheHost) {
  for (const char *precision : {"f32", "f16"}) {
    SCOPED_TRACE(precision);
    std::string text = readExample("mlp.mlir");
    if (std::string(precision) == "f16")
      text = std::regex_replace(text, std::regex("weight_decay = 0.0>"),
                                "weight_decay = 0.0> precision f16");
    std::unique_ptr<Trainer> host, device;
    mlir::gacc::TrainingPipelineOptions options;
    ASSERT_TRUE(
        mlir::gacc::compileTrainer(text, "mlp.mlir", options, host).ok());
    ASSERT_TRUE(
        mlir::gacc::compileTrainer(text, "mlp.mlir", options, device).ok());
    ASSERT_TRUE(device->placeArenasOn(makeEmulatedDeviceMemory()).ok());
    EXPECT_FALSE(device->placeArenasOn(makeEmulatedDeviceMemory()).ok());

    EXPECT_EQ(train(*host, 2), train(*device, 2));
    expectBitwiseEqual(state(*host), state(*device));
    Tensor weight;
    ASSERT_TRUE(host->parameter("fc1.bias", weight).ok());
    for (int64_t i = 0; i < weight.numElements(); ++i)
      weight.dataAs<float>()[i] = 0.01f * static_cast<float>(i % 7);
    ASSERT_TRUE(host->setParameter("fc1.bias", weight).ok());
    ASSERT_TRUE(device->setParameter("fc1.bias", weight).ok());
    EXPECT_EQ(train(*host, 2), train(*device, 2));
    expectBitwiseEqual(state(*host), state(*device));

    TensorFile early = state(*host);
    EXPECT_EQ(train(*host, 1), train(*device, 1));
    ASSERT_TRUE(host->restore(early, "early").ok());
    ASSERT_TRUE(device->restore(early, "early").ok());
    EXPECT_EQ(train(*host, 2), train(*device, 2));
    expectBitwiseEqual(state(*host), state(*device));
  }
}

// A device without room for the planned arenas: a clear error naming the
// bytes the plan needs, and the trainer stays on the host.
TEST(HostApi, DeviceWithoutRoomIsAClearError) {
  struct FullDevice : DeviceMemory {
    Status allocate(size_t bytes, void *&) override {
      return Status::error("out of memory (" + std::to_string(bytes) +
                           " bytes)");
    }
    void release(void *) override {}
    Status upload(void *, const void *, size_t) override { return Status(); }
    Status download(void *, const void *, size_t) override { return Status(); }
  };
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(mlir::gacc::compileTrainer(readExample("mlp.mlir"), "mlp.mlir",
                                         mlir::gacc::TrainingPipelineOptions(),
                                         trainer)
                  .ok());
  Status status = trainer->placeArenasOn(std::make_unique<FullDevice>());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("bytes planned) do not fit on the device: "
                                  "out of memory"),
            std::string::npos)
      << status.message();
  StepResult result;
  Batch batch;
  ASSERT_TRUE(Dataset::synthetic(trainer->model(), 1)->batch(0, batch).ok());
  ASSERT_TRUE(trainer->setBatch(batch).ok());
  EXPECT_TRUE(trainer->step(result).ok());
}

// The options set what the step's attributes say: a trainer compiled with
// micro-batch, remat and precision options trains as one compiled from the
// model with those attributes written in; batch, lr, weight decay and
// gradient clipping reach the runtime's description. Unset options keep
// the model's.
TEST(HostApi, OptionsConfigureTheStepAsItsAttributes) {
  std::string text = readExample("mlp.mlir");
  mlir::gacc::TrainingPipelineOptions options;
  options.microBatch = 16;
  options.remat = "sqrt";
  options.precision = "f16";
  std::unique_ptr<Trainer> configured, written, plain;
  Status status =
      mlir::gacc::compileTrainer(text, "mlp.mlir", options, configured);
  ASSERT_TRUE(status.ok()) << status.message();
  std::string attributes = std::regex_replace(
      text, std::regex("batch_size 64"), "batch_size 64 micro_batch_size 16");
  attributes = std::regex_replace(
      attributes, std::regex("weight_decay = 0.0>"),
      "weight_decay = 0.0> precision f16 remat #gacc.remat<sqrt>");
  mlir::gacc::TrainingPipelineOptions none;
  ASSERT_TRUE(
      mlir::gacc::compileTrainer(attributes, "mlp.mlir", none, written).ok());
  ASSERT_TRUE(mlir::gacc::compileTrainer(text, "mlp.mlir", none, plain).ok());
  EXPECT_TRUE(configured->model().lossScaling.has_value());
  EXPECT_FALSE(plain->model().lossScaling.has_value());
  std::vector<double> losses = train(*configured, 3);
  EXPECT_EQ(losses, train(*written, 3));
  EXPECT_NE(losses, train(*plain, 3));

  mlir::gacc::TrainingPipelineOptions optimizer;
  optimizer.batch = 32;
  optimizer.lr = 0.5;
  optimizer.weightDecay = 0.25;
  optimizer.gradClip = 2.0;
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(
      mlir::gacc::compileTrainer(text, "mlp.mlir", optimizer, trainer).ok());
  EXPECT_EQ(trainer->model().batchSize, 32);
  EXPECT_EQ(trainer->model().inputs[0].slot.shape[0], 32);
  EXPECT_EQ(trainer->model().optimizer.lr, 0.5);
  EXPECT_EQ(trainer->model().optimizer.hyperparameters.at("weight_decay"),
            0.25);
  EXPECT_EQ(trainer->model().gradClipNorm, 2.0);
  EXPECT_EQ(plain->model().optimizer.lr, 1e-3);
  EXPECT_FALSE(plain->model().gradClipNorm.has_value());
}

// A pipeline string sets the options of its names and leaves the others
// unset; printed and parsed again, it means the same.
TEST(HostApi, OptionsParseAndPrintAsAPipelineString) {
  auto options = mlir::gacc::TrainingPipelineOptions::createFromString(
      "micro-batch=8 remat=sqrt precision=bf16 lr=0.5 seed=3");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->microBatch.getValue(), 8);
  EXPECT_EQ(options->remat.getValue(), "sqrt");
  EXPECT_EQ(options->precision.getValue(), "bf16");
  EXPECT_EQ(options->lr.getValue(), 0.5);
  EXPECT_EQ(options->seed.getValue(), 3u);
  EXPECT_FALSE(options->batch.getValue().has_value());
  EXPECT_FALSE(options->weightDecay.getValue().has_value());
  EXPECT_EQ(options->target.getValue(), "cpu");
  std::string printed;
  llvm::raw_string_ostream os(printed);
  options->print(os);
  auto again = mlir::gacc::TrainingPipelineOptions::createFromString(
      llvm::StringRef(printed).drop_front().drop_back());
  ASSERT_TRUE(again) << printed;
  EXPECT_EQ(again->microBatch.getValue(), 8);
  EXPECT_FALSE(again->batch.getValue().has_value()) << printed;
  EXPECT_FALSE(mlir::gacc::TrainingPipelineOptions::createFromString(
      "micro-batch=eight"));
  EXPECT_FALSE(
      mlir::gacc::TrainingPipelineOptions::createFromString("microbatch=8"));
}

// A bad value is the located error the `gacc` flag gets, in the Status.
TEST(HostApi, BadOptionIsALocatedError) {
  mlir::gacc::TrainingPipelineOptions options;
  options.precision = "f8";
  std::unique_ptr<Trainer> trainer;
  Status status = mlir::gacc::compileTrainer(readExample("mlp.mlir"),
                                             "mlp.mlir", options, trainer);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("mlp.mlir:35:3: error: --precision: "
                                  "unknown type 'f8' (f32, f16 or bf16)"),
            std::string::npos)
      << status.message();
  EXPECT_FALSE(trainer);
}

// From C: the options as a pipeline string; the runtime's C API drives the
// trainer; a bad string or value is -1 with the reason.
TEST(HostApi, CompilesFromC) {
  std::string text = readExample("mlp.mlir");
  gacc_trainer *trainer = nullptr;
  ASSERT_EQ(gacc_trainer_compile(text.c_str(), "mlp.mlir",
                                 "batch=32 micro-batch=8 seed=1", &trainer),
            0)
      << gacc_last_error();
  std::vector<float> image(32 * 784, 0.5f);
  std::vector<int32_t> label(32, 3);
  double loss = 0;
  EXPECT_EQ(gacc_trainer_set_input(trainer, "image", image.data(),
                                   image.size() * sizeof(float)),
            0)
      << gacc_last_error();
  EXPECT_EQ(gacc_trainer_set_input(trainer, "label", label.data(),
                                   label.size() * sizeof(int32_t)),
            0);
  EXPECT_EQ(gacc_trainer_step(trainer, &loss, nullptr), 0) << gacc_last_error();
  EXPECT_GT(loss, 0.0);
  gacc_trainer_close(trainer);

  EXPECT_EQ(
      gacc_trainer_compile(text.c_str(), "mlp.mlir", "remat=often", &trainer),
      -1);
  EXPECT_NE(std::string(gacc_last_error())
                .find("error: --remat: unknown policy 'often'"),
            std::string::npos)
      << gacc_last_error();
  EXPECT_EQ(
      gacc_trainer_compile(text.c_str(), "mlp.mlir", "microbatch=8", &trainer),
      -1);
  EXPECT_NE(std::string(gacc_last_error()).find("no such option microbatch"),
            std::string::npos)
      << gacc_last_error();
}
