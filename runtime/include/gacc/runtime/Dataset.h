//===- Dataset.h - batches for a model's inputs -------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_DATASET_H
#define GACC_RUNTIME_DATASET_H

#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Status.h"

#include <map>
#include <memory>

namespace gacc::rt {

using Batch = std::map<std::string, Tensor>;

/// A source of batches, one tensor per model input, named like it.
class Dataset {
public:
  virtual ~Dataset() = default;
  /// The batch of step `step` (counted from 0). The same step always gives
  /// the same batch, so a resumed run sees what an uninterrupted one does.
  virtual Status batch(uint64_t step, Batch &out) = 0;
  /// Batches in one pass over the data (0 for endless synthetic data).
  virtual uint64_t batchesPerEpoch() const = 0;

  /// Examples from `path`: a .safetensors file, or a directory of
  /// `<input>.npy` files, each holding [N, ...] for one input. Training data
  /// is reshuffled every epoch from `seed`; with `shuffle` false the batches
  /// follow the file order (evaluation). A final partial batch is dropped.
  /// Checks names, dtypes, shapes and label ranges.
  static Status open(const std::string &path, const ModelInfo &model,
                     uint64_t seed, bool shuffle,
                     std::unique_ptr<Dataset> &out);

  /// Deterministic synthetic data that a model can learn: features are
  /// standard normal; labels come from a fixed random linear teacher over
  /// the features; a labels input shaped like a tokens input holds the next
  /// token of a counting sequence; masks are ones.
  static std::unique_ptr<Dataset> synthetic(const ModelInfo &model,
                                            uint64_t seed);

  /// Rank `rank`'s examples of `global`'s batches (opened for
  /// model.globalBatch()): rows [rank·b, (rank+1)·b) of each, b the
  /// examples of one rank, so that the ranks together see what one rank
  /// would.
  static std::unique_ptr<Dataset> rankSlice(std::unique_ptr<Dataset> global,
                                            const ModelInfo &model, int rank);
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_DATASET_H
