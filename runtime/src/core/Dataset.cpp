//===- Dataset.cpp - batches for a model's inputs ---------------------------===//

#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/File.h"
#include "gacc/runtime/Init.h"
#include "gacc/runtime/Npy.h"
#include "gacc/runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <numeric>
#include <sys/stat.h>
#include <thread>

namespace gacc::rt {

namespace {
bool isIdInput(const Input &input) {
  return input.kind == InputKind::Labels || input.kind == InputKind::Tokens;
}

/// One input's examples: [N, ...] of `dtype`, at `data` in a tensor the
/// dataset holds, or at byte `offset` of `file`, read a row at a time.
struct ExampleArray {
  DType dtype;
  std::vector<int64_t> shape;
  const std::byte *data = nullptr;
  const RandomAccessFile *file = nullptr;
  uint64_t offset = 0;

  /// Copies `length` bytes from byte `at` of the examples to `out`.
  Status read(uint64_t at, size_t length, std::byte *out) const {
    if (file)
      return file->read(offset + at, length, out);
    std::memcpy(out, data + at, length);
    return Status();
  }
};

/// The rows of batch `index` (of `batchSize`) of an evaluation pass over
/// `count` examples: file order, the rows past the end repeating the
/// batch's first.
int64_t evaluationRow(uint64_t index, int64_t row, int64_t batchSize,
                      int64_t count) {
  int64_t example = static_cast<int64_t>(index) * batchSize + row;
  return example < count ? example : static_cast<int64_t>(index) * batchSize;
}

/// The rows of batch `index` of an evaluation pass over `count` examples
/// that are data (Dataset::realRows).
int64_t evaluationRealRows(uint64_t index, int64_t batchSize, int64_t count) {
  return std::min<int64_t>(batchSize,
                           count - static_cast<int64_t>(index) * batchSize);
}

/// Examples of a .safetensors file or a directory of .npy files.
class FileDataset : public Dataset {
public:
  FileDataset(const ModelInfo &model,
              std::map<std::string, ExampleArray> arrays, int64_t count,
              const DataOrder &order, Batch owned,
              std::vector<std::unique_ptr<RandomAccessFile>> files)
      : model_(model), arrays_(std::move(arrays)), count_(count), order_(order),
        owned_(std::move(owned)), files_(std::move(files)) {}

  uint64_t batchesPerEpoch() const override {
    int64_t batchSize = model_.batchSize;
    return static_cast<uint64_t>(order_.training
                                     ? count_ / batchSize
                                     : (count_ + batchSize - 1) / batchSize);
  }

  int64_t realRows(uint64_t step) const override {
    return order_.training ? model_.batchSize
                           : evaluationRealRows(step % batchesPerEpoch(),
                                                model_.batchSize, count_);
  }

  Status batch(uint64_t step, Batch &out) override {
    uint64_t perEpoch = batchesPerEpoch();
    uint64_t epoch = step / perEpoch, index = step % perEpoch;
    if (order_.training && epoch != cachedEpoch_) {
      permutation_.resize(count_);
      std::iota(permutation_.begin(), permutation_.end(), 0);
      // Fisher-Yates from a per-epoch stream.
      Random random(mixSeeds(order_.seed, epoch));
      for (int64_t i = count_ - 1; i > 0; --i)
        std::swap(permutation_[i], permutation_[random.below(i + 1)]);
      cachedEpoch_ = epoch;
    }
    out.clear();
    int64_t batchSize = model_.batchSize;
    for (const Input &input : model_.inputs) {
      const ExampleArray &all = arrays_.at(input.slot.name);
      Tensor tensor(input.slot.dtype, input.slot.shape);
      size_t rowBytes = tensor.byteSize() / batchSize;
      for (int64_t row = 0; row < batchSize; ++row) {
        int64_t example = order_.training
                              ? permutation_[index * batchSize + row]
                              : evaluationRow(index, row, batchSize, count_);
        if (Status s = all.read(example * rowBytes, rowBytes,
                                tensor.data() + row * rowBytes);
            !s)
          return s;
      }
      out.emplace(input.slot.name, std::move(tensor));
    }
    return Status();
  }

private:
  const ModelInfo &model_;
  std::map<std::string, ExampleArray> arrays_;
  int64_t count_;
  DataOrder order_;
  Batch owned_; ///< the tensors of a .safetensors file
  std::vector<std::unique_ptr<RandomAccessFile>> files_; ///< the .npy files
  std::vector<int64_t> permutation_;
  uint64_t cachedEpoch_ = UINT64_MAX;
};

/// The bytes of a file that checking its ids reads at a time: what
/// checking holds, a few batches at most.
constexpr int64_t kCheckedBytes = 64 << 10;

/// Checks that the ids in [0, count) of `ids` lie in [0, classes) (or are
/// the ignore index).
Status checkIds(const std::string &path, const Input &input,
                const ExampleArray &ids, int64_t count) {
  size_t width = byteWidth(ids.dtype);
  const int64_t chunk = kCheckedBytes / width;
  std::vector<std::byte> buffer(chunk * width);
  for (int64_t start = 0; start < count; start += chunk) {
    int64_t stop = std::min(count, start + chunk);
    if (Status s =
            ids.read(start * width, (stop - start) * width, buffer.data());
        !s)
      return s;
    for (int64_t i = start; i < stop; ++i) {
      double id = loadElement(ids.dtype, buffer.data(), i - start);
      bool ignored = input.ignoreIndex && id == *input.ignoreIndex;
      if (!ignored && (id < 0 || id >= input.classes))
        return Status::error(path + ": input '" + input.slot.name +
                             "' element " + std::to_string(i) + " is " +
                             std::to_string(int64_t(id)) + ", outside [0, " +
                             std::to_string(input.classes) + ")");
    }
  }
  return Status();
}

Status checkExamples(const std::string &path, const ModelInfo &model,
                     const std::map<std::string, ExampleArray> &arrays,
                     const DataOrder &order, int64_t &count) {
  count = -1;
  for (const Input &input : model.inputs) {
    if (input.slot.shape.empty() || input.slot.shape[0] != model.batchSize)
      return Status::error(path + ": input '" + input.slot.name +
                           "' is not batched by the model's batch of " +
                           std::to_string(model.batchSize) +
                           " (open data for model.globalBatch())");
    auto it = arrays.find(input.slot.name);
    if (it == arrays.end())
      return Status::error(path + ": no data for input '" + input.slot.name +
                           "'");
    const ExampleArray &array = it->second;
    std::vector<int64_t> rowShape(input.slot.shape.begin() + 1,
                                  input.slot.shape.end());
    std::vector<int64_t> got(array.shape.empty() ? array.shape.begin()
                                                 : array.shape.begin() + 1,
                             array.shape.end());
    if (array.dtype != input.slot.dtype)
      return Status::error(path + ": input '" + input.slot.name + "' is " +
                           std::string(dtypeName(array.dtype)) +
                           ", the model expects " +
                           std::string(dtypeName(input.slot.dtype)));
    if (array.shape.empty() || got != rowShape) {
      return Status::error(
          path + ": input '" + input.slot.name + "' has shape " +
          shapeString(array.shape) + ", the model expects [N" +
          (rowShape.empty() ? "]" : ", " + shapeString(rowShape).substr(1)));
    }
    int64_t rows = array.shape[0];
    if (count >= 0 && rows != count)
      return Status::error(path + ": inputs hold different numbers of "
                                  "examples (" +
                           std::to_string(count) + " and " +
                           std::to_string(rows) + ")");
    count = rows;
    if (isIdInput(input) && input.classes > 0)
      if (Status s = checkIds(path, input, array, *elementCount(array.shape));
          !s)
        return s;
  }
  // (Evaluation pads a last partial batch, so one example is enough.)
  if (count < (order.training ? model.batchSize : 1))
    return Status::error(path + ": holds " + std::to_string(count) +
                         " examples, fewer than one batch of " +
                         std::to_string(model.batchSize));
  return Status();
}

/// See Dataset::synthetic.
class SyntheticDataset : public Dataset {
public:
  SyntheticDataset(const ModelInfo &model, uint64_t seed)
      : model_(model), seed_(seed) {}

  uint64_t batchesPerEpoch() const override { return 0; }
  int64_t realRows(uint64_t) const override { return model_.batchSize; }

  Status batch(uint64_t step, Batch &out) override {
    out.clear();
    const Input *features = nullptr, *tokens = nullptr;
    for (const Input &input : model_.inputs) {
      if (input.kind == InputKind::Features && !features)
        features = &input;
      if (input.kind == InputKind::Tokens && !tokens)
        tokens = &input;
    }
    // Features and tokens first: labels are computed from them.
    for (const Input &input : model_.inputs) {
      if (input.kind == InputKind::Labels)
        continue;
      Tensor tensor(input.slot.dtype, input.slot.shape);
      Random random(mixSeeds(mixSeeds(seed_, step), out.size() + 1));
      int64_t count = tensor.numElements();
      if (input.kind == InputKind::Features) {
        for (int64_t i = 0; i < count; ++i)
          storeElement(tensor.dtype(), tensor.data(), i, random.normal());
      } else if (input.kind == InputKind::Tokens) {
        int64_t rows = input.slot.shape[0], length = count / rows;
        int64_t vocab = std::max<int64_t>(input.classes, 1);
        for (int64_t r = 0; r < rows; ++r) {
          int64_t start = static_cast<int64_t>(random.below(vocab));
          for (int64_t t = 0; t < length; ++t)
            storeElement(tensor.dtype(), tensor.data(), r * length + t,
                         (start + t) % vocab);
        }
      } else {
        for (int64_t i = 0; i < count; ++i)
          storeElement(tensor.dtype(), tensor.data(), i, 1.0);
      }
      out.emplace(input.slot.name, std::move(tensor));
    }
    for (const Input &input : model_.inputs)
      if (input.kind == InputKind::Labels)
        out.emplace(input.slot.name, labels(input, features, tokens, out));
    return Status();
  }

private:
  Tensor labels(const Input &input, const Input *features,
                const Input *tokens, const Batch &batch) {
    Tensor tensor(input.slot.dtype, input.slot.shape);
    int64_t classes = std::max<int64_t>(input.classes, 2);
    int64_t count = tensor.numElements();
    if (tokens && tokens->slot.shape == input.slot.shape) {
      const Tensor &ids = batch.at(tokens->slot.name);
      for (int64_t i = 0; i < count; ++i)
        storeElement(tensor.dtype(), tensor.data(), i,
                     std::fmod(loadElement(ids.dtype(), ids.data(), i) + 1,
                               classes));
      return tensor;
    }
    if (features && features->slot.shape[0] == input.slot.shape[0]) {
      // A fixed linear teacher: label = argmax(W·x).
      const Tensor &x = batch.at(features->slot.name);
      int64_t rows = input.slot.shape[0], width = x.numElements() / rows;
      if (teacher_.size() != static_cast<size_t>(classes * width)) {
        Random random(mixSeeds(seed_, 0x7eac4e5));
        teacher_.resize(classes * width);
        for (double &w : teacher_)
          w = random.normal();
      }
      std::vector<double> row(width);
      for (int64_t r = 0; r < rows && r < count; ++r) {
        for (int64_t j = 0; j < width; ++j)
          row[j] = loadElement(x.dtype(), x.data(), r * width + j);
        int64_t best = 0;
        double bestScore = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) {
          double score = 0;
          for (int64_t j = 0; j < width; ++j)
            score += teacher_[c * width + j] * row[j];
          if (score > bestScore)
            bestScore = score, best = c;
        }
        storeElement(tensor.dtype(), tensor.data(), r, best);
      }
      return tensor;
    }
    Random random(mixSeeds(seed_, 0x1abe1));
    for (int64_t i = 0; i < count; ++i)
      storeElement(tensor.dtype(), tensor.data(), i, random.below(classes));
    return tensor;
  }

  const ModelInfo &model_;
  uint64_t seed_;
  std::vector<double> teacher_; ///< [classes, features], drawn once
};
} // namespace

Status Dataset::open(const std::string &path, const ModelInfo &model,
                     const DataOrder &order, std::unique_ptr<Dataset> &out) {
  Batch owned;
  std::vector<std::unique_ptr<RandomAccessFile>> files;
  std::map<std::string, ExampleArray> arrays;
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return Status::error(path + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) {
    for (const Input &input : model.inputs) {
      auto file = std::make_unique<RandomAccessFile>();
      NpyLayout layout;
      if (Status s = file->open(path + "/" + input.slot.name + ".npy"); !s)
        return s;
      if (Status s = readNpyLayout(*file, layout); !s)
        return s;
      arrays.emplace(input.slot.name,
                     ExampleArray{layout.dtype, layout.shape, nullptr,
                                  file.get(), layout.dataOffset});
      files.push_back(std::move(file));
    }
  } else {
    TensorFile file;
    if (Status status = readSafetensors(path, file); !status)
      return status;
    owned = std::move(file.tensors);
    for (const auto &[name, tensor] : owned)
      arrays.emplace(
          name, ExampleArray{tensor.dtype(), tensor.shape(), tensor.data()});
  }
  int64_t count = 0;
  if (Status status = checkExamples(path, model, arrays, order, count); !status)
    return status;
  out = std::make_unique<FileDataset>(model, std::move(arrays), count, order,
                                      std::move(owned), std::move(files));
  return Status();
}

namespace {
/// Token `index` of the little-endian ids of `width` bytes at `bytes`.
int64_t tokenAt(const std::byte *bytes, size_t width, int64_t index) {
  if (width == 2) {
    uint16_t id;
    std::memcpy(&id, bytes + 2 * index, 2);
    return id;
  }
  uint32_t id;
  std::memcpy(&id, bytes + 4 * index, 4);
  return id;
}

/// A bijection of [0, n) drawn from `key`: a four-round Feistel network on
/// the smallest even number of bits that holds n, walking the cycle back
/// into range. Shuffles a token file's windows without storing an order.
uint64_t permuteIndex(uint64_t index, uint64_t n, uint64_t key) {
  int half = 1;
  while (half < 32 && (uint64_t(1) << (2 * half)) < n)
    ++half;
  uint64_t mask = (uint64_t(1) << half) - 1, x = index;
  do {
    uint64_t left = x >> half, right = x & mask;
    for (uint64_t round = 0; round < 4; ++round) {
      uint64_t mixed = left ^ (mixSeeds(mixSeeds(key, round), right) & mask);
      left = right;
      right = mixed;
    }
    x = left << half | right;
  } while (x >= n);
  return x;
}

/// See Dataset::openTokens.
class TokenDataset : public Dataset {
public:
  TokenDataset(const ModelInfo &model, const DataOrder &order,
               const TokenFileOptions &options,
               std::unique_ptr<RandomAccessFile> file, int64_t context)
      : model_(model), order_(order), options_(options), file_(std::move(file)),
        context_(context),
        width_(options.width == TokenFileOptions::Width::U16 ? 2 : 4),
        tokens_(static_cast<int64_t>(file_->size() / width_)),
        windows_((tokens_ - 1) / context) {}

  /// (Random windows count an epoch as the batches that hold as many
  /// tokens as the file, at least one.)
  uint64_t batchesPerEpoch() const override {
    int64_t batchSize = model_.batchSize;
    if (!order_.training)
      return static_cast<uint64_t>((windows_ + batchSize - 1) / batchSize);
    return static_cast<uint64_t>(std::max<int64_t>(windows_ / batchSize, 1));
  }

  int64_t realRows(uint64_t step) const override {
    return order_.training ? model_.batchSize
                           : evaluationRealRows(step % batchesPerEpoch(),
                                                model_.batchSize, windows_);
  }

  Status batch(uint64_t step, Batch &out) override {
    out.clear();
    int64_t batchSize = model_.batchSize;
    std::vector<int64_t> window(context_ + 1);
    std::vector<std::byte> bytes((context_ + 1) * width_);
    for (const Input &input : model_.inputs)
      out.emplace(input.slot.name, Tensor(input.slot.dtype, input.slot.shape));
    for (int64_t row = 0; row < batchSize; ++row) {
      int64_t start = windowStart(step, row);
      if (Status s = file_->read(static_cast<uint64_t>(start) * width_,
                                 bytes.size(), bytes.data());
          !s)
        return s;
      for (int64_t t = 0; t <= context_; ++t)
        window[t] = tokenAt(bytes.data(), width_, t);
      for (const Input &input : model_.inputs) {
        Tensor &tensor = out.at(input.slot.name);
        int64_t shift = input.kind == InputKind::Labels ? 1 : 0;
        for (int64_t t = 0; t < context_; ++t)
          storeElement(tensor.dtype(), tensor.data(), row * context_ + t,
                       input.kind == InputKind::Mask ? 1.0 : window[t + shift]);
      }
    }
    return Status();
  }

private:
  /// The first token of row `row`'s window in batch `step`.
  int64_t windowStart(uint64_t step, int64_t row) {
    if (order_.training &&
        options_.sampling == TokenFileOptions::Sampling::Random) {
      Random random(mixSeeds(mixSeeds(order_.seed, step), row));
      return static_cast<int64_t>(random.below(tokens_ - context_));
    }
    int64_t batchSize = model_.batchSize;
    uint64_t perEpoch = batchesPerEpoch();
    uint64_t index = step % perEpoch;
    if (!order_.training)
      return evaluationRow(index, row, batchSize, windows_) * context_;
    uint64_t key = mixSeeds(order_.seed, step / perEpoch);
    return static_cast<int64_t>(
               permuteIndex(index * batchSize + row, windows_, key)) *
           context_;
  }

  const ModelInfo &model_;
  DataOrder order_;
  TokenFileOptions options_;
  std::unique_ptr<RandomAccessFile> file_;
  int64_t context_;
  size_t width_;
  int64_t tokens_, windows_;
};
} // namespace

Status Dataset::openTokens(const std::string &path, const ModelInfo &model,
                           const DataOrder &order,
                           const TokenFileOptions &options,
                           std::unique_ptr<Dataset> &out) {
  // The model: tokens [B, T], labels [B, T] (and masks), B the batch.
  const Input *tokens = nullptr;
  for (const Input &input : model.inputs)
    if (input.kind == InputKind::Tokens && !tokens)
      tokens = &input;
  if (!tokens)
    return Status::error(path + ": a token file feeds a model with a tokens "
                                "input; this one has none");
  for (const Input &input : model.inputs)
    if (input.kind == InputKind::Features ||
        input.slot.shape != tokens->slot.shape ||
        input.slot.shape.size() != 2 || input.slot.shape[0] != model.batchSize)
      return Status::error(
          path +
          ": a token file feeds a model whose inputs are tokens "
          "[B, T] and their next-token labels [B, T]; input '" +
          input.slot.name + "' is " + shapeString(input.slot.shape) +
          (input.kind == InputKind::Features ? " features" : ""));
  int64_t context = tokens->slot.shape[1];
  const char *widthName =
      options.width == TokenFileOptions::Width::U16 ? "uint16" : "uint32";
  size_t width = options.width == TokenFileOptions::Width::U16 ? 2 : 4;

  auto file = std::make_unique<RandomAccessFile>();
  if (Status s = file->open(path); !s)
    return s;
  if (file->size() % width)
    return Status::error(path + ": " + std::to_string(file->size()) +
                         " bytes are not a whole number of " + widthName +
                         " tokens (a truncated file, or another width: "
                         "--token-dtype)");
  int64_t count = static_cast<int64_t>(file->size() / width);
  if (count < context + 1)
    return Status::error(path + ": holds " + std::to_string(count) +
                         " tokens; one example needs " +
                         std::to_string(context + 1) + " (the context of " +
                         std::to_string(context) + " and the next token)");
  int64_t windows = (count - 1) / context;
  bool epochs =
      order.training && options.sampling == TokenFileOptions::Sampling::Epochs;
  if (epochs && windows < model.batchSize)
    return Status::error(path + ": holds " + std::to_string(windows) +
                         " windows of " + std::to_string(context + 1) +
                         " tokens, fewer than one batch of " +
                         std::to_string(model.batchSize) +
                         " (--token-sampling random draws overlapping ones)");
  // Every id against the vocabulary, before the first step.
  int64_t vocabulary = 0;
  for (const Input &input : model.inputs)
    if (input.kind != InputKind::Mask && input.classes > 0)
      vocabulary =
          vocabulary ? std::min(vocabulary, input.classes) : input.classes;
  if (vocabulary > 0) {
    const int64_t chunk = kCheckedBytes / width;
    std::vector<std::byte> bytes(chunk * width);
    for (int64_t start = 0; start < count; start += chunk) {
      int64_t stop = std::min(count, start + chunk);
      if (Status s =
              file->read(start * width, (stop - start) * width, bytes.data());
          !s)
        return s;
      // uint32 ids under 65536 read as uint16: every other id is 0.
      if (start == 0 && width == 2 && stop >= 256) {
        bool oddZero = true;
        for (int64_t i = 1; i < stop && oddZero; i += 2)
          oddZero = tokenAt(bytes.data(), width, i) == 0;
        if (oddZero)
          return Status::error(path + ": every other uint16 token is 0, as "
                                      "in uint32 ids read as uint16: give "
                                      "--token-dtype uint32");
      }
      for (int64_t i = start; i < stop; ++i)
        if (int64_t id = tokenAt(bytes.data(), width, i - start);
            id >= vocabulary)
          return Status::error(
              path + ": token " + std::to_string(i) + " is " +
              std::to_string(id) + ", outside the vocabulary [0, " +
              std::to_string(vocabulary) +
              ") (written with another tokenizer, or as another width than " +
              widthName + "?)");
    }
  }
  out = std::make_unique<TokenDataset>(model, order, options, std::move(file),
                                       context);
  return Status();
}

std::unique_ptr<Dataset> Dataset::synthetic(const ModelInfo &model,
                                            uint64_t seed) {
  return std::make_unique<SyntheticDataset>(model, seed);
}

Status Dataset::firstRowBatch(uint64_t step, Batch &out) {
  if (Status s = batch(step, out); !s)
    return s;
  for (auto &[name, tensor] : out) {
    size_t rowBytes = tensor.byteSize() / tensor.shape()[0];
    for (int64_t row = 1; row < tensor.shape()[0]; ++row)
      std::memcpy(tensor.data() + row * rowBytes, tensor.data(), rowBytes);
  }
  return Status();
}

namespace {
/// Rows [rank·rows, (rank+1)·rows) of each tensor of `whole`.
void sliceRows(const Batch &whole, int64_t rows, int rank, Batch &out) {
  out.clear();
  for (const auto &[name, tensor] : whole) {
    std::vector<int64_t> shape = tensor.shape();
    size_t rowBytes = tensor.byteSize() / shape[0];
    shape[0] = rows;
    Tensor slice(tensor.dtype(), shape);
    std::memcpy(slice.data(), tensor.data() + rank * rows * rowBytes,
                slice.byteSize());
    out.emplace(name, std::move(slice));
  }
}

class RankSlice : public Dataset {
public:
  RankSlice(std::unique_ptr<Dataset> global, int64_t rows, int rank)
      : global_(std::move(global)), rows_(rows), rank_(rank) {}
  Status batch(uint64_t step, Batch &out) override {
    Batch whole;
    if (Status status = global_->batch(step, whole); !status)
      return status;
    sliceRows(whole, rows_, rank_, out);
    return Status();
  }
  Status firstRowBatch(uint64_t step, Batch &out) override {
    Batch whole;
    if (Status status = global_->firstRowBatch(step, whole); !status)
      return status;
    sliceRows(whole, rows_, rank_, out);
    return Status();
  }
  uint64_t batchesPerEpoch() const override {
    return global_->batchesPerEpoch();
  }
  int64_t realRows(uint64_t step) const override {
    return std::clamp<int64_t>(global_->realRows(step) - rank_ * rows_, 0,
                               rows_);
  }

private:
  std::unique_ptr<Dataset> global_;
  int64_t rows_;
  int rank_;
};

/// See Dataset::prefetch. One worker thread calls the source, ahead of the
/// steps; every other call to the source holds sourceMutex_ as well.
class Prefetcher : public Dataset {
public:
  Prefetcher(std::unique_ptr<Dataset> source, unsigned depth, uint64_t first)
      : source_(std::move(source)), depth_(depth), next_(first),
        worker_([this] { work(); }) {}
  ~Prefetcher() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }

  Status batch(uint64_t step, Batch &out) override {
    std::unique_lock<std::mutex> lock(mutex_);
    bool inOrder = ready_.empty() ? next_ == step : ready_.front().step == step;
    if (!inOrder) { // start afresh at `step`; the worker drops what it makes
      ready_.clear();
      next_ = step;
      ++generation_;
      changed_.notify_all();
    }
    changed_.wait(lock, [&] { return !ready_.empty(); });
    Ready front = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
    out = std::move(front.batch);
    return front.status;
  }
  Status firstRowBatch(uint64_t step, Batch &out) override {
    std::lock_guard<std::mutex> lock(sourceMutex_);
    return source_->firstRowBatch(step, out);
  }
  uint64_t batchesPerEpoch() const override {
    return source_->batchesPerEpoch();
  }
  int64_t realRows(uint64_t step) const override {
    return source_->realRows(step);
  }

private:
  struct Ready {
    uint64_t step;
    Status status;
    Batch batch;
  };

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || ready_.size() < depth_; });
      if (stopping_)
        return;
      Ready made{next_, Status(), Batch()};
      uint64_t generation = generation_;
      lock.unlock();
      {
        std::lock_guard<std::mutex> sourceLock(sourceMutex_);
        made.status = source_->batch(made.step, made.batch);
      }
      lock.lock();
      if (generation != generation_)
        continue; // a jump made it stale
      ready_.push_back(std::move(made));
      ++next_;
      changed_.notify_all();
    }
  }

  std::unique_ptr<Dataset> source_;
  unsigned depth_;
  std::mutex mutex_, sourceMutex_;
  std::condition_variable changed_;
  std::deque<Ready> ready_; ///< batches next_ - size ... next_ - 1
  uint64_t next_ = 0, generation_ = 0;
  bool stopping_ = false;
  std::thread worker_; ///< last: starts once the rest is built
};
} // namespace

std::unique_ptr<Dataset> Dataset::prefetch(std::unique_ptr<Dataset> source,
                                           unsigned depth, uint64_t first) {
  if (depth == 0)
    return source;
  return std::make_unique<Prefetcher>(std::move(source), depth, first);
}

std::unique_ptr<Dataset> Dataset::rankSlice(std::unique_ptr<Dataset> global,
                                            const ModelInfo &model, int rank) {
  return std::make_unique<RankSlice>(std::move(global),
                                     model.batchSize / model.ranks, rank);
}

} // namespace gacc::rt
