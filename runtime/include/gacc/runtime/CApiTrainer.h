//===- CApiTrainer.h - the C API's trainer handle, for C++ ------*- C++ -*-===//
//
// What a C entry point outside the runtime needs to hand back a trainer
// that the C API (c_api.h) drives and to report its failures through
// gacc_last_error(): the JIT's gacc_trainer_compile (compiler/jit/c_api.h)
// is one.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_CAPITRAINER_H
#define GACC_RUNTIME_CAPITRAINER_H

#include "gacc/runtime/Trainer.h"
#include "gacc/runtime/c_api.h"

#include <memory>

struct gacc_trainer {
  std::unique_ptr<gacc::rt::Trainer> trainer;
};

namespace gacc::rt {

/// 0 if `status` is ok; otherwise -1, with its message for gacc_last_error()
/// on this thread.
int reportCApiStatus(const Status &status);

} // namespace gacc::rt

#endif // GACC_RUNTIME_CAPITRAINER_H
