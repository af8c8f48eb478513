//===- Communicator.h - collectives across the ranks of a job ---*- C++ -*-===//
//
// The communication layer sharded training steps run on: the collectives of
// the gacc dialect (all-reduce, reduce-scatter, all-gather, broadcast) over
// the ranks of one job, on raw buffers of a dtype. Implementations: one rank
// (copies), MPI (Open MPI; CPU, across machines with mpirun), NCCL (GPU
// buffers; loaded with dlopen, bootstrapped over MPI). Each rank counts the volume it moves, in
// elements, as the ZeRO paper does: an all-reduce of n elements moves 2n
// (a reduce-scatter and an all-gather), a reduce-scatter or an all-gather
// of n (the full tensor) n, a broadcast n.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_COMMUNICATOR_H
#define GACC_RUNTIME_COMMUNICATOR_H

#include "gacc/runtime/Status.h"
#include "gacc/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace gacc::rt {

enum class Reduction { Sum, Mean };

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// `data` (count elements) becomes the sum or mean over the ranks.
  virtual Status allReduce(void *data, int64_t count, DType dtype,
                           Reduction reduction) = 0;
  /// `send` holds size() · `count` elements; `recv` gets this rank's shard
  /// (shard r = elements [r·count, (r+1)·count)) of their sum or mean.
  virtual Status reduceScatter(const void *send, void *recv, int64_t count,
                               DType dtype, Reduction reduction) = 0;
  /// `recv` (size() · `count` elements) gets every rank's `send` (count
  /// elements), in rank order.
  virtual Status allGather(const void *send, void *recv, int64_t count,
                           DType dtype) = 0;
  /// `data` becomes rank `root`'s.
  virtual Status broadcast(void *data, int64_t count, DType dtype,
                           int root) = 0;
  /// Ends the whole job with `message` on this rank's stderr: what a rank
  /// does on an error the others cannot see, so that none of them hangs.
  [[noreturn]] virtual void abort(const std::string &message) = 0;

  /// Elements moved by this rank's collectives so far (see above).
  int64_t volume() const { return volume_; }

protected:
  int64_t volume_ = 0;
};

/// A job of one rank: every collective is a copy (or nothing).
std::unique_ptr<Communicator> createSingleRankCommunicator();

/// The ranks of the MPI job this process runs in (mpirun), initializing
/// MPI; an error if this runtime was built without MPI.
Status createMpiCommunicator(std::unique_ptr<Communicator> &out);

/// NCCL over the ranks of `bootstrap` (which must outlive it; MPI across
/// processes, or one rank), this rank on GPU `device`: buffers are device
/// pointers. NCCL and the CUDA runtime are loaded with dlopen; without them
/// (or a driver) it is an error that says which is missing.
Status createNcclCommunicator(Communicator &bootstrap, int device,
                              std::unique_ptr<Communicator> &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_COMMUNICATOR_H
