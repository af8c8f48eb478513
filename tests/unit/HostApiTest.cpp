//===- HostApiTest.cpp - the JIT and artifacts give the same trainer --------===//
//
// compileTrainer (the JIT, from MLIR text) and openTrainer (an artifact that
// compileArtifact wrote) train the MLP identically: the same losses and
// bitwise the same parameters after 5 steps on the same batches. Bad MLIR
// comes back as a Status with the located diagnostic. A trainer on device
// arenas (the emulated device) trains as one on host arenas.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/aot/Aot.h"
#include "compiler/jit/Jit.h"
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
  std::unique_ptr<Trainer> jit;
  Status status = mlir::gacc::compileTrainer(text, "mlp.mlir", "", 0, jit);
  ASSERT_TRUE(status.ok()) << status.message();

  mlir::DialectRegistry registry;
  mlir::gacc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  std::string unused;
  mlir::FailureOr<Artifact> artifact = mlir::gacc::compileArtifact(
      *module, "", mlir::gacc::EmitKind::Artifact, unused);
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
  Status status = mlir::gacc::compileTrainer("module { gacc.bogus }", "bad.mlir",
                                             "", 0, trainer);
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
    ASSERT_TRUE(mlir::gacc::compileTrainer(text, "mlp.mlir", "", 0, host).ok());
    ASSERT_TRUE(
        mlir::gacc::compileTrainer(text, "mlp.mlir", "", 0, device).ok());
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
                                         "", 0, trainer)
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
