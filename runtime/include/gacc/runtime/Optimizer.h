//===- Optimizer.h - per-step optimizer scalars -------------------*- C++ -*-===//
//
// The scalars a compiled step reads from the io arena's "hyper" slot,
// computed in double precision from the step counter as torch.optim does on
// the host: the scheduled learning rate and AdamW's bias corrections.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_OPTIMIZER_H
#define GACC_RUNTIME_OPTIMIZER_H

#include "gacc/runtime/ModelInfo.h"

#include <array>

namespace gacc::rt {

/// The learning rate of step `step` (counted from 0) for base rate `lr`.
double scheduledLearningRate(const ScheduleConfig &schedule, double lr,
                             uint64_t step);

/// The hyper slot of step `step` (counted from 0):
///   SGD:   [lr, momentum coefficient, gradient coefficient, 0]
///          (the first step copies the gradient into the momentum buffer)
///   AdamW: [1 - lr·weight_decay, lr / (1 - β1^t), sqrt(1 - β2^t), 0],
///          t = step + 1.
std::array<double, 4> optimizerScalars(const OptimizerConfig &optimizer,
                                       double lr, uint64_t step);

} // namespace gacc::rt

#endif // GACC_RUNTIME_OPTIMIZER_H
