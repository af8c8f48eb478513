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
  if (schedule.kind == ScheduleConfig::WarmupPolynomial)
    return schedule.minLr +
           (lr - schedule.minLr) * std::pow(1.0 - progress, schedule.power);
  return schedule.minLr +
         0.5 * (lr - schedule.minLr) * (1.0 + std::cos(M_PI * progress));
}

namespace {
/// An optimizer's hyperparameters by name, noting the first one missing.
class Hyperparameters {
public:
  explicit Hyperparameters(const OptimizerConfig &optimizer)
      : optimizer(optimizer) {}
  double operator()(const char *name) {
    auto found = optimizer.hyperparameters.find(name);
    if (found != optimizer.hyperparameters.end())
      return found->second;
    if (missing.empty())
      missing = name;
    return 0.0;
  }
  const OptimizerConfig &optimizer;
  std::string missing;
};

using Formula = void (*)(Hyperparameters &hyper, double lr, uint64_t step,
                         StepScalars &scalars);

void sgdScalars(Hyperparameters &hyper, double /*lr*/, uint64_t step,
                StepScalars &scalars) {
  bool first = step == 0;
  double momentum = hyper("momentum"), dampening = hyper("dampening");
  scalars.emplace_back("momentum_coefficient", first ? 0.0 : momentum);
  scalars.emplace_back("gradient_coefficient", first ? 1.0 : 1.0 - dampening);
}

void adamScalars(Hyperparameters &hyper, double lr, uint64_t step,
                 StepScalars &scalars) {
  double t = static_cast<double>(step + 1);
  double correction1 = 1.0 - std::pow(hyper("beta1"), t);
  double correction2 = 1.0 - std::pow(hyper("beta2"), t);
  scalars.emplace_back("step_size", lr / correction1);
  scalars.emplace_back("bias_correction2_sqrt", std::sqrt(correction2));
}

void adamwScalars(Hyperparameters &hyper, double lr, uint64_t step,
                  StepScalars &scalars) {
  adamScalars(hyper, lr, step, scalars);
  scalars.emplace_back("weight_decay_factor",
                       1.0 - lr * hyper("weight_decay"));
}

/// transformers' Adafactor._get_lr without the parameter scale (which the
/// step computes from the weights): min(1e-2, 1/sqrt(t)) with relative_step
/// (1e-6·t for 1e-2 with warmup_init), else the scheduled rate; and the
/// second moments' decay 1 - t^decay_rate.
void adafactorScalars(Hyperparameters &hyper, double lr, uint64_t step,
                      StepScalars &scalars) {
  double t = static_cast<double>(step + 1);
  double stepSize = lr;
  if (hyper("relative_step") != 0.0)
    stepSize = std::min(hyper("warmup_init") != 0.0 ? 1e-6 * t : 1e-2,
                        1.0 / std::sqrt(t));
  scalars.emplace_back("step_size", stepSize);
  scalars.emplace_back("beta2t", 1.0 - std::pow(t, hyper("decay_rate")));
}

/// The formulas of the optimizers with per-step scalars besides "lr".
struct OptimizerFormula {
  const char *kind;
  Formula formula;
};
constexpr OptimizerFormula kFormulas[] = {
    {"sgd", sgdScalars},
    {"adamw", adamwScalars},
    {"adam", adamScalars},
    {"adamw8bit", adamwScalars},
    {"adafactor", adafactorScalars},
};
} // namespace

Status optimizerScalars(const OptimizerConfig &optimizer, double lr,
                        uint64_t step, StepScalars &scalars) {
  scalars.assign({{"lr", lr}});
  Hyperparameters hyper(optimizer);
  for (const OptimizerFormula &entry : kFormulas)
    if (optimizer.kind == entry.kind)
      entry.formula(hyper, lr, step, scalars);
  if (!hyper.missing.empty())
    return Status::error("optimizer '" + optimizer.kind +
                         "' has no hyperparameter '" + hyper.missing + "'");
  return {};
}

/// The value of every slot of `model.hyper` at step `step`, in order.
static Status slotValues(const ModelInfo &model, double lr, uint64_t step,
                         std::vector<double> &values) {
  StepScalars scalars;
  if (Status status = optimizerScalars(model.optimizer, lr, step, scalars);
      !status)
    return status;
  for (const TensorSlot &slot : model.hyper) {
    auto found = std::find_if(
        scalars.begin(), scalars.end(),
        [&](const auto &scalar) { return scalar.first == slot.name; });
    if (found == scalars.end())
      return Status::error("the step reads the per-step scalar '" +
                           slot.name +
                           "', which this runtime does not compute for "
                           "optimizer '" +
                           model.optimizer.kind + "'");
    values.push_back(found->second);
  }
  return {};
}

Status writeOptimizerScalars(const ModelInfo &model, double lr, uint64_t step,
                             std::byte *io) {
  std::vector<double> values;
  if (Status status = slotValues(model, lr, step, values); !status)
    return status;
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(model.hyper[i].dtype, io + model.hyper[i].offset, 0,
                 values[i]);
  return {};
}

Status checkOptimizerScalars(const ModelInfo &model) {
  std::vector<double> values;
  return slotValues(model, model.optimizer.lr, 0, values);
}

} // namespace gacc::rt
