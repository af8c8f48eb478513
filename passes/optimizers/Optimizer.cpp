//===- Optimizer.cpp - the registry of optimizers -------------------------===//

#include "passes/optimizers/Optimizer.h"

using namespace mlir;
using namespace mlir::gacc;

ArrayRef<const Optimizer *> gacc::registeredOptimizers() {
  static const Optimizer *const optimizers[] = {
#define GACC_OPTIMIZER(Name) &get##Name##Optimizer(),
#include "passes/optimizers/Optimizers.def"
  };
  return optimizers;
}

const Optimizer *gacc::lookupOptimizer(Attribute optimizer) {
  for (const Optimizer *candidate : registeredOptimizers())
    if (candidate->handles(optimizer))
      return candidate;
  return nullptr;
}

const Optimizer *gacc::lookupOptimizer(StringRef name) {
  for (const Optimizer *candidate : registeredOptimizers())
    if (candidate->getName() == name)
      return candidate;
  return nullptr;
}

std::string gacc::registeredOptimizerNames() {
  std::string names;
  for (const Optimizer *optimizer : registeredOptimizers())
    names += (names.empty() ? "" : ", ") + optimizer->getName().str();
  return names;
}

Attribute gacc::switchOptimizer(const Optimizer &to, Attribute current,
                                std::optional<double> lr,
                                std::optional<double> weightDecay,
                                function_ref<InFlightDiagnostic()> emitError) {
  double currentLr = 0.0, currentDecay = 0.0;
  if (const Optimizer *from = lookupOptimizer(current))
    for (Hyperparameter hyper : from->getHyperparameters(current)) {
      if (hyper.name == kLearningRate)
        currentLr = hyper.value;
      else if (hyper.name == "weight_decay")
        currentDecay = hyper.value;
    }
  return to.rebuild(current.getContext(), current, lr.value_or(currentLr),
                    weightDecay.value_or(currentDecay), emitError);
}

FailureOr<const Optimizer *> gacc::lookupOptimizer(TrainStepOp step) {
  if (const Optimizer *optimizer = lookupOptimizer(step.getOptimizer()))
    return optimizer;
  return step.emitOpError("has optimizer ")
         << step.getOptimizer()
         << ", which no class in passes/optimizers implements";
}
