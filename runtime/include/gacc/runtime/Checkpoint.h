//===- Checkpoint.h - a trainer's state on disk -----------------*- C++ -*-===//
//
// The files a Trainer saves and loads (Trainer.h; docs/zero.md), all
// safetensors:
// - parameter files (--init): one whole tensor per parameter, by its name;
// - checkpoints (--save, --resume): the parameters (the f32 master weights of
//   16-bit ones), the optimizer state and loss scale whole, and the i64
//   scalars `step` and `optimizer_step`; metadata format=gacc-checkpoint,
//   version=1;
// - sharded checkpoints (--save-sharded, ZeRO): a directory with one
//   rank-<r>-of-<N>.safetensors per rank (the slots that rank holds, shards
//   as they are, and the counters; metadata format=gacc-sharded-checkpoint,
//   rank, ranks, zero_stage) and an index.json that rank 0 writes last (its
//   ranks, stage, step, files, and each tensor's dtype, whole shape and
//   whether it is sharded).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CHECKPOINT_H
#define GACC_RUNTIME_CHECKPOINT_H

#include "gacc/runtime/Safetensors.h"
#include "gacc/runtime/Status.h"

#include <string>

namespace gacc::rt {

/// The checkpoint (as Trainer::checkpoint gives) that the sharded one in
/// `dir` holds, with every tensor whole: what runs on any number of ranks,
/// one included, resume from.
Status consolidateCheckpoint(const std::string &dir, TensorFile &out);

} // namespace gacc::rt

#endif // GACC_RUNTIME_CHECKPOINT_H
