//===- Dataset.cpp - batches for a model's inputs ---------------------------===//

#include "gacc/runtime/Dataset.h"
#include "gacc/runtime/Init.h"
#include "gacc/runtime/Npy.h"
#include "gacc/runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sys/stat.h>

namespace gacc::rt {

namespace {
bool isIdInput(const Input &input) {
  return input.kind == InputKind::Labels || input.kind == InputKind::Tokens;
}

/// Examples held in memory, one [N, ...] tensor per input.
class FileDataset : public Dataset {
public:
  FileDataset(const ModelInfo &model, Batch examples, int64_t count,
              uint64_t seed, bool shuffle)
      : model_(model), examples_(std::move(examples)), count_(count),
        seed_(seed), shuffle_(shuffle) {}

  uint64_t batchesPerEpoch() const override {
    return static_cast<uint64_t>(count_ / model_.batchSize);
  }

  Status batch(uint64_t step, Batch &out) override {
    uint64_t perEpoch = batchesPerEpoch();
    uint64_t epoch = step / perEpoch, index = step % perEpoch;
    if (epoch != cachedEpoch_) {
      order_.resize(count_);
      std::iota(order_.begin(), order_.end(), 0);
      if (shuffle_) { // Fisher-Yates from a per-epoch stream
        Random random(mixSeeds(seed_, epoch));
        for (int64_t i = count_ - 1; i > 0; --i)
          std::swap(order_[i], order_[random.below(i + 1)]);
      }
      cachedEpoch_ = epoch;
    }
    out.clear();
    int64_t batchSize = model_.batchSize;
    for (const Input &input : model_.inputs) {
      const Tensor &all = examples_.at(input.slot.name);
      Tensor tensor(input.slot.dtype, input.slot.shape);
      size_t rowBytes = tensor.byteSize() / batchSize;
      for (int64_t row = 0; row < batchSize; ++row)
        std::memcpy(tensor.data() + row * rowBytes,
                    all.data() + order_[index * batchSize + row] * rowBytes,
                    rowBytes);
      out.emplace(input.slot.name, std::move(tensor));
    }
    return Status();
  }

private:
  const ModelInfo &model_;
  Batch examples_;
  int64_t count_;
  uint64_t seed_;
  bool shuffle_;
  std::vector<int64_t> order_;
  uint64_t cachedEpoch_ = UINT64_MAX;
};

Status checkExamples(const std::string &path, const ModelInfo &model,
                     const Batch &examples, int64_t &count) {
  count = -1;
  for (const Input &input : model.inputs) {
    auto it = examples.find(input.slot.name);
    if (it == examples.end())
      return Status::error(path + ": no data for input '" + input.slot.name +
                           "'");
    const Tensor &tensor = it->second;
    std::vector<int64_t> rowShape(input.slot.shape.begin() + 1,
                                  input.slot.shape.end());
    std::vector<int64_t> got(tensor.shape().empty() ? tensor.shape().begin()
                                                    : tensor.shape().begin() + 1,
                             tensor.shape().end());
    if (tensor.dtype() != input.slot.dtype)
      return Status::error(path + ": input '" + input.slot.name + "' is " +
                           std::string(dtypeName(tensor.dtype())) +
                           ", the model expects " +
                           std::string(dtypeName(input.slot.dtype)));
    if (tensor.shape().empty() || got != rowShape)
      return Status::error(path + ": input '" + input.slot.name +
                           "' has shape " + shapeString(tensor.shape()) +
                           ", the model expects [N, " +
                           shapeString(rowShape).substr(1));
    int64_t rows = tensor.shape()[0];
    if (count >= 0 && rows != count)
      return Status::error(path + ": inputs hold different numbers of "
                                  "examples (" +
                           std::to_string(count) + " and " +
                           std::to_string(rows) + ")");
    count = rows;
    if (isIdInput(input) && input.classes > 0) {
      for (int64_t i = 0; i < tensor.numElements(); ++i) {
        double id = loadElement(tensor.dtype(), tensor.data(), i);
        bool ignored = input.ignoreIndex && id == *input.ignoreIndex;
        if (!ignored && (id < 0 || id >= input.classes))
          return Status::error(
              path + ": input '" + input.slot.name + "' element " +
              std::to_string(i) + " is " + std::to_string(int64_t(id)) +
              ", outside [0, " + std::to_string(input.classes) + ")");
      }
    }
  }
  if (count < model.batchSize)
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
                     uint64_t seed, bool shuffle,
                     std::unique_ptr<Dataset> &out) {
  Batch examples;
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return Status::error(path + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) {
    for (const Input &input : model.inputs) {
      Tensor tensor;
      if (Status status = readNpy(path + "/" + input.slot.name + ".npy", tensor);
          !status)
        return status;
      examples.emplace(input.slot.name, std::move(tensor));
    }
  } else {
    TensorFile file;
    if (Status status = readSafetensors(path, file); !status)
      return status;
    examples = std::move(file.tensors);
  }
  int64_t count = 0;
  if (Status status = checkExamples(path, model, examples, count); !status)
    return status;
  out = std::make_unique<FileDataset>(model, std::move(examples), count, seed,
                                      shuffle);
  return Status();
}

std::unique_ptr<Dataset> Dataset::synthetic(const ModelInfo &model,
                                            uint64_t seed) {
  return std::make_unique<SyntheticDataset>(model, seed);
}

namespace {
class RankSlice : public Dataset {
public:
  RankSlice(std::unique_ptr<Dataset> global, int64_t rows, int rank)
      : global_(std::move(global)), rows_(rows), rank_(rank) {}
  Status batch(uint64_t step, Batch &out) override {
    Batch whole;
    if (Status status = global_->batch(step, whole); !status)
      return status;
    out.clear();
    for (auto &[name, tensor] : whole) {
      std::vector<int64_t> shape = tensor.shape();
      size_t rowBytes = tensor.byteSize() / shape[0];
      shape[0] = rows_;
      Tensor slice(tensor.dtype(), shape);
      std::memcpy(slice.data(),
                  static_cast<const std::byte *>(tensor.data()) +
                      rank_ * rows_ * rowBytes,
                  slice.byteSize());
      out.emplace(name, std::move(slice));
    }
    return Status();
  }
  uint64_t batchesPerEpoch() const override {
    return global_->batchesPerEpoch();
  }

private:
  std::unique_ptr<Dataset> global_;
  int64_t rows_;
  int rank_;
};
} // namespace

std::unique_ptr<Dataset> Dataset::rankSlice(std::unique_ptr<Dataset> global,
                                            const ModelInfo &model, int rank) {
  return std::make_unique<RankSlice>(std::move(global),
                                     model.batchSize / model.ranks, rank);
}

} // namespace gacc::rt
