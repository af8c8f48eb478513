//===- Checkpoint.h - a trainer's state on disk -----------------*- C++ -*-===//
//
// The files a Trainer saves and loads (Trainer.h; docs/zero.md), all
// safetensors:
// - parameter files (--init): one whole tensor per parameter, by its name;
// - checkpoints (--save, --resume): the parameters (the f32 master weights of
//   16-bit ones), the optimizer state and loss scale whole, and the i64
//   scalars `step` and `optimizer_step`; metadata format=gacc-checkpoint,
//   version=1, `parameters` (a JSON array of the parameters' names) and,
//   with LoRA adapters, `lora` (a JSON object: each adapted weight's name to
//   its adapter's `a`, `b`, `scale` and `transposed`);
// - sharded checkpoints (--save-sharded, ZeRO): a directory with one
//   rank-<r>-of-<N>.safetensors per rank (the slots that rank holds, shards
//   as they are, and the counters; metadata format=gacc-sharded-checkpoint,
//   rank, ranks, zero_stage, and the parameters and lora of a whole one)
//   and an index.json that rank 0 writes last (its
//   ranks, stage, step, files, and each tensor's dtype, whole shape and
//   whether it is sharded).
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CHECKPOINT_H
#define GACC_RUNTIME_CHECKPOINT_H

#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Safetensors.h"
#include "gacc/runtime/Status.h"

#include <map>
#include <string>

namespace gacc::rt {

/// The checkpoint (as Trainer::checkpoint gives) that the sharded one in
/// `dir` holds, with every tensor whole: what runs on any number of ranks,
/// one included, resume from.
Status consolidateCheckpoint(const std::string &dir, TensorFile &out);

/// The weights of `checkpoint` (a whole one) for use outside gacc, as
/// `gacc export` writes them: its parameters alone, by their names, without
/// optimizer state or counters; with `mergeLora`, each LoRA-adapted weight
/// W as `W + scale·B·A` (in W's layout) and the adapters left out, so that
/// the file loads into the model without adapters. Fails naming what a
/// checkpoint without that metadata, or with inconsistent tensors, lacks.
Status exportWeights(const TensorFile &checkpoint, bool mergeLora,
                     TensorFile &out);

/// The adapters of `model`'s parameters, by adapted weight.
std::map<std::string, LoraAdapter> loraAdapters(const ModelInfo &model);

/// Merges each adapter of `adapters` (adapted weight name → adapter) into
/// the weights of `file` and removes its A and B.
Status mergeLoraAdapters(TensorFile &file,
                         const std::map<std::string, LoraAdapter> &adapters);

} // namespace gacc::rt

#endif // GACC_RUNTIME_CHECKPOINT_H
