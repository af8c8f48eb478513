//===- GaccModule.cpp - the gacc._gacc Python extension ---------------------===//
//
//   import gacc                                  # gacc/__init__.py re-exports
//   trainer = gacc.Trainer.compile(open("examples/mlp.mlir").read())  # JIT
//   trainer = gacc.Trainer.compile(text, micro_batch=16, remat="sqrt",
//                                  precision="bf16")     # the gacc flags
//   trainer = gacc.Trainer.open("mlp.gacc")                          # artifact
//   loss = trainer.step({"image": images, "label": labels})
//   trainer.parameters()["fc1.weight"]                      # numpy arrays
//
// Arrays must have the input's or parameter's dtype and shape exactly; a
// mismatch, like every runtime error, raises with the reason.
//
//===----------------------------------------------------------------------===//

#include "compiler/jit/Jit.h"
#include "gacc/runtime/Checkpoint.h"
#include "gacc/runtime/ThreadPool.h"
#include "gacc/runtime/Trainer.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

namespace py = pybind11;
using namespace gacc::rt;

namespace {
void check(const Status &status) {
  if (!status)
    throw std::runtime_error(status.message());
}

py::dtype numpyType(DType dtype) {
  switch (dtype) {
  case DType::F64: return py::dtype::of<double>();
  case DType::F32: return py::dtype::of<float>();
  case DType::F16: return py::dtype("float16");
  case DType::I64: return py::dtype::of<int64_t>();
  case DType::I32: return py::dtype::of<int32_t>();
  case DType::I8: return py::dtype::of<int8_t>();
  case DType::U8: return py::dtype::of<uint8_t>();
  case DType::Bool: return py::dtype::of<bool>();
  case DType::BF16: break;
  }
  throw std::runtime_error("bf16 has no numpy dtype");
}

py::array toNumpy(const Tensor &tensor) {
  py::array array(numpyType(tensor.dtype()), tensor.shape());
  std::memcpy(array.mutable_data(), tensor.data(), tensor.byteSize());
  return array;
}

/// `array` as a tensor of `slot`'s dtype and shape, or a ValueError.
Tensor fromNumpy(const TensorSlot &slot, const py::array &array) {
  if (!array.dtype().is(numpyType(slot.dtype)))
    throw py::value_error("'" + slot.name + "' is " +
                          std::string(dtypeName(slot.dtype)) + ", got numpy " +
                          std::string(py::str(array.dtype())));
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  if (shape != slot.shape)
    throw py::value_error("'" + slot.name + "' has shape " +
                          shapeString(slot.shape) + ", got " +
                          shapeString(shape));
  py::array contiguous =
      py::array::ensure(array, py::array::c_style);
  Tensor tensor(slot.dtype, slot.shape);
  std::memcpy(tensor.data(), contiguous.data(), tensor.byteSize());
  return tensor;
}

struct PyTrainer {
  std::unique_ptr<Trainer> trainer;

  void setInputs(const py::dict &inputs) {
    for (auto [key, value] : inputs) {
      std::string name = py::cast<std::string>(key);
      const Input *input = trainer->model().findInput(name);
      if (!input)
        throw py::key_error("no input '" + name + "'");
      check(trainer->setInput(name, fromNumpy(input->slot,
                                              py::cast<py::array>(value))));
    }
  }

  py::dict step(const py::dict &inputs) {
    setInputs(inputs);
    StepResult result;
    {
      py::gil_scoped_release release;
      check(trainer->step(result));
    }
    py::dict out;
    out["loss"] = result.loss;
    out["grad_norm"] = result.gradNorm;
    out["lr"] = result.lr;
    if (trainer->model().lossScaling) {
      out["loss_scale"] = result.lossScale;
      out["skipped"] = result.skipped;
    }
    return out;
  }

  /// The loss and the model's other outputs on `inputs`, updating nothing.
  py::dict evaluate(const py::dict &inputs) {
    setInputs(inputs);
    double loss = 0;
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release release;
      check(trainer->evaluate(loss, outputs));
    }
    py::dict out;
    out["loss"] = loss;
    py::list arrays;
    for (const Tensor &tensor : outputs)
      arrays.append(toNumpy(tensor));
    out["outputs"] = arrays;
    return out;
  }

  py::dict parameters(bool mergeLora) const {
    gacc::rt::TensorFile file = trainer->parameters();
    if (mergeLora)
      check(gacc::rt::mergeLoraAdapters(
          file, gacc::rt::loraAdapters(trainer->model())));
    py::dict out;
    for (const auto &[name, tensor] : file.tensors)
      out[py::str(name)] = toNumpy(tensor);
    return out;
  }

  void setParameter(const std::string &name, const py::array &array) {
    const Parameter *param = trainer->model().findParameter(name);
    if (!param)
      throw py::key_error("no parameter '" + name + "'");
    check(trainer->setParameter(
        name, fromNumpy(gacc::rt::Trainer::parameterSlot(*param), array)));
  }

  py::list inputs() const {
    py::list out;
    for (const Input &input : trainer->model().inputs)
      out.append(py::make_tuple(input.slot.name,
                                std::string(dtypeName(input.slot.dtype)),
                                py::tuple(py::cast(input.slot.shape))));
    return out;
  }
};

/// Trainer.compile(mlir, *, name=..., **options): every other keyword is a
/// training option, named as its `gacc` flag with underscores for dashes
/// (micro_batch is --micro-batch), its value written as that flag's (a
/// number, or a string such as "8GiB" or "bf16"); None keeps what the model
/// says. They go through the options' own parser, so a keyword that names
/// no option, or a value its option cannot read, is refused.
PyTrainer compile(const std::string &mlir, const py::kwargs &keywords) {
  std::string name = "<string>", text;
  for (auto [key, value] : keywords) {
    std::string option = py::str(key);
    if (option == "name") {
      name = py::str(value);
      continue;
    }
    if (value.is_none())
      continue;
    std::replace(option.begin(), option.end(), '_', '-');
    text += (text.empty() ? "" : " ") + option + "={" +
            std::string(py::str(value)) + "}";
  }
  mlir::gacc::TrainingPipelineOptions options;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(options.parseFromString(text, os)))
    throw py::type_error("Trainer.compile: bad training options '" + text +
                         "'" + (errors.empty() ? "" : ": " + errors));
  PyTrainer t;
  {
    py::gil_scoped_release release;
    check(mlir::gacc::compileTrainer(mlir, name, options, t.trainer));
  }
  return t;
}
} // namespace

PYBIND11_MODULE(_gacc, m) {
  m.doc() = "gacc: compile and train neural-network training steps";
  m.def(
      "set_num_threads",
      [](int count) {
        if (count < 1)
          throw py::value_error("set_num_threads: the count must be at "
                                "least 1, got " + std::to_string(count));
        gacc::rt::setThreads(count);
      },
      py::arg("count"),
      "Sets the threads compiled CPU steps run on (as `gacc run --threads`; "
      "the default is $GACC_NUM_THREADS, else every core). Results do not "
      "depend on it.");
  m.def("get_num_threads", &gacc::rt::threads,
        "The threads compiled CPU steps run on.");
  py::class_<PyTrainer>(m, "Trainer")
      .def_static(
          "open",
          [](const std::string &path, uint64_t seed) {
            PyTrainer t;
            check(openTrainer(path, seed, t.trainer));
            return t;
          },
          py::arg("path"), py::arg("seed") = 0,
          "A trainer for an artifact from `gacc compile`.")
      .def_static(
          "compile", &compile, py::arg("mlir"),
          "compile(mlir, *, name='<string>', step=None, seed=0, target='cpu', "
          "batch=None, micro_batch=None, accumulation_steps=None, "
          "memory_budget=None, remat=None, remat_budget=None, "
          "precision=None, ranks=None, zero_stage=None, lora=None, "
          "optimizer=None, lr_schedule=None, lr=None, weight_decay=None, "
          "grad_clip=None)\n\n"
          "A trainer for MLIR text, compiled in-process (JIT) for `target`: "
          "'cpu', 'cuda' (the first GPU) or 'cuda-emulated'. The keywords "
          "but `name` (which labels the text in messages) are the training "
          "options, named as the `gacc` flags (micro_batch is "
          "--micro-batch) and written as their values (memory_budget=2**30 "
          "or '1GiB'); None keeps what the model says.")
      .def("step", &PyTrainer::step, py::arg("inputs"),
           "Sets the given inputs (name -> numpy array) and runs one "
           "optimizer step; returns loss, grad_norm, lr (and loss_scale, "
           "skipped with f16 loss scaling).")
      .def("evaluate", &PyTrainer::evaluate, py::arg("inputs"),
           "Sets the given inputs and runs the forward pass without "
           "updating anything (dropout off, batch norm on its running "
           "statistics); returns loss and outputs (numpy arrays).")
      .def("parameters", &PyTrainer::parameters, py::arg("merge_lora") = false,
           "Every parameter by name (numpy arrays); with merge_lora, each "
           "LoRA-adapted weight W as W + (alpha/r)·B·A and no adapters, as "
           "the model without them reads it.")
      .def("set_parameter", &PyTrainer::setParameter)
      .def_property_readonly("inputs", &PyTrainer::inputs,
                             "(name, dtype, shape) of every input")
      .def_property_readonly(
          "step_count",
          [](const PyTrainer &t) { return t.trainer->stepCount(); })
      .def("save_checkpoint",
           [](const PyTrainer &t, const std::string &path) {
             check(t.trainer->saveCheckpoint(path));
           })
      .def("load_checkpoint", [](PyTrainer &t, const std::string &path) {
        check(t.trainer->loadCheckpoint(path));
      });
}
