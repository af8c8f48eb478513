//===- SafetensorsTest.cpp - safetensors reading and writing --------------===//

#include "gacc/runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

using namespace gacc::rt;

namespace {
TensorFile sampleFile() {
  TensorFile file;
  Tensor weight(DType::F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    weight.dataAs<float>()[i] = 0.5f * i;
  Tensor ids(DType::I32, {4});
  for (int i = 0; i < 4; ++i)
    ids.dataAs<int32_t>()[i] = 10 - i;
  file.tensors.emplace("fc.weight", std::move(weight));
  file.tensors.emplace("ids", std::move(ids));
  file.tensors.emplace("step", Tensor(DType::I64, {}));
  file.metadata["format"] = "gacc";
  return file;
}

Status parse(const std::string &image, TensorFile &out) {
  return parseSafetensors(reinterpret_cast<const std::byte *>(image.data()),
                          image.size(), "test.safetensors", out);
}

// A file with the given JSON header and `dataBytes` zero bytes of data.
std::string imageWithHeader(const std::string &header, size_t dataBytes) {
  std::string image(8, '\0');
  uint64_t size = header.size();
  std::memcpy(image.data(), &size, 8); // x86-64 is little-endian
  return image + header + std::string(dataBytes, '\0');
}

std::string tempPath(const char *name) {
  return std::string(::testing::TempDir()) + name;
}
} // namespace

TEST(Safetensors, SerializeParseRoundTrip) {
  TensorFile file = sampleFile();
  std::string image = serializeSafetensors(file);
  // The header is padded so that the data starts 8-byte aligned.
  uint64_t headerSize;
  std::memcpy(&headerSize, image.data(), 8);
  EXPECT_EQ(headerSize % 8, 0u);

  TensorFile parsed;
  Status status = parse(image, parsed);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(parsed.tensors, file.tensors);
  EXPECT_EQ(parsed.metadata, file.metadata);
}

TEST(Safetensors, WriteIsAtomicAndReadable) {
  std::string path = tempPath("gacc_roundtrip.safetensors");
  ASSERT_TRUE(writeSafetensors(path, sampleFile()).ok());
  std::ifstream leftover(path + ".tmp." + std::to_string(::getpid()));
  EXPECT_FALSE(leftover.good()) << "temporary file left behind";
  TensorFile read;
  Status status = readSafetensors(path, read);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(read.tensors, sampleFile().tensors);
  std::remove(path.c_str());
}

TEST(Safetensors, EveryTruncationIsAnError) {
  std::string image = serializeSafetensors(sampleFile());
  for (size_t size = 0; size < image.size(); ++size) {
    TensorFile out;
    EXPECT_FALSE(parse(image.substr(0, size), out).ok()) << "size " << size;
  }
}

TEST(Safetensors, MissingFileNamesThePath) {
  TensorFile out;
  Status status = readSafetensors("/nonexistent/x.safetensors", out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent/x.safetensors"),
            std::string::npos);
}

TEST(Safetensors, UnwritablePathIsAnError) {
  Status status =
      writeSafetensors("/nonexistent/dir/x.safetensors", sampleFile());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot write"), std::string::npos);
}

TEST(Safetensors, FailedWriteKeepsThePreviousFile) {
  std::string path = tempPath("gacc_keep.safetensors");
  ASSERT_TRUE(writeSafetensors(path, sampleFile()).ok());
  // A directory in the temporary file's place makes the next write fail.
  std::string blocker = path + ".tmp." + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(blocker.c_str(), 0700), 0);
  TensorFile other;
  other.tensors.emplace("x", Tensor(DType::F32, {1}));
  EXPECT_FALSE(writeSafetensors(path, other).ok());
  ::rmdir(blocker.c_str());
  TensorFile read;
  ASSERT_TRUE(readSafetensors(path, read).ok());
  EXPECT_EQ(read.tensors, sampleFile().tensors);
  std::remove(path.c_str());
}

struct BadHeader {
  const char *name;
  std::string header;
  size_t dataBytes;
  const char *expected;
};

// Names the case in test output instead of dumping its bytes.
void PrintTo(const BadHeader &header, std::ostream *os) { *os << header.name; }

class SafetensorsBadHeader : public ::testing::TestWithParam<BadHeader> {};

TEST_P(SafetensorsBadHeader, IsRejectedWithAReason) {
  TensorFile out;
  Status status =
      parse(imageWithHeader(GetParam().header, GetParam().dataBytes), out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(GetParam().expected), std::string::npos)
      << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    Corrupt, SafetensorsBadHeader,
    ::testing::Values(
        BadHeader{"NotJson", "{not json", 0, "not a JSON object"},
        BadHeader{"UnknownDType",
                  R"({"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})", 1,
                  "unsupported dtype"},
        BadHeader{"NegativeDim",
                  R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                  4, "non-negative"},
        BadHeader{"SizeMismatch",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
                  4, "needs 8"},
        BadHeader{"PastTheEnd",
                  R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                  4, "outside"},
        BadHeader{"Overlap",
                  R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                  8, "overlaps"},
        BadHeader{"TrailingBytes",
                  R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                  12, "trailing"},
        BadHeader{"MissingOffsets", R"({"w":{"dtype":"F32","shape":[1]}})", 4,
                  "data_offsets"},
        BadHeader{"BadMetadata", R"({"__metadata__":{"k":1}})", 0,
                  "__metadata__"}),
    [](const auto &info) { return std::string(info.param.name); });
