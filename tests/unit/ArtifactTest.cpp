//===- ArtifactTest.cpp - the compiled-model container ----------------------===//

#include "gacc/runtime/Artifact.h"
#include "gacc/runtime/HostCode.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace gacc::rt;

namespace {
TensorSlot slot(const std::string &name, DType dtype,
                std::vector<int64_t> shape, int64_t offset) {
  return {name, dtype, std::move(shape), offset};
}

Artifact example() {
  Artifact artifact;
  artifact.target = "cpu";
  ModelInfo &m = artifact.model;
  m.params.push_back({slot("w", DType::F32, {2, 3}, 0), InitKind::KaimingUniform,
                      0.5773502691896258, 7});
  m.grads.push_back(slot("grad.w", DType::F32, {2, 3}, 64));
  m.optimizerState.push_back(slot("exp_avg.w", DType::F32, {2, 3}, 128));
  m.lossScaling = LossScaling{slot("loss_scale", DType::F32, {}, 192),
                              slot("loss_scale.growth_tracker", DType::F32, {},
                                   256),
                              slot("found_inf", DType::F32, {}, 128), 65536.0};
  Input labels{slot("y", DType::I32, {4}, 0), InputKind::Labels};
  labels.classes = 10;
  labels.ignoreIndex = -100;
  m.inputs.push_back(labels);
  m.hyper = {slot("weight_decay_factor", DType::F32, {}, 0),
             slot("step_size", DType::F32, {}, 4),
             slot("bias_correction2_sqrt", DType::F32, {}, 8)};
  m.loss = slot("loss", DType::F32, {}, 64);
  m.gradNorm = slot("grad_norm", DType::F32, {}, 96);
  m.step = slot("step", DType::I64, {}, 192);
  m.outputs.push_back(slot("output.1", DType::F32, {4, 10}, 256));
  m.stateBytes = 320;
  m.batchBytes = 64;
  m.ioBytes = 448;
  m.workspaceBytes = 4096;
  m.batchSize = 4;
  m.optimizer.kind = "adamw";
  m.optimizer.lr = 3e-4;
  m.optimizer.hyperparameters = {
      {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0.1}};
  m.schedule.kind = ScheduleConfig::WarmupCosine;
  m.schedule.warmupSteps = 10;
  m.schedule.totalSteps = 100;
  m.gradClipNorm = 1.0;
  artifact.cpuFeatures = {"avx2", "fma"};
  artifact.sections["host"] = std::string("\x7f" "ELF and some code");
  artifact.sections["ptx"] = ".version 8.0";
  return artifact;
}

Status parse(const std::string &bytes, const std::string &target = "cpu") {
  Artifact out;
  return parseArtifact(bytes, "m.gacc", target, out);
}
} // namespace

TEST(Artifact, RoundTrip) {
  Artifact in = example();
  std::string bytes = serializeArtifact(in);
  Artifact out;
  ASSERT_TRUE(parseArtifact(bytes, "m.gacc", "cpu", out).ok());
  EXPECT_EQ(out.target, "cpu");
  EXPECT_EQ(out.cpuFeatures, in.cpuFeatures);
  EXPECT_EQ(out.sections, in.sections);
  const ModelInfo &m = out.model;
  ASSERT_EQ(m.params.size(), 1u);
  EXPECT_EQ(m.params[0].slot.name, "w");
  EXPECT_EQ(m.params[0].slot.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(m.params[0].init, InitKind::KaimingUniform);
  EXPECT_EQ(m.params[0].scale, 0.5773502691896258);
  EXPECT_EQ(m.params[0].seed, 7u);
  EXPECT_EQ(m.optimizerState[0].offset, 128);
  EXPECT_EQ(m.inputs[0].kind, InputKind::Labels);
  EXPECT_EQ(m.inputs[0].ignoreIndex, -100);
  EXPECT_EQ(m.step.dtype, DType::I64);
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{4, 10}));
  EXPECT_EQ(m.workspaceBytes, 4096);
  EXPECT_EQ(m.optimizer.kind, "adamw");
  EXPECT_EQ(m.optimizer.lr, 3e-4);
  EXPECT_EQ(m.optimizer.hyperparameters, in.model.optimizer.hyperparameters);
  ASSERT_EQ(m.hyper.size(), 3u);
  EXPECT_EQ(m.hyper[1].name, "step_size");
  EXPECT_EQ(m.hyper[1].offset, 4);
  EXPECT_EQ(m.schedule.kind, ScheduleConfig::WarmupCosine);
  EXPECT_EQ(m.schedule.totalSteps, 100u);
  EXPECT_EQ(m.gradClipNorm, 1.0);
  ASSERT_TRUE(m.lossScaling);
  EXPECT_EQ(m.lossScaling->initScale, 65536.0);
  EXPECT_EQ(m.lossScaling->growthTracker.offset, 256);
  // Sections sit at 64-byte aligned offsets of the file.
  size_t host = bytes.find("\x7f" "ELF");
  ASSERT_NE(host, std::string::npos);
  EXPECT_EQ(host % 64, 0u);
}

TEST(Artifact, CpuFeaturesAreChecked) {
  // This CPU has what it has; a name the runtime does not know (from a
  // newer compiler) is refused, by name.
  std::vector<std::string> present;
  for (const std::string &name : checkedCpuFeatures())
    if (checkCpuFeatures({name}, "m.gacc").ok())
      present.push_back(name);
  EXPECT_TRUE(checkCpuFeatures(present, "m.gacc").ok());
  EXPECT_TRUE(checkCpuFeatures({}, "m.gacc").ok());
  Status unknown = checkCpuFeatures({"avx10.9", "sse4.2"}, "m.gacc");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("m.gacc: compiled for a CPU with avx10.9"),
            std::string::npos)
      << unknown.message();
}

TEST(Artifact, EveryTruncationIsAnError) {
  std::string bytes = serializeArtifact(example());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Status status = parse(bytes.substr(0, size));
    ASSERT_FALSE(status.ok()) << "accepted " << size << " of " << bytes.size();
  }
  EXPECT_NE(parse(bytes.substr(0, bytes.size() - 1)).message().find(
                "truncated: section 'ptx'"),
            std::string::npos);
}

TEST(Artifact, WrongMagicVersionOrTargetIsRefused) {
  std::string bytes = serializeArtifact(example());
  std::string other = bytes;
  other[0] = 'X';
  EXPECT_EQ(parse(other).message(),
            "m.gacc: not a gacc artifact (no GACCART magic)");
  other = bytes;
  other[8] = 1;
  EXPECT_EQ(parse(other).message(),
            "m.gacc: artifact format version 1, this runtime reads version 3: "
            "compile it again");
  EXPECT_EQ(parse(bytes, "cuda").message(),
            "m.gacc: compiled for target 'cpu', not 'cuda'");
  EXPECT_TRUE(parse(bytes, "").ok());
}

TEST(Artifact, CorruptionIsDetected) {
  std::string bytes = serializeArtifact(example());
  std::string corrupt = bytes;
  corrupt[corrupt.find("ELF")] = 'X';
  EXPECT_EQ(parse(corrupt).message(),
            "m.gacc: corrupt section 'host' (checksum mismatch)");
  corrupt = bytes;
  corrupt[corrupt.find("kaiming_uniform")] = 'j';
  EXPECT_EQ(parse(corrupt).message(),
            "m.gacc: corrupt header (checksum mismatch)");
  corrupt = bytes;
  corrupt[20] = '\x01';
  EXPECT_NE(parse(corrupt).message().find("m.gacc: malformed header"),
            std::string::npos);
}

TEST(Artifact, SlotsOutsideTheirArenaAreRefused) {
  Artifact artifact = example();
  artifact.model.grads[0].offset = 300; // 24 bytes from 300 > 320
  Status status = parse(serializeArtifact(artifact));
  EXPECT_EQ(status.message(),
            "m.gacc: malformed header: 'grad.w' lies outside its arena");
}

TEST(Artifact, ScalarsTheRuntimeCannotComputeAreRefused) {
  Artifact artifact = example();
  artifact.model.hyper[1].name = "momentum_coefficient";
  EXPECT_EQ(parse(serializeArtifact(artifact)).message(),
            "m.gacc: malformed header: the step reads the per-step scalar "
            "'momentum_coefficient', which this runtime does not compute for "
            "optimizer 'adamw'");
  artifact = example();
  artifact.model.optimizer.hyperparameters.erase("beta2");
  EXPECT_EQ(parse(serializeArtifact(artifact)).message(),
            "m.gacc: malformed header: optimizer 'adamw' has no "
            "hyperparameter 'beta2'");
}

TEST(Artifact, WriteIsAtomicAndReadable) {
  std::string path = ::testing::TempDir() + "/artifact.gacc";
  ASSERT_TRUE(writeArtifact(path, example()).ok());
  Artifact out;
  ASSERT_TRUE(readArtifact(path, "cpu", out).ok());
  EXPECT_EQ(out.sections.at("ptx"), ".version 8.0");
  EXPECT_FALSE(readArtifact(path + ".missing", "cpu", out).ok());
  std::remove(path.c_str());
}
