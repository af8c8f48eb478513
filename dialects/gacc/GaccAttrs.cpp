//===- GaccAttrs.cpp - gacc enums and attributes --------------------------===//
//
// Attribute verifiers: the ranges PyTorch's optimizers, initializers and
// schedulers accept, so a bad configuration fails at parse time with a
// location instead of training on garbage.
//
//===----------------------------------------------------------------------===//

#include "dialects/gacc/GaccAttrs.h"
#include "dialects/gacc/GaccDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::gacc;

#include "dialects/gacc/GaccEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/gacc/GaccAttrs.cpp.inc"

std::string gacc::formatShortest(const APFloat &value) {
  double number = value.convertToDouble();
  char text[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, number);
    if (std::strtod(text, nullptr) == number)
      break;
  }
  // MLIR's float literals need a decimal point: 1e-06 becomes 1.0e-06.
  std::string result(text);
  if (std::isfinite(number) && result.find('.') == std::string::npos)
    result.insert(std::min(result.find('e'), result.size()), ".0");
  return result;
}

/// Diagnostics print numbers as they are written in the IR.
static std::string text(double value) {
  return gacc::formatShortest(APFloat(value));
}

void GaccDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/gacc/GaccAttrs.cpp.inc"
      >();
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, APFloat scaleAttr,
                               uint64_t seed) {
  double scale = scaleAttr.convertToDouble();
  if ((kind == InitKind::zeros || kind == InitKind::ones) && scale != 1.0)
    return emitError() << "'" << stringifyInitKind(kind)
                       << "' initializer takes no scale";
  if (!(scale > 0.0))
    return emitError() << "initializer scale must be positive, got "
                       << text(scale);
  return success();
}

LogicalResult SGDAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat lrAttr, APFloat momentumAttr,
                              APFloat dampeningAttr, APFloat weightDecayAttr,
                              bool nesterov) {
  double lr = lrAttr.convertToDouble();
  double momentum = momentumAttr.convertToDouble();
  double dampening = dampeningAttr.convertToDouble();
  double weightDecay = weightDecayAttr.convertToDouble();
  if (!(lr > 0.0))
    return emitError() << "learning rate must be positive, got " << text(lr);
  if (!(momentum >= 0.0))
    return emitError() << "momentum must be non-negative, got "
                       << text(momentum);
  if (!(dampening >= 0.0 && dampening <= 1.0))
    return emitError() << "dampening must be in [0, 1], got "
                       << text(dampening);
  if (!(weightDecay >= 0.0))
    return emitError() << "weight decay must be non-negative, got "
                       << text(weightDecay);
  if (nesterov && (momentum == 0.0 || dampening != 0.0))
    return emitError()
           << "nesterov momentum requires a positive momentum and zero "
              "dampening";
  return success();
}

/// Adam's and AdamW's hyperparameters (the same ranges).
static LogicalResult
verifyAdamHyperparameters(function_ref<InFlightDiagnostic()> emitError,
                          APFloat lrAttr, APFloat beta1Attr, APFloat beta2Attr,
                          APFloat epsAttr, APFloat weightDecayAttr) {
  double lr = lrAttr.convertToDouble();
  double beta1 = beta1Attr.convertToDouble();
  double beta2 = beta2Attr.convertToDouble();
  double eps = epsAttr.convertToDouble();
  double weightDecay = weightDecayAttr.convertToDouble();
  if (!(lr > 0.0))
    return emitError() << "learning rate must be positive, got " << text(lr);
  if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0))
    return emitError() << "betas must be in [0, 1), got (" << text(beta1)
                       << ", " << text(beta2) << ")";
  if (!(eps > 0.0))
    return emitError() << "eps must be positive, got " << text(eps);
  if (!(weightDecay >= 0.0))
    return emitError() << "weight decay must be non-negative, got "
                       << text(weightDecay);
  return success();
}

LogicalResult AdamWAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                APFloat lr, APFloat beta1, APFloat beta2,
                                APFloat eps, APFloat weightDecay) {
  return verifyAdamHyperparameters(emitError, lr, beta1, beta2, eps,
                                   weightDecay);
}

LogicalResult AdamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat lr, APFloat beta1, APFloat beta2,
                               APFloat eps, APFloat weightDecay) {
  return verifyAdamHyperparameters(emitError, lr, beta1, beta2, eps,
                                   weightDecay);
}

LogicalResult
AdamW8bitAttr::verify(function_ref<InFlightDiagnostic()> emitError, APFloat lr,
                      APFloat beta1, APFloat beta2, APFloat eps,
                      APFloat weightDecay, uint64_t blockSize,
                      uint64_t min8bitSize) {
  if (blockSize == 0)
    return emitError() << "block_size must be positive";
  return verifyAdamHyperparameters(emitError, lr, beta1, beta2, eps,
                                   weightDecay);
}

LogicalResult
AdafactorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      APFloat lrAttr, APFloat eps1, APFloat eps2,
                      APFloat clipThreshold, APFloat decayRate,
                      APFloat beta1Attr, APFloat weightDecay,
                      bool scaleParameter, bool relativeStep, bool warmupInit) {
  double lr = lrAttr.convertToDouble(), beta1 = beta1Attr.convertToDouble();
  if (relativeStep && lr != 0.0)
    return emitError() << "lr (" << text(lr)
                       << ") and relative_step cannot be combined: the "
                          "relative step is the learning rate";
  if (!relativeStep && !(lr > 0.0))
    return emitError() << "without relative_step the learning rate must be "
                          "positive, got "
                       << text(lr);
  if (warmupInit && !relativeStep)
    return emitError() << "warmup_init needs relative_step";
  if (!(eps1.convertToDouble() > 0.0) || !(eps2.convertToDouble() > 0.0))
    return emitError() << "eps1 and eps2 must be positive";
  if (!(clipThreshold.convertToDouble() > 0.0))
    return emitError() << "clip_threshold must be positive, got "
                       << text(clipThreshold.convertToDouble());
  if (!(decayRate.convertToDouble() < 0.0))
    return emitError() << "decay_rate must be negative, got "
                       << text(decayRate.convertToDouble());
  if (!(beta1 >= 0.0 && beta1 < 1.0))
    return emitError() << "beta1 must be in [0, 1), got " << text(beta1);
  if (!(weightDecay.convertToDouble() >= 0.0))
    return emitError() << "weight decay must be non-negative, got "
                       << text(weightDecay.convertToDouble());
  return success();
}

/// The steps and end rate of a warmup-then-decay schedule.
static LogicalResult
verifyDecaySchedule(function_ref<InFlightDiagnostic()> emitError,
                    uint64_t warmupSteps, uint64_t totalSteps,
                    APFloat minLrAttr) {
  double minLr = minLrAttr.convertToDouble();
  if (totalSteps == 0)
    return emitError() << "total_steps must be positive";
  if (warmupSteps > totalSteps)
    return emitError() << "warmup_steps (" << warmupSteps
                       << ") exceeds total_steps (" << totalSteps << ")";
  if (!(minLr >= 0.0))
    return emitError() << "min_lr must be non-negative, got " << text(minLr);
  return success();
}

LogicalResult
WarmupCosineScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 uint64_t warmupSteps, uint64_t totalSteps,
                                 APFloat minLr) {
  return verifyDecaySchedule(emitError, warmupSteps, totalSteps, minLr);
}

LogicalResult WarmupPolynomialScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, uint64_t warmupSteps,
    uint64_t totalSteps, APFloat minLr, APFloat power) {
  if (!(power.convertToDouble() > 0.0))
    return emitError() << "power must be positive, got "
                       << text(power.convertToDouble());
  return verifyDecaySchedule(emitError, warmupSteps, totalSteps, minLr);
}

LogicalResult RematAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                RematPolicy policy, uint64_t budget) {
  if (policy == RematPolicy::budget && budget == 0)
    return emitError()
           << "the 'budget' policy needs a positive budget in bytes";
  if (policy != RematPolicy::budget && budget != 0)
    return emitError() << "a budget applies only to the 'budget' policy";
  return success();
}

LogicalResult
LossScaleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      APFloat initAttr, APFloat growthAttr, APFloat backoffAttr,
                      uint64_t growthInterval) {
  double init = initAttr.convertToDouble();
  double growth = growthAttr.convertToDouble();
  double backoff = backoffAttr.convertToDouble();
  if (!(init > 0.0) || !std::isfinite(init))
    return emitError() << "the initial loss scale must be positive and "
                          "finite, got "
                       << text(init);
  if (!(growth > 1.0) || !std::isfinite(growth))
    return emitError() << "growth_factor must be above 1, got " << text(growth);
  if (!(backoff > 0.0 && backoff < 1.0))
    return emitError() << "backoff_factor must be in (0, 1), got "
                       << text(backoff);
  if (growthInterval == 0)
    return emitError() << "growth_interval must be positive";
  return success();
}

LogicalResult ZeroAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               uint64_t stage, uint64_t ranks) {
  if (stage > 3)
    return emitError() << "ZeRO stage must be 0, 1, 2 or 3, got " << stage;
  if (ranks == 0)
    return emitError() << "ZeRO needs at least one rank";
  return success();
}
