//===- Optimizer.h - per-step optimizer scalars -------------------*- C++ -*-===//
//
// The scalars a compiled step's optimizer update reads from the io arena,
// one named slot each (ModelInfo::hyper), computed in double precision
// from the step counter as torch.optim does on the host: the scheduled
// learning rate, AdamW's bias corrections. Each optimizer's scalars are one
// formula in Optimizer.cpp's table, named as the compiler's optimizer class
// (passes/optimizers/) reads them.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_RUNTIME_OPTIMIZER_H
#define GACC_RUNTIME_OPTIMIZER_H

#include "gacc/runtime/ModelInfo.h"
#include "gacc/runtime/Status.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace gacc::rt {

/// The learning rate of step `step` (counted from 0) for base rate `lr`.
double scheduledLearningRate(const ScheduleConfig &schedule, double lr,
                             uint64_t step);

/// Per-step scalars by name.
using StepScalars = std::vector<std::pair<std::string, double>>;

/// The per-step scalars of `optimizer` at step `step` (counted from 0) with
/// learning rate `lr`: "lr" for every optimizer, and its formula's:
///   sgd:   "momentum_coefficient" and "gradient_coefficient", with which
///          buffer = momentum_coefficient·buffer + gradient_coefficient·g:
///          0 and 1 on the first step (which copies the gradient into the
///          buffer), then momentum and 1 - dampening;
///   adamw: "weight_decay_factor" 1 - lr·weight_decay, "step_size"
///          lr / (1 - β1^t) and "bias_correction2_sqrt" sqrt(1 - β2^t),
///          t = step + 1;
///   adafactor: "step_size", min(1e-2, 1/sqrt(t)) with relative_step
///          (min(1e-6·t, 1/sqrt(t)) with warmup_init), else lr; "beta2t"
///          1 - t^decay_rate.
/// Fails naming a hyperparameter the formula reads that `optimizer` lacks.
Status optimizerScalars(const OptimizerConfig &optimizer, double lr,
                        uint64_t step, StepScalars &scalars);

/// Writes the per-step scalars of `model`'s optimizer into their slots of
/// the io arena `io`. Fails as checkOptimizerScalars.
Status writeOptimizerScalars(const ModelInfo &model, double lr, uint64_t step,
                             std::byte *io);

/// Whether the runtime computes every per-step scalar that `model` reads,
/// from hyperparameters that its optimizer has.
Status checkOptimizerScalars(const ModelInfo &model);

} // namespace gacc::rt

#endif // GACC_RUNTIME_OPTIMIZER_H
