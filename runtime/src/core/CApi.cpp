//===- CApi.cpp - the gacc runtime's C API ----------------------------------===//

#include "gacc/runtime/CApiTrainer.h"

#include <cstring>
#include <memory>
#include <string>

using namespace gacc::rt;

namespace {
thread_local std::string lastError;

int report(const Status &status) {
  if (status)
    return 0;
  lastError = status.message();
  return -1;
}

int fail(const std::string &message) {
  return report(Status::error(message));
}

/// A tensor of `slot`'s dtype and shape holding `bytes` bytes of `data`;
/// no `slot`: there is no `what` named `name`.
Status tensorFor(const TensorSlot *found, const char *what, const char *name,
                 const void *data, size_t bytes, Tensor &out) {
  if (!found)
    return Status::error(std::string("no ") + what + " '" + name + "'");
  const TensorSlot &slot = *found;
  if (bytes != static_cast<size_t>(slot.bytes()))
    return Status::error("'" + slot.name + "' takes " +
                         std::to_string(slot.bytes()) + " bytes, got " +
                         std::to_string(bytes));
  out = Tensor(slot.dtype, slot.shape);
  std::memcpy(out.data(), data, bytes);
  return Status();
}

} // namespace

int gacc::rt::reportCApiStatus(const Status &status) { return report(status); }

extern "C" {

const char *gacc_last_error(void) { return lastError.c_str(); }

int gacc_trainer_open(const char *path, uint64_t seed, gacc_trainer **out) {
  auto handle = std::make_unique<gacc_trainer>();
  if (int rc = report(openTrainer(path, seed, handle->trainer)))
    return rc;
  *out = handle.release();
  return 0;
}

void gacc_trainer_close(gacc_trainer *trainer) { delete trainer; }

int gacc_trainer_set_input(gacc_trainer *trainer, const char *name,
                           const void *data, size_t bytes) {
  const Input *input = trainer->trainer->model().findInput(name);
  Tensor tensor;
  Status s = tensorFor(input ? &input->slot : nullptr, "input", name, data,
                       bytes, tensor);
  return report(s ? trainer->trainer->setInput(name, tensor) : s);
}

int gacc_trainer_step(gacc_trainer *trainer, double *loss, double *grad_norm) {
  StepResult result;
  if (int rc = report(trainer->trainer->step(result)))
    return rc;
  if (loss)
    *loss = result.loss;
  if (grad_norm)
    *grad_norm = result.gradNorm;
  return 0;
}

uint64_t gacc_trainer_step_count(const gacc_trainer *trainer) {
  return trainer->trainer->stepCount();
}

int gacc_trainer_parameter_bytes(const gacc_trainer *trainer, const char *name,
                                 size_t *bytes) {
  const Parameter *param = trainer->trainer->model().findParameter(name);
  if (!param)
    return fail(std::string("no parameter '") + name + "'");
  *bytes = static_cast<size_t>(Trainer::parameterSlot(*param).bytes());
  return 0;
}

int gacc_trainer_get_parameter(const gacc_trainer *trainer, const char *name,
                               void *data, size_t bytes) {
  Tensor tensor;
  if (int rc = report(trainer->trainer->parameter(name, tensor)))
    return rc;
  if (bytes != tensor.byteSize())
    return fail(std::string("'") + name + "' holds " +
                std::to_string(tensor.byteSize()) + " bytes, got a buffer of " +
                std::to_string(bytes));
  std::memcpy(data, tensor.data(), bytes);
  return 0;
}

int gacc_trainer_set_parameter(gacc_trainer *trainer, const char *name,
                               const void *data, size_t bytes) {
  const Parameter *param = trainer->trainer->model().findParameter(name);
  TensorSlot slot = param ? Trainer::parameterSlot(*param) : TensorSlot();
  Tensor tensor;
  Status s = tensorFor(param ? &slot : nullptr, "parameter", name, data, bytes,
                       tensor);
  return report(s ? trainer->trainer->setParameter(name, tensor) : s);
}

int gacc_trainer_save_checkpoint(const gacc_trainer *trainer,
                                 const char *path) {
  return report(trainer->trainer->saveCheckpoint(path));
}

int gacc_trainer_load_checkpoint(gacc_trainer *trainer, const char *path) {
  return report(trainer->trainer->loadCheckpoint(path));
}

} // extern "C"
