//===- Collectives.h - the collectives compiled steps call ------*- C++ -*-===//
//
// Compiled code runs a gacc collective as a call of one of these functions
// (see convert-gacc-to-linalg): its operand and a fresh, contiguous result
// buffer as unranked memrefs (rank, descriptor), the element type as a
// DType number, and the reduction (0 sum, 1 mean) or broadcast root. They
// run on the communicator the trainer installs around each call of the
// step; an error there cannot return through compiled code, so it ends the
// whole job (Communicator::abort) with the communicator's message.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_COLLECTIVES_H
#define GACC_RUNTIME_COLLECTIVES_H

#include "gacc/runtime/Communicator.h"

#include <cstdint>

namespace gacc::rt {

/// The communicator compiled collectives use from now on on this thread;
/// null: one rank.
void setStepCommunicator(Communicator *communicator);

} // namespace gacc::rt

extern "C" {
void gacc_comm_all_reduce(int64_t inRank, void *in, int64_t outRank, void *out,
                          int32_t dtype, int32_t reduction);
void gacc_comm_reduce_scatter(int64_t inRank, void *in, int64_t outRank,
                              void *out, int32_t dtype, int32_t reduction);
void gacc_comm_all_gather(int64_t inRank, void *in, int64_t outRank, void *out,
                          int32_t dtype, int32_t unused);
void gacc_comm_broadcast(int64_t inRank, void *in, int64_t outRank, void *out,
                         int32_t dtype, int32_t root);
}

#endif // GACC_RUNTIME_COLLECTIVES_H
