//===- Dataset.h - batches for a model's inputs -------------------*- C++ -*-===//
#ifndef GACC_RUNTIME_DATASET_H
#define GACC_RUNTIME_DATASET_H

#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Status.h"

#include <map>
#include <memory>

namespace gacc::rt {

using Batch = std::map<std::string, Tensor>;

/// How a dataset orders its examples.
struct DataOrder {
  uint64_t seed = 0;
  /// Training: epochs in an order shuffled afresh from `seed` every epoch,
  /// a final partial batch dropped. Evaluation (false): file order and every
  /// example, the last batch padded (see Dataset::realRows).
  bool training = true;
};

/// A token file as nanoGPT's prepare scripts write it: the ids of one long
/// text, back to back, as little-endian uint16 or uint32.
struct TokenFileOptions {
  enum class Width { U16, U32 } width = Width::U16;
  /// Training windows: `Epochs` visits each of the file's non-overlapping
  /// windows once per epoch (shuffled); `Random` draws each window's start
  /// uniformly (nanoGPT's get_batch). Evaluation always reads every window.
  enum class Sampling { Epochs, Random } sampling = Sampling::Epochs;
};

/// A source of batches, one tensor per model input, named like it. Every
/// batch is a function of its step (and the seed), so a run resumed at a
/// step sees what an uninterrupted one does.
class Dataset {
public:
  virtual ~Dataset() = default;
  /// The batch of step `step` (counted from 0).
  virtual Status batch(uint64_t step, Batch &out) = 0;
  /// Batches in one pass over the data (0 for endless synthetic data).
  virtual uint64_t batchesPerEpoch() const = 0;
  /// Examples of batch `step` that are data: all of them, except in the
  /// last batch of an evaluation pass, whose other rows repeat its first.
  virtual int64_t realRows(uint64_t step) const = 0;
  /// Batch `step` with every row a copy of its first: with batch(step),
  /// what separates the loss of a padded batch's real rows (Run.cpp).
  virtual Status firstRowBatch(uint64_t step, Batch &out);

  /// Examples from `path`: a .safetensors file (read whole), or a directory
  /// of `<input>.npy` files, each holding [N, ...] for one input (mapped,
  /// read a batch at a time). Checks names, dtypes, shapes and label
  /// ranges.
  static Status open(const std::string &path, const ModelInfo &model,
                     const DataOrder &order, std::unique_ptr<Dataset> &out);

  /// Windows of a token file (mapped, never read whole) for a model whose
  /// inputs are tokens [B, T] and next-token labels [B, T] (and masks, set
  /// to ones): each example is T + 1 consecutive tokens, the first T its
  /// tokens and the last T its labels. Checks the file's size against the
  /// width, that it holds a window, and every id against the vocabulary.
  static Status openTokens(const std::string &path, const ModelInfo &model,
                           const DataOrder &order,
                           const TokenFileOptions &options,
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

  /// `source` read ahead by a background thread from step `first` (where
  /// a resumed run begins): while the step runs, the next `depth` batches
  /// are prepared, so that it never waits for data that arrives in order (a
  /// jump starts afresh). A depth of 0 gives `source` itself.
  static std::unique_ptr<Dataset> prefetch(std::unique_ptr<Dataset> source,
                                           unsigned depth, uint64_t first = 0);
};

} // namespace gacc::rt

#endif // GACC_RUNTIME_DATASET_H
