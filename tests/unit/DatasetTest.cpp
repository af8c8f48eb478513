//===- DatasetTest.cpp - token files, .npy, rank slices, prefetch --------===//

#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

using namespace gacc::rt;

namespace {
constexpr int64_t B = 4, T = 8;

/// A fresh directory under the test temporary directory, removed with
/// what it holds when the test ends.
struct ScratchDirectory {
  ScratchDirectory() {
    std::string base = ::testing::TempDir();
    if (base.empty() || base.back() != '/')
      base += '/';
    std::string pattern = base + "gacc-dataset-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char *made = ::mkdtemp(buffer.data());
    EXPECT_NE(made, nullptr) << pattern;
    path = made ? std::string(made) : base + "gacc-dataset-unmade";
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;
  std::string path;
};

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

/// Little-endian ids of `width` bytes each.
std::string tokenBytes(const std::vector<uint32_t> &ids, int width) {
  std::string bytes;
  for (uint32_t id : ids)
    for (int b = 0; b < width; ++b)
      bytes.push_back(static_cast<char>((id >> (8 * b)) & 0xff));
  return bytes;
}

/// Token i of the test files: 919·i mod 1000, a bijection of [0, 1000)
/// (919 is prime to 1000), so that a token tells its position.
std::vector<uint32_t> scrambledTokens(int64_t n) {
  std::vector<uint32_t> ids(n);
  for (int64_t i = 0; i < n; ++i)
    ids[i] = static_cast<uint32_t>((i * 919) % 1000);
  return ids;
}

/// A model reading tokens [B, T] and their next-token labels [B, T].
ModelInfo tokenModel(int64_t classes, DType dtype = DType::I64) {
  ModelInfo model;
  model.batchSize = B;
  Input tokens{{"tokens", dtype, {B, T}, 0}, InputKind::Tokens, classes};
  Input labels{{"labels", dtype, {B, T}, 0}, InputKind::Labels, classes};
  model.inputs = {tokens, labels};
  return model;
}

int64_t element(const Tensor &tensor, int64_t row, int64_t column,
                int64_t columns) {
  return static_cast<int64_t>(
      loadElement(tensor.dtype(), tensor.data(), row * columns + column));
}

bool sameBatch(const Batch &a, const Batch &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, tensor] : a) {
    auto it = b.find(name);
    if (it == b.end() || !(it->second == tensor))
      return false;
  }
  return true;
}

/// Row `row` of every tensor of `batch`, as bytes.
std::map<std::string, std::string> rowOf(const Batch &batch, int64_t row) {
  std::map<std::string, std::string> out;
  for (const auto &[name, tensor] : batch) {
    size_t rowBytes = tensor.byteSize() / tensor.shape()[0];
    out[name] = std::string(reinterpret_cast<const char *>(tensor.data()) +
                                row * rowBytes,
                            rowBytes);
  }
  return out;
}

/// Checks that every row of `batch` is a window of `file` (T + 1
/// consecutive tokens: T of tokens, T of labels shifted by one) and returns
/// the windows' first positions.
std::vector<int64_t> windowStarts(const Batch &batch,
                                  const std::vector<uint32_t> &file,
                                  const std::map<uint32_t, int64_t> &position) {
  std::vector<int64_t> starts;
  const Tensor &tokens = batch.at("tokens"), &labels = batch.at("labels");
  EXPECT_EQ(tokens.shape(), (std::vector<int64_t>{B, T}));
  EXPECT_EQ(labels.shape(), (std::vector<int64_t>{B, T}));
  for (int64_t r = 0; r < B; ++r) {
    int64_t first = element(tokens, r, 0, T);
    auto it = position.find(static_cast<uint32_t>(first));
    if (it == position.end()) {
      ADD_FAILURE() << "row " << r << " starts with " << first
                    << ", not a token of the file";
      starts.push_back(-1);
      continue;
    }
    int64_t start = it->second;
    starts.push_back(start);
    EXPECT_LE(start + T, static_cast<int64_t>(file.size()) - 1) << r;
    if (start + T >= static_cast<int64_t>(file.size()))
      continue;
    for (int64_t t = 0; t < T; ++t) {
      EXPECT_EQ(element(tokens, r, t, T), int64_t(file[start + t]))
          << "row " << r << " t " << t;
      EXPECT_EQ(element(labels, r, t, T), int64_t(file[start + t + 1]))
          << "row " << r << " t " << t;
      if (t + 1 < T) { // labels are the tokens shifted by one
        EXPECT_EQ(element(labels, r, t, T), element(tokens, r, t + 1, T));
      }
    }
  }
  return starts;
}

std::map<uint32_t, int64_t> positions(const std::vector<uint32_t> &file) {
  std::map<uint32_t, int64_t> out;
  for (size_t i = 0; i < file.size(); ++i)
    out[file[i]] = static_cast<int64_t>(i);
  return out;
}

/// The window starts of one epoch (steps [first, first + batches)).
std::vector<int64_t> epochStarts(Dataset &data, uint64_t first,
                                 const std::vector<uint32_t> &file) {
  auto where = positions(file);
  std::vector<int64_t> starts;
  for (uint64_t step = first; step < first + data.batchesPerEpoch(); ++step) {
    Batch batch;
    Status s = data.batch(step, batch);
    EXPECT_TRUE(s.ok()) << s.message();
    for (int64_t start : windowStarts(batch, file, where))
      starts.push_back(start);
  }
  return starts;
}

void expectPermutationOfWindows(std::vector<int64_t> starts, int64_t windows) {
  std::sort(starts.begin(), starts.end());
  std::vector<int64_t> expected(windows);
  for (int64_t w = 0; w < windows; ++w)
    expected[w] = w * T;
  EXPECT_EQ(starts, expected);
}

void expectError(const Status &status, const std::string &phrase) {
  ASSERT_FALSE(status.ok())
      << "expected an error containing '" << phrase << "'";
  EXPECT_NE(status.message().find(phrase), std::string::npos)
      << status.message();
}
} // namespace

// Training over a token file in epochs: each epoch visits every one of the
// (n - 1) / T non-overlapping windows once, a final partial batch dropped,
// in an order drawn afresh each epoch from the seed; labels are the tokens
// shifted by one.
TEST(DatasetTokens, EpochsVisitEveryWindowOnceInAShuffledOrder) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 41 + 1; // 41 windows: the 41st falls in no batch
  std::vector<uint32_t> file = scrambledTokens(n);
  writeBytes(dir + "/train.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);

  std::unique_ptr<Dataset> data;
  Status s =
      Dataset::openTokens(dir + "/train.bin", model, {7, true}, {}, data);
  ASSERT_TRUE(s.ok()) << s.message();
  const int64_t windows = (n - 1) / T;
  ASSERT_EQ(data->batchesPerEpoch(), static_cast<uint64_t>(windows / B));
  EXPECT_EQ(data->realRows(0), B);

  std::vector<int64_t> epoch0 = epochStarts(*data, 0, file);
  std::vector<int64_t> epoch1 = epochStarts(*data, 10, file);
  ASSERT_EQ(epoch0.size(), 40u);
  ASSERT_EQ(epoch1.size(), 40u);
  // Distinct windows, all of them window-aligned (40 of the 41).
  for (const auto *epoch : {&epoch0, &epoch1}) {
    std::set<int64_t> distinct(epoch->begin(), epoch->end());
    EXPECT_EQ(distinct.size(), 40u);
    for (int64_t start : *epoch) {
      EXPECT_EQ(start % T, 0) << start;
      EXPECT_LT(start, windows * T);
    }
  }
  EXPECT_NE(epoch0, epoch1) << "each epoch is shuffled afresh";
  std::vector<int64_t> inFileOrder(epoch0);
  std::sort(inFileOrder.begin(), inFileOrder.end());
  EXPECT_NE(epoch0, inFileOrder) << "the order is shuffled";

  // A batch is a function of (seed, step): asked again, out of order, or of
  // a dataset opened afresh, it is the same.
  Batch first, again, fresh;
  ASSERT_TRUE(data->batch(13, first).ok());
  ASSERT_TRUE(data->batch(2, again).ok());
  ASSERT_TRUE(data->batch(13, again).ok());
  EXPECT_TRUE(sameBatch(first, again));
  std::unique_ptr<Dataset> reopened;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {7, true}, {}, reopened)
          .ok());
  ASSERT_TRUE(reopened->batch(13, fresh).ok());
  EXPECT_TRUE(sameBatch(first, fresh));

  // Another seed, another order.
  std::unique_ptr<Dataset> other;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {8, true}, {}, other)
          .ok());
  std::vector<int64_t> otherEpoch0 = epochStarts(*other, 0, file);
  EXPECT_NE(epoch0, otherEpoch0);
}

// With exactly B·k windows every window is in an epoch: a permutation.
TEST(DatasetTokens, EpochIsAPermutationOfTheWindows) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 40 + 1;
  std::vector<uint32_t> file = scrambledTokens(n);
  writeBytes(dir + "/train.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  std::unique_ptr<Dataset> data;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {3, true}, {}, data).ok());
  ASSERT_EQ(data->batchesPerEpoch(), 10u);
  for (uint64_t epoch = 0; epoch < 3; ++epoch)
    expectPermutationOfWindows(epochStarts(*data, epoch * 10, file), 40);
}

// Ids of 32 bits, past what 16 hold, read whole; labels of another dtype.
TEST(DatasetTokens, Uint32Width) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 8 + 1;
  std::vector<uint32_t> file(n);
  for (int64_t i = 0; i < n; ++i)
    file[i] = 70000 + static_cast<uint32_t>((i * 919) % 1000);
  writeBytes(dir + "/train.bin", tokenBytes(file, 4));
  ModelInfo model = tokenModel(100000, DType::I32);
  TokenFileOptions options;
  options.width = TokenFileOptions::Width::U32;
  std::unique_ptr<Dataset> data;
  Status s =
      Dataset::openTokens(dir + "/train.bin", model, {1, true}, options, data);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(data->batchesPerEpoch(), 2u);
  std::vector<int64_t> starts = epochStarts(*data, 0, file);
  expectPermutationOfWindows(starts, 8);
  Batch batch;
  ASSERT_TRUE(data->batch(0, batch).ok());
  EXPECT_EQ(batch.at("tokens").dtype(), DType::I32);
  EXPECT_GE(batch.at("tokens").dataAs<int32_t>()[0], 70000);

  // The same bytes read as uint16: twice the ids, none of them these.
  std::unique_ptr<Dataset> narrow;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {1, true}, {}, narrow)
          .ok());
  ASSERT_TRUE(narrow->batch(0, batch).ok());
  EXPECT_LT(batch.at("tokens").dataAs<int32_t>()[0], 65536);
}

// Random sampling (nanoGPT's get_batch): any start, a contiguous run of
// T + 1 tokens, the same for the same (seed, step).
TEST(DatasetTokens, RandomSamplingDrawsContiguousWindowsPerStep) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 40 + 1;
  std::vector<uint32_t> file = scrambledTokens(n);
  writeBytes(dir + "/train.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  TokenFileOptions options;
  options.sampling = TokenFileOptions::Sampling::Random;
  std::unique_ptr<Dataset> data, again;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {5, true}, options, data)
          .ok());
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {5, true}, options, again)
          .ok());
  auto where = positions(file);
  std::set<int64_t> starts;
  bool unaligned = false;
  std::vector<Batch> batches(20);
  for (uint64_t step = 0; step < 20; ++step) {
    ASSERT_TRUE(data->batch(step, batches[step]).ok());
    for (int64_t start : windowStarts(batches[step], file, where)) {
      starts.insert(start);
      unaligned |= start % T != 0;
      EXPECT_GE(start, 0);
    }
  }
  EXPECT_TRUE(unaligned) << "random starts are not only window-aligned";
  EXPECT_GT(starts.size(), 40u) << "80 draws from 313 starts";
  EXPECT_FALSE(sameBatch(batches[0], batches[1]));
  // In another order, from another dataset: the same batches.
  for (uint64_t step : {19, 3, 0, 11}) {
    Batch batch;
    ASSERT_TRUE(again->batch(step, batch).ok());
    EXPECT_TRUE(sameBatch(batch, batches[step])) << step;
  }
  // Another seed draws others.
  std::unique_ptr<Dataset> other;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {6, true}, options, other)
          .ok());
  Batch batch;
  ASSERT_TRUE(other->batch(0, batch).ok());
  EXPECT_FALSE(sameBatch(batch, batches[0]));
}

// Random sampling draws overlapping windows, so a file holding fewer
// windows than a batch is accepted (the error for epochs even suggests
// --token-sampling random); its batches must then be readable (an epoch
// counts as one batch: no division by zero windows per batch).
TEST(DatasetTokens, RandomSamplingOfAFileSmallerThanABatch) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 2 + 1; // 2 windows, a batch of 4
  std::vector<uint32_t> file = scrambledTokens(n);
  writeBytes(dir + "/small.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  TokenFileOptions options;
  options.sampling = TokenFileOptions::Sampling::Random;
  std::unique_ptr<Dataset> data;
  Status s =
      Dataset::openTokens(dir + "/small.bin", model, {5, true}, options, data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EXIT(
      {
        Batch batch;
        bool ok = data->batch(0, batch).ok();
        std::exit(ok && batch.at("tokens").numElements() == B * T ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Evaluation: every window in file order, ceil(windows / B) batches, the
// last padded with copies of its first row; firstRowBatch repeats row 0.
TEST(DatasetTokens, EvaluationReadsEveryWindowInOrder) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  const int64_t n = T * 10 + 1 + 3; // 10 windows, 3 tokens left over
  std::vector<uint32_t> file = scrambledTokens(n);
  writeBytes(dir + "/val.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  std::unique_ptr<Dataset> data;
  Status s = Dataset::openTokens(dir + "/val.bin", model, {9, false}, {}, data);
  ASSERT_TRUE(s.ok()) << s.message();
  const int64_t windows = 10;
  const uint64_t batches = (windows + B - 1) / B;
  ASSERT_EQ(data->batchesPerEpoch(), batches);
  EXPECT_EQ(data->realRows(0), B);
  EXPECT_EQ(data->realRows(1), B);
  EXPECT_EQ(data->realRows(2), windows - (batches - 1) * B);
  EXPECT_EQ(data->realRows(2), 2);

  auto where = positions(file);
  for (uint64_t step = 0; step < batches; ++step) {
    Batch batch;
    ASSERT_TRUE(data->batch(step, batch).ok());
    std::vector<int64_t> starts = windowStarts(batch, file, where);
    int64_t real = data->realRows(step);
    for (int64_t r = 0; r < B; ++r) {
      if (r < real)
        EXPECT_EQ(starts[r], (static_cast<int64_t>(step) * B + r) * T)
            << "step " << step << " row " << r;
      else // padding: the batch's first row
        EXPECT_EQ(rowOf(batch, r), rowOf(batch, 0))
            << "step " << step << " row " << r;
    }
    Batch firstRows;
    ASSERT_TRUE(data->firstRowBatch(step, firstRows).ok());
    for (int64_t r = 0; r < B; ++r)
      EXPECT_EQ(rowOf(firstRows, r), rowOf(batch, 0))
          << "step " << step << " row " << r;
  }
  // Seeds do not change evaluation order; a second pass repeats the first.
  std::unique_ptr<Dataset> other;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/val.bin", model, {10, false}, {}, other)
          .ok());
  Batch a, b;
  ASSERT_TRUE(data->batch(1, a).ok());
  ASSERT_TRUE(other->batch(1, b).ok());
  EXPECT_TRUE(sameBatch(a, b));
  ASSERT_TRUE(other->batch(1 + batches, b).ok());
  EXPECT_TRUE(sameBatch(a, b));
}

// A masks input is filled with ones, in the window's shape.
TEST(DatasetTokens, MasksAreOnes) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  std::vector<uint32_t> file = scrambledTokens(T * 4 + 1);
  writeBytes(dir + "/train.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  model.inputs.push_back(
      Input{{"mask", DType::F32, {B, T}, 0}, InputKind::Mask});
  std::unique_ptr<Dataset> data;
  Status s =
      Dataset::openTokens(dir + "/train.bin", model, {0, true}, {}, data);
  ASSERT_TRUE(s.ok()) << s.message();
  Batch batch;
  ASSERT_TRUE(data->batch(0, batch).ok());
  const Tensor &mask = batch.at("mask");
  ASSERT_EQ(mask.numElements(), B * T);
  for (int64_t i = 0; i < B * T; ++i)
    EXPECT_EQ(mask.dataAs<float>()[i], 1.0f) << i;
}

TEST(DatasetTokens, Errors) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  ModelInfo model = tokenModel(1000);
  std::unique_ptr<Dataset> data;
  auto open = [&](const std::string &name, const ModelInfo &m,
                  const DataOrder &order = {0, true}) {
    return Dataset::openTokens(dir + "/" + name, m, order, {}, data);
  };

  std::vector<uint32_t> ids = scrambledTokens(T * 40 + 1);
  std::string bytes = tokenBytes(ids, 2);
  writeBytes(dir + "/odd.bin", bytes + "x");
  expectError(open("odd.bin", model), "whole number");

  writeBytes(dir + "/short.bin", tokenBytes(scrambledTokens(T), 2));
  expectError(open("short.bin", model), "one example needs");
  expectError(open("short.bin", model, {0, false}), "one example needs");
  writeBytes(dir + "/empty.bin", "");
  expectError(open("empty.bin", model), "one example needs");

  // T + 1 tokens: one window, enough to evaluate, not a training batch.
  writeBytes(dir + "/one.bin", tokenBytes(scrambledTokens(T + 1), 2));
  EXPECT_TRUE(open("one.bin", model, {0, false}).ok());
  expectError(open("one.bin", model), "fewer than one batch");

  std::vector<uint32_t> outside = scrambledTokens(T * 40 + 1);
  outside[123] = 1000;
  writeBytes(dir + "/outside.bin", tokenBytes(outside, 2));
  expectError(open("outside.bin", model), "outside the vocabulary");
  expectError(open("outside.bin", model), "token 123 is 1000");
  // The smallest vocabulary of the inputs counts.
  ModelInfo smaller = tokenModel(1000);
  int64_t largest = *std::max_element(ids.begin(), ids.end());
  smaller.inputs[1].classes = largest + 1;
  writeBytes(dir + "/ok.bin", bytes);
  EXPECT_TRUE(open("ok.bin", smaller).ok());
  smaller.inputs[1].classes = largest;
  EXPECT_TRUE(open("ok.bin", model).ok());
  expectError(open("ok.bin", smaller), "outside the vocabulary");
  // Masks have no vocabulary.
  ModelInfo masked = tokenModel(1000);
  masked.inputs.push_back(
      Input{{"mask", DType::F32, {B, T}, 0}, InputKind::Mask, 2});
  EXPECT_TRUE(open("ok.bin", masked).ok());

  expectError(open("missing.bin", model), "missing.bin");
  expectError(open("missing.bin", model), "cannot open");
  expectError(Dataset::openTokens(dir, model, {0, true}, {}, data),
              "not a regular file");

  ModelInfo withFeatures = tokenModel(1000);
  withFeatures.inputs.push_back(
      Input{{"x", DType::F32, {B, T}, 0}, InputKind::Features});
  expectError(open("ok.bin", withFeatures), "features");

  ModelInfo noTokens = tokenModel(1000);
  noTokens.inputs.erase(noTokens.inputs.begin());
  expectError(open("ok.bin", noTokens), "tokens input");

  ModelInfo mismatched = tokenModel(1000);
  mismatched.inputs[1].slot.shape = {B, T - 1};
  expectError(open("ok.bin", mismatched), "[B, T]");
}

// The inputs' shapes are checked against each other whatever their order:
// labels [B, T - 1] listed before tokens [B, T] would be written with the
// tokens' row length, T elements a row, past the end of their tensor.
TEST(DatasetTokens, ShapesCheckedWhateverTheInputOrder) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeBytes(dir + "/ok.bin", tokenBytes(scrambledTokens(T * 40 + 1), 2));
  ModelInfo model = tokenModel(1000);
  std::swap(model.inputs[0], model.inputs[1]); // labels first
  model.inputs[0].slot.shape = {B, T - 1};
  std::unique_ptr<Dataset> data;
  expectError(Dataset::openTokens(dir + "/ok.bin", model, {0, true}, {}, data),
              "[B, T]");
}

namespace {
/// A source that records the steps asked of it; optionally slow, and
/// failing at one step.
class RecordingSource : public Dataset {
public:
  explicit RecordingSource(std::chrono::milliseconds delay = {},
                           uint64_t failAt = UINT64_MAX)
      : delay_(delay), failAt_(failAt) {}
  Status batch(uint64_t step, Batch &out) override {
    std::this_thread::sleep_for(delay_);
    {
      std::lock_guard<std::mutex> lock(mutex);
      asked.push_back(step);
    }
    if (step == failAt_)
      return Status::error("step " + std::to_string(step) + " failed");
    out.clear();
    Tensor tensor(DType::I64, {1});
    tensor.dataAs<int64_t>()[0] = static_cast<int64_t>(step);
    out.emplace("step", std::move(tensor));
    return Status();
  }
  uint64_t batchesPerEpoch() const override { return 100; }
  int64_t realRows(uint64_t) const override { return 1; }

  std::vector<uint64_t> steps() {
    std::lock_guard<std::mutex> lock(mutex);
    return asked;
  }

  std::mutex mutex;
  std::vector<uint64_t> asked;

private:
  std::chrono::milliseconds delay_;
  uint64_t failAt_;
};

/// Runs `destroy` on a thread; false if it did not return within 5 s (the
/// thread is then left behind).
bool finishesInTime(std::function<void()> destroy) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([destroy = std::move(destroy), done] {
    destroy();
    done->set_value();
  }).detach();
  return finished.wait_for(std::chrono::seconds(5)) ==
         std::future_status::ready;
}
} // namespace

// Prefetched batches are the source's, in order and after jumps.
TEST(DatasetPrefetch, SameBatchesAsTheSource) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  std::vector<uint32_t> file = scrambledTokens(T * 40 + 1);
  writeBytes(dir + "/train.bin", tokenBytes(file, 2));
  ModelInfo model = tokenModel(1000);
  std::unique_ptr<Dataset> source, plain;
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {4, true}, {}, source)
          .ok());
  ASSERT_TRUE(
      Dataset::openTokens(dir + "/train.bin", model, {4, true}, {}, plain)
          .ok());
  std::unique_ptr<Dataset> ahead = Dataset::prefetch(std::move(source), 3);
  EXPECT_EQ(ahead->batchesPerEpoch(), plain->batchesPerEpoch());
  EXPECT_EQ(ahead->realRows(0), plain->realRows(0));
  auto expectSame = [&](uint64_t step) {
    Batch got, expected;
    Status s = ahead->batch(step, got);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(plain->batch(step, expected).ok());
    EXPECT_TRUE(sameBatch(got, expected)) << "step " << step;
  };
  for (uint64_t step = 0; step < 10; ++step) // across an epoch's end
    expectSame(step);
  for (uint64_t step : {5, 2, 3, 4, 25, 0, 1, 1, 30})
    expectSame(step);
  Batch got, expected;
  ASSERT_TRUE(ahead->firstRowBatch(7, got).ok());
  ASSERT_TRUE(plain->firstRowBatch(7, expected).ok());
  EXPECT_TRUE(sameBatch(got, expected));
}

// The worker reads `depth` batches ahead, no more, and starts afresh at a
// jump; a source's error comes back with its step.
TEST(DatasetPrefetch, ReadsDepthAheadAndPassesErrors) {
  auto owned =
      std::make_unique<RecordingSource>(std::chrono::milliseconds(0), 6);
  RecordingSource *source = owned.get();
  std::unique_ptr<Dataset> ahead = Dataset::prefetch(std::move(owned), 3);
  Batch batch;
  ASSERT_TRUE(ahead->batch(0, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 0);
  auto waitFor = [&](size_t count) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (source->steps().size() < count &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  waitFor(4);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(source->steps(), (std::vector<uint64_t>{0, 1, 2, 3}))
      << "step 0 taken, steps 1 to 3 prepared";
  ASSERT_TRUE(ahead->batch(1, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 1);
  // A jump: the worker goes on from there.
  ASSERT_TRUE(ahead->batch(4, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 4);
  ASSERT_TRUE(ahead->batch(5, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 5);
  Status s = ahead->batch(6, batch);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "step 6 failed");
  ASSERT_TRUE(ahead->batch(7, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 7);

  // Depth 0 is the source itself.
  auto plain = std::make_unique<RecordingSource>();
  Dataset *raw = plain.get();
  EXPECT_EQ(Dataset::prefetch(std::move(plain), 0).get(), raw);
}

// A resumed run's prefetcher starts where the run does: no batch before it
// is read.
TEST(DatasetPrefetch, StartsAtTheFirstStep) {
  auto owned = std::make_unique<RecordingSource>();
  RecordingSource *source = owned.get();
  std::unique_ptr<Dataset> ahead = Dataset::prefetch(std::move(owned), 2, 40);
  Batch batch;
  ASSERT_TRUE(ahead->batch(40, batch).ok());
  EXPECT_EQ(batch.at("step").dataAs<int64_t>()[0], 40);
  ASSERT_TRUE(ahead->batch(41, batch).ok());
  std::vector<uint64_t> steps = source->steps();
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), 40u);
  for (uint64_t step : steps)
    EXPECT_GE(step, 40u);
}

// Destroyed while its worker waits for room, or is inside the source, a
// prefetcher returns.
TEST(DatasetPrefetch, DestroyedMidwayDoesNotHang) {
  {
    auto ahead = std::make_shared<std::unique_ptr<Dataset>>(
        Dataset::prefetch(std::make_unique<RecordingSource>(), 3));
    Batch batch;
    ASSERT_TRUE((*ahead)->batch(0, batch).ok());
    ASSERT_TRUE((*ahead)->batch(1, batch).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10)); // full
    EXPECT_TRUE(finishesInTime([ahead] { ahead->reset(); }));
  }
  {
    auto ahead = std::make_shared<std::unique_ptr<Dataset>>(Dataset::prefetch(
        std::make_unique<RecordingSource>(std::chrono::milliseconds(50)), 2));
    Batch batch;
    ASSERT_TRUE((*ahead)->batch(0, batch).ok()); // the worker is in step 1
    EXPECT_TRUE(finishesInTime([ahead] { ahead->reset(); }));
  }
  {
    // Never asked for a batch.
    auto ahead = std::make_shared<std::unique_ptr<Dataset>>(
        Dataset::prefetch(std::make_unique<RecordingSource>(), 1));
    EXPECT_TRUE(finishesInTime([ahead] { ahead->reset(); }));
  }
}

namespace {
/// x [N, 3] f32 with x[i][j] = 10·i + j, y [N] i32 with y[i] = i mod 5.
void writeExamples(const std::string &dir, int64_t n) {
  Tensor x(DType::F32, {n, 3}), y(DType::I32, {n});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 3; ++j)
      x.dataAs<float>()[i * 3 + j] = static_cast<float>(10 * i + j);
    y.dataAs<int32_t>()[i] = static_cast<int32_t>(i % 5);
  }
  writeBytes(dir + "/x.npy", serializeNpy(x));
  writeBytes(dir + "/y.npy", serializeNpy(y));
}

/// A model of features x [rows, 3] and labels y [rows] of 5 classes.
ModelInfo exampleModel(int64_t batchSize, int64_t ranks = 1) {
  ModelInfo model;
  model.batchSize = batchSize;
  model.ranks = ranks;
  int64_t rows = batchSize / ranks;
  Input x{{"x", DType::F32, {rows, 3}, 0}, InputKind::Features};
  Input y{{"y", DType::I32, {rows}, 0}, InputKind::Labels, 5};
  model.inputs = {x, y};
  return model;
}

/// The example each row of `batch` holds (from x), checking y agrees.
std::vector<int64_t> examplesOf(const Batch &batch) {
  const Tensor &x = batch.at("x"), &y = batch.at("y");
  std::vector<int64_t> out;
  for (int64_t r = 0; r < x.shape()[0]; ++r) {
    int64_t example = static_cast<int64_t>(x.dataAs<float>()[r * 3]) / 10;
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(x.dataAs<float>()[r * 3 + j], 10 * example + j);
    EXPECT_EQ(y.dataAs<int32_t>()[r], example % 5);
    out.push_back(example);
  }
  return out;
}
} // namespace

// A directory of .npy files in evaluation order: file order, the last batch
// padded with its first row.
TEST(DatasetNpy, EvaluationInFileOrder) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeExamples(dir, 10);
  ModelInfo model = exampleModel(4);
  std::unique_ptr<Dataset> data;
  Status s = Dataset::open(dir, model, {0, false}, data);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(data->batchesPerEpoch(), 3u);
  EXPECT_EQ(data->realRows(0), 4);
  EXPECT_EQ(data->realRows(1), 4);
  EXPECT_EQ(data->realRows(2), 2);
  const std::vector<std::vector<int64_t>> expected = {
      {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 8, 8}};
  for (uint64_t step = 0; step < 3; ++step) {
    Batch batch;
    ASSERT_TRUE(data->batch(step, batch).ok());
    EXPECT_EQ(batch.at("x").shape(), (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(batch.at("y").shape(), (std::vector<int64_t>{4}));
    EXPECT_EQ(examplesOf(batch), expected[step]) << "step " << step;
    Batch firstRows;
    ASSERT_TRUE(data->firstRowBatch(step, firstRows).ok());
    EXPECT_EQ(examplesOf(firstRows),
              std::vector<int64_t>(4, expected[step][0]));
  }
}

// Training over .npy examples: epochs of distinct examples, the partial
// batch dropped, reshuffled per epoch, a function of (seed, step).
TEST(DatasetNpy, TrainingEpochsAreShuffledDraws) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeExamples(dir, 10);
  ModelInfo model = exampleModel(4);
  std::unique_ptr<Dataset> data, again;
  ASSERT_TRUE(Dataset::open(dir, model, {11, true}, data).ok());
  ASSERT_TRUE(Dataset::open(dir, model, {11, true}, again).ok());
  ASSERT_EQ(data->batchesPerEpoch(), 2u);
  EXPECT_EQ(data->realRows(1), 4);
  std::vector<std::vector<int64_t>> epochs;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    std::vector<int64_t> seen;
    for (uint64_t step = 2 * epoch; step < 2 * epoch + 2; ++step) {
      Batch batch;
      ASSERT_TRUE(data->batch(step, batch).ok());
      for (int64_t e : examplesOf(batch))
        seen.push_back(e);
    }
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 8u);
    epochs.push_back(seen);
  }
  EXPECT_FALSE(epochs[0] == epochs[1] && epochs[1] == epochs[2] &&
               epochs[2] == epochs[3]);
  // Out of order (back to an earlier epoch), from another dataset.
  Batch a, b;
  ASSERT_TRUE(data->batch(1, a).ok());
  ASSERT_TRUE(again->batch(7, b).ok());
  ASSERT_TRUE(again->batch(1, b).ok());
  EXPECT_TRUE(sameBatch(a, b));
}

TEST(DatasetNpy, Errors) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeExamples(dir, 10);
  std::unique_ptr<Dataset> data;
  // Labels out of range.
  ModelInfo fewer = exampleModel(4);
  fewer.inputs[1].classes = 4;
  expectError(Dataset::open(dir, fewer, {0, false}, data), "outside [0, 4)");
  // The ignore index may appear.
  Tensor y(DType::I32, {10});
  for (int i = 0; i < 10; ++i)
    y.dataAs<int32_t>()[i] = i % 2 ? -100 : 1;
  ScratchDirectory otherScratch;
  const std::string &other = otherScratch.path;
  writeExamples(other, 10);
  writeBytes(other + "/y.npy", serializeNpy(y));
  ModelInfo ignoring = exampleModel(4);
  expectError(Dataset::open(other, ignoring, {0, false}, data),
              "is -100, outside");
  ignoring.inputs[1].ignoreIndex = -100;
  Status s = Dataset::open(other, ignoring, {0, false}, data);
  EXPECT_TRUE(s.ok()) << s.message();
  // A missing input file, a dtype or a shape the model does not read.
  ModelInfo extra = exampleModel(4);
  extra.inputs.push_back(Input{{"z", DType::F32, {4}, 0}, InputKind::Features});
  expectError(Dataset::open(dir, extra, {0, false}, data), "z.npy");
  ModelInfo wide = exampleModel(4);
  wide.inputs[0].slot.shape = {4, 4};
  expectError(Dataset::open(dir, wide, {0, false}, data), "has shape [10, 3]");
  ModelInfo doubles = exampleModel(4);
  doubles.inputs[0].slot.dtype = DType::F64;
  expectError(Dataset::open(dir, doubles, {0, false}, data), "F64");
  // Fewer examples than a training batch.
  ModelInfo big = exampleModel(16);
  expectError(Dataset::open(dir, big, {0, true}, data), "fewer than one batch");
  EXPECT_TRUE(Dataset::open(dir, big, {0, false}, data).ok());
  expectError(Dataset::open(dir + "/none", big, {0, false}, data), "none");
}

// A rank's slice of an evaluation pass: its rows of each global batch, and
// the real rows among them.
TEST(DatasetRankSlice, RealRowsClampPerRank) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeExamples(dir, 5);
  ModelInfo model = exampleModel(4, 2); // 2 rows a rank
  ModelInfo global = model.globalBatch();
  ASSERT_EQ(global.inputs[0].slot.shape, (std::vector<int64_t>{4, 3}));
  std::unique_ptr<Dataset> slices[2];
  for (int rank = 0; rank < 2; ++rank) {
    std::unique_ptr<Dataset> whole;
    Status s = Dataset::open(dir, global, {0, false}, whole);
    ASSERT_TRUE(s.ok()) << s.message();
    slices[rank] = Dataset::rankSlice(std::move(whole), model, rank);
  }
  for (int rank = 0; rank < 2; ++rank)
    ASSERT_EQ(slices[rank]->batchesPerEpoch(), 2u);
  EXPECT_EQ(slices[0]->realRows(0), 2);
  EXPECT_EQ(slices[1]->realRows(0), 2);
  EXPECT_EQ(slices[0]->realRows(1), 1);
  EXPECT_EQ(slices[1]->realRows(1), 0);

  const std::vector<int64_t> expected[2][2] = {{{0, 1}, {4, 4}},
                                               {{2, 3}, {4, 4}}};
  for (int rank = 0; rank < 2; ++rank)
    for (uint64_t step = 0; step < 2; ++step) {
      Batch batch;
      ASSERT_TRUE(slices[rank]->batch(step, batch).ok());
      EXPECT_EQ(batch.at("x").shape(), (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(batch.at("y").shape(), (std::vector<int64_t>{2}));
      EXPECT_EQ(examplesOf(batch), expected[rank][step])
          << "rank " << rank << " step " << step;
    }
  // firstRowBatch: the global batch's first row on every rank.
  Batch firstRows;
  ASSERT_TRUE(slices[1]->firstRowBatch(0, firstRows).ok());
  EXPECT_EQ(examplesOf(firstRows), (std::vector<int64_t>{0, 0}));

  // Over 4 ranks of 1 row, 5 examples in 2 batches: 1 real row on rank 0.
  ModelInfo four = exampleModel(4, 4);
  ModelInfo fourGlobal = four.globalBatch();
  for (int rank = 0; rank < 4; ++rank) {
    std::unique_ptr<Dataset> whole;
    ASSERT_TRUE(Dataset::open(dir, fourGlobal, {0, false}, whole).ok());
    auto slice = Dataset::rankSlice(std::move(whole), four, rank);
    EXPECT_EQ(slice->realRows(0), 1) << rank;
    EXPECT_EQ(slice->realRows(1), rank == 0 ? 1 : 0) << rank;
    Batch batch;
    ASSERT_TRUE(slice->batch(0, batch).ok());
    EXPECT_EQ(examplesOf(batch), std::vector<int64_t>{rank});
  }
}

// In training every row of every rank is real.
TEST(DatasetRankSlice, TrainingRowsAreAllReal) {
  ScratchDirectory dirScratch;
  const std::string &dir = dirScratch.path;
  writeExamples(dir, 10);
  ModelInfo model = exampleModel(4, 2);
  ModelInfo global = model.globalBatch();
  std::unique_ptr<Dataset> whole, reference;
  ASSERT_TRUE(Dataset::open(dir, global, {2, true}, whole).ok());
  ASSERT_TRUE(Dataset::open(dir, global, {2, true}, reference).ok());
  auto slice = Dataset::rankSlice(std::move(whole), model, 1);
  EXPECT_EQ(slice->realRows(1), 2);
  Batch part, all;
  ASSERT_TRUE(slice->batch(3, part).ok());
  ASSERT_TRUE(reference->batch(3, all).ok());
  std::vector<int64_t> globalExamples = examplesOf(all);
  EXPECT_EQ(examplesOf(part),
            (std::vector<int64_t>{globalExamples[2], globalExamples[3]}));
}
