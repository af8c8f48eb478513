//===- Optimizer.cpp - per-step optimizer scalars ---------------------------===//

#include "gacc/runtime/Optimizer.h"

#include <algorithm>
#include <cmath>

namespace gacc::rt {

double scheduledLearningRate(const ScheduleConfig &schedule, double lr,
                             uint64_t step) {
  if (schedule.kind == ScheduleConfig::Constant)
    return lr;
  if (step < schedule.warmupSteps)
    return lr * static_cast<double>(step + 1) / schedule.warmupSteps;
  uint64_t decaySteps = schedule.totalSteps - schedule.warmupSteps;
  double progress =
      decaySteps == 0
          ? 1.0
          : std::min(1.0, static_cast<double>(step - schedule.warmupSteps) /
                              decaySteps);
  return schedule.minLr +
         0.5 * (lr - schedule.minLr) * (1.0 + std::cos(M_PI * progress));
}

std::array<double, 4> optimizerScalars(const OptimizerConfig &optimizer,
                                       double lr, uint64_t step) {
  if (optimizer.kind == OptimizerConfig::SGD) {
    bool first = step == 0;
    return {lr, first ? 0.0 : optimizer.momentum,
            first ? 1.0 : 1.0 - optimizer.dampening, 0.0};
  }
  double t = static_cast<double>(step + 1);
  double correction1 = 1.0 - std::pow(optimizer.beta1, t);
  double correction2 = 1.0 - std::pow(optimizer.beta2, t);
  return {1.0 - lr * optimizer.weightDecay, lr / correction1,
          std::sqrt(correction2), 0.0};
}

} // namespace gacc::rt
