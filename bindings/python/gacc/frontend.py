"""`gacc.from_torch` and `gacc.to_mlir`: a PyTorch module and optimizer as a
gacc training step.

    trainer = gacc.from_torch(model, {"idx": x}, optimizer=opt,
                              targets={"targets": y}, loss_output=1)
    trainer.step({"idx": x, "targets": y})["loss"]
    model.load_state_dict(trainer.state_dict())
"""
import collections
import inspect

import numpy as np
import torch
import torch.nn.functional as F
from torch.fx.experimental import proxy_tensor
from torch.nn.utils import stateless

from . import torch_import
from .torch_import import ImportError, fmt, string, symbol, tensor_type


def _numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(value)


class _Spec:
    """What the import decided: names and roles of params, inputs, outputs."""

    def __init__(self):
        self.params = []        # (name, tensor, frozen)
        self.aliases = {}       # state_dict name -> param name
        self.state_order = []   # state_dict names in module order
        self.state_dtypes = {}  # param name -> torch dtype of the module's
        self.declared = {}      # param name -> the dtype of its gacc.param
        self.inputs = []        # (name, tensor, kind)
        self.outputs = 0        # forward outputs after the loss


def _optimizer_attribute(optimizer, module_params):
    """The train_step's optimizer attribute and the per-parameter weight
    decay of groups that differ from the first."""
    if optimizer is None:
        raise ImportError("from_torch needs optimizer= (torch.optim.SGD, "
                          "Adam or AdamW on the module's parameters)")
    groups = optimizer.param_groups
    kind = type(optimizer).__name__
    shared = {k: v for k, v in groups[0].items()
              if k not in ("params", "weight_decay", "initial_lr")}
    for group in groups[1:]:
        for key, value in group.items():
            if key in ("params", "weight_decay", "initial_lr"):
                continue
            if shared.get(key) != value:
                raise ImportError(
                    f"{kind}'s parameter groups differ in '{key}' "
                    f"({shared.get(key)!r} and {value!r}); gacc supports "
                    "groups that differ only in weight_decay")
    g = groups[0]
    if g.get("maximize"):
        raise ImportError(f"{kind}(maximize=True) is not supported")
    if g.get("amsgrad"):
        raise ImportError(f"{kind}(amsgrad=True) is not supported")
    decay = g["weight_decay"]
    if kind == "SGD":
        attr = (f"#gacc.sgd<lr = {fmt(g['lr'])}, momentum = {fmt(g['momentum'])}, "
                f"dampening = {fmt(g['dampening'])}, weight_decay = {fmt(decay)}, "
                f"nesterov = {'true' if g['nesterov'] else 'false'}>")
    elif kind in ("AdamW", "Adam"):
        beta1, beta2 = g["betas"]
        attr = (f"#gacc.{kind.lower()}<lr = {fmt(g['lr'])}, beta1 = {fmt(beta1)}, "
                f"beta2 = {fmt(beta2)}, eps = {fmt(g['eps'])}, "
                f"weight_decay = {fmt(decay)}>")
    else:
        raise ImportError(f"optimizer {kind} is not supported (SGD, Adam, "
                          "AdamW)")
    owner = {}
    for group in groups:
        for p in group["params"]:
            owner[id(p)] = group["weight_decay"]
    per_param = {}
    for name, p in module_params:
        if id(p) in owner and owner[id(p)] != decay:
            per_param[name] = owner[id(p)]
    trained = set(owner)
    return attr, per_param, trained


def _trace(module, inputs, loss, targets, loss_output):
    """The make_fx graph of forward + loss, and how the outputs map."""
    params = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    target_tensors = dict(targets or {})
    if isinstance(loss, str) and len(target_tensors) != 1:
        raise ImportError(f"loss='{loss}' needs targets= with one tensor")
    output_count = []
    try:
        parameters = inspect.signature(module.forward).parameters
    except (TypeError, ValueError):
        parameters = None
    if parameters is not None and not any(
            p.kind == p.VAR_KEYWORD for p in parameters.values()):
        names = list(inputs) + (list(target_tensors) if loss is None else [])
        for name in names:
            if name not in parameters:
                raise ImportError(
                    f"{type(module).__name__}.forward has no argument "
                    f"'{name}' (its arguments: {', '.join(parameters)}); "
                    "inputs are passed by name")

    def step(params, buffers, inputs, targets):
        # Without a loss of gacc's, the forward computes it: the targets are
        # its arguments too.
        arguments = {**inputs, **targets} if loss is None else inputs
        out = stateless.functional_call(module, {**params, **buffers}, (),
                                        arguments)
        if loss is None:
            if loss_output is None:
                flat = [out]
                value = out
            else:
                value = out[loss_output]
                if isinstance(out, dict):
                    flat = [v for k, v in out.items() if k != loss_output]
                else:
                    flat = [v for i, v in enumerate(out) if i != loss_output]
                flat = [value] + flat
        else:
            (target,) = targets.values()
            if loss == "cross_entropy":
                value = F.cross_entropy(out.reshape(-1, out.shape[-1]),
                                        target.reshape(-1))
            elif loss == "mse":
                value = F.mse_loss(out, target)
            elif callable(loss):
                value = loss(out, **targets)
            else:
                raise ImportError(f"unknown loss {loss!r} (None, "
                                  "'cross_entropy', 'mse' or a callable)")
            flat = [value, out]
        flat = [t for t in flat if isinstance(t, torch.Tensor)]
        output_count.append(len(flat) - 1)
        return tuple(flat)

    # make_fx runs the forward on real tensors: the buffers are copies, so
    # that tracing leaves the module as it was (batch norm updates its
    # statistics). The parameters are the module's own: the forward does not
    # write them, and a tied weight must stay one tensor under both names.
    traced_params = params
    traced_buffers = {k: v.detach().clone() for k, v in buffers.items()}
    was = proxy_tensor.PythonKeyTracer.record_stack_traces
    proxy_tensor.PythonKeyTracer.record_stack_traces = True
    try:
        graph = proxy_tensor.make_fx(step)(traced_params, traced_buffers,
                                          dict(inputs), target_tensors)
    except ImportError:
        raise
    except Exception as error:  # what tracing the user's code raised
        raise ImportError(f"tracing {type(module).__name__}.forward with "
                          f"make_fx failed: {type(error).__name__}: "
                          f"{error}") from error
    finally:
        proxy_tensor.PythonKeyTracer.record_stack_traces = was
    loss_meta = None
    for node in graph.graph.nodes:
        if node.op == "output":
            loss_meta = node.args[0][0].meta.get("tensor_meta")
    if loss_meta is None or tuple(loss_meta.shape) != () or \
            not loss_meta.dtype.is_floating_point:
        raise ImportError("the loss must be a float scalar (pick it with "
                          "loss_output= or pass loss=)")
    return graph, params, buffers, target_tensors, output_count[0]


def _input_kind(tensor, is_target):
    if tensor.dtype == torch.bool:
        return "mask"
    if tensor.dtype.is_floating_point:
        return "features"
    return "labels" if is_target else "tokens"


def to_mlir(module, inputs, *, optimizer, loss=None, targets=None,
            loss_output=None, micro_batch=None, remat=None, precision=None,
            max_grad_norm=None, target="cpu", _spec=None,
            _initial_values=None):
    """The gacc MLIR module of `module`'s training step (see from_torch).
    `_initial_values` (gacc import) names the safetensors file that holds
    the module's values, for `gacc run` to start from."""
    if not isinstance(module, torch.nn.Module):
        raise ImportError("from_torch needs a torch.nn.Module")
    if not inputs:
        raise ImportError("inputs= needs at least one example tensor")
    batch = None
    for name, value in list(inputs.items()) + list((targets or {}).items()):
        if not isinstance(value, torch.Tensor) or value.dim() < 1:
            raise ImportError(f"input '{name}' must be a tensor with a batch "
                              "dimension")
        if batch is None:
            batch = value.shape[0]
        elif value.shape[0] != batch:
            raise ImportError(f"input '{name}' has {value.shape[0]} examples "
                              f"in dimension 0, the others {batch}")
    graph, params, buffers, target_tensors, outputs = _trace(
        module, inputs, loss, targets, loss_output)
    spec = _spec if _spec is not None else _Spec()
    spec.outputs = outputs

    # Every state_dict entry, each distinct tensor once.
    by_id = {}
    for name, p in params.items():
        by_id[id(p)] = name
    for name, b in buffers.items():
        by_id.setdefault(id(b), name)
    state = module.state_dict(keep_vars=True)
    for name, t in state.items():
        spec.state_order.append(name)
        if id(t) not in by_id:
            raise ImportError(f"state_dict entry '{name}' is neither a "
                              "parameter nor a buffer of the module")
        spec.aliases[name] = by_id[id(t)]
    attr, decay, trained = _optimizer_attribute(optimizer, params.items())

    placeholders = {}
    nodes = [n for n in graph.graph.nodes if n.op == "placeholder"]
    flat_values = list(params.items()) + list(buffers.items())
    flat_inputs = list(inputs.items()) + list(target_tensors.items())
    if len(nodes) != len(flat_values) + len(flat_inputs):
        raise ImportError("the traced graph's arguments do not match the "
                          "module's parameters, buffers and inputs")
    lines = []
    # Integer state is kept in the parameters' float type (one per step).
    count_dtype = next((v.dtype for _, v in flat_values
                        if v.dtype.is_floating_point), torch.float32)
    for node, (name, value) in zip(nodes, flat_values):
        is_param = name in params
        frozen = not is_param or id(value) not in trained or \
            not value.requires_grad
        if not value.dtype.is_floating_point:
            # num_batches_tracked: a count kept as a float (exact below 2**24
            # steps in f32); state_dict() gives it back in the module's dtype.
            spec.state_dtypes[name] = value.dtype
            shape, dtype = tuple(value.shape), count_dtype
        else:
            shape, dtype = tuple(value.shape), value.dtype
        node.meta["tensor_meta"] = node.meta["tensor_meta"]._replace(
            dtype=dtype)
        spec.params.append((name, value, frozen))
        spec.declared[name] = dtype
        placeholders[node] = ("param" if not frozen else "state", name)
        attrs = " frozen" if frozen else ""
        extra = f" {{gacc.weight_decay = {fmt(decay[name])} : f64}}" \
            if name in decay else ""
        lines.append(f"  gacc.param {symbol(name)} : {tensor_type(shape, dtype)}"
                     f" = #gacc.init<zeros>{attrs}{extra}")
    for i, (node, (name, value)) in enumerate(zip(nodes[len(flat_values):],
                                                  flat_inputs)):
        is_target = i >= len(inputs)
        kind = _input_kind(value, is_target)
        spec.inputs.append((name, value, kind))
        placeholders[node] = ("input", name)
        lines.append(f"  gacc.input {symbol(name)} : "
                     f"{tensor_type(value.shape, value.dtype)} {kind}")

    importer = torch_import._GraphImporter(graph.graph, placeholders)
    output = next(n for n in graph.graph.nodes if n.op == "output")
    results = list(output.args[0])
    emit = importer.run(results)
    values = [importer.env[r] for r in results]
    for name, node in importer.assigned.items():
        v = importer.env[node]
        emit.lines.append(f"    gacc.assign {symbol(name)}, {v.name} : {v.type}")
    types = ", ".join(v.type for v in values)
    names = ", ".join(v.name for v in values)
    model = type(module).__name__
    text = ["// Imported from PyTorch by gacc.to_mlir: "
            f"{model}, {type(optimizer).__name__}."]
    text.append("module {" if _initial_values is None else
                f"module attributes {{gacc.initial_values = "
                f"{string(_initial_values)}}} {{")
    text += lines
    text.append(f"  func.func @forward() -> ({types}) {{")
    text += emit.body(values)
    text.append(f"    return {names} : {types}")
    text.append("  }")
    step = f"  gacc.train_step @train model @forward batch_size {batch}"
    if micro_batch is not None:
        step += f" micro_batch_size {int(micro_batch)}"
    step += f"\n      optimizer {attr}"
    if max_grad_norm is not None:
        step += f"\n      grad_clip_norm {fmt(max_grad_norm)}"
    if precision is not None and precision != "f32":
        step += f" precision {precision}"
    if remat is not None and remat != "none":
        step += f" remat #gacc.remat<{remat}>"
    text.append(step)
    text.append("}")
    return "\n".join(text) + "\n"


class TorchTrainer:
    """A compiled training step of a PyTorch module, started from the
    module's current values."""

    def __init__(self, trainer, spec, merge_lora=False):
        self._trainer = trainer
        self._spec = spec
        self._merge_lora = merge_lora
        self._inputs = {name: (value.dtype, kind)
                        for name, value, kind in spec.inputs}

    @property
    def trainer(self):
        """The underlying gacc.Trainer."""
        return self._trainer

    @property
    def step_count(self):
        return self._trainer.step_count

    def _batch(self, batch):
        arrays = {}
        for name, value in batch.items():
            if name not in self._inputs:
                raise KeyError(f"no input '{name}' (inputs: "
                               f"{', '.join(self._inputs)})")
            array = _numpy(value)
            dtype = self._inputs[name][0]
            expected = torch.empty((), dtype=dtype).numpy().dtype
            if array.dtype != expected:
                raise ValueError(f"input '{name}' is {dtype}, got "
                                 f"{array.dtype}")
            arrays[name] = array
        return arrays

    def step(self, batch):
        """One optimizer step on `batch` (name -> tensor or array, inputs and
        targets together): {'loss', 'grad_norm', 'lr', ...}."""
        return self._trainer.step(self._batch(batch))

    def evaluate(self, batch):
        """The loss and the forward's other outputs (torch tensors) on
        `batch`, with nothing updated and batch norm in eval mode."""
        result = self._trainer.evaluate(self._batch(batch))
        result["outputs"] = tuple(torch.from_numpy(o)
                                  for o in result["outputs"])
        return result

    def state_dict(self):
        """The module's state_dict from the trained values:
        module.load_state_dict(trainer.state_dict()) accepts it."""
        values = self._trainer.parameters(merge_lora=self._merge_lora)
        out = collections.OrderedDict()
        for name in self._spec.state_order:
            source = self._spec.aliases[name]
            tensor = torch.from_numpy(values[source].copy())
            dtype = self._spec.state_dtypes.get(source)
            out[name] = tensor.to(dtype) if dtype is not None else tensor
        return out

    def save_checkpoint(self, path):
        self._trainer.save_checkpoint(path)

    def load_checkpoint(self, path):
        self._trainer.load_checkpoint(path)


def from_torch(module, inputs, *, optimizer, loss=None, targets=None,
               loss_output=None, micro_batch=None, remat=None,
               precision=None, max_grad_norm=None, target="cpu", lora=None):
    """Compiles `module`'s training step with gacc.

    inputs: name -> example tensor, passed to module.forward as keywords; their
      shapes and dtypes fix the step's (dimension 0 is the batch).
    optimizer: torch.optim.SGD, Adam or AdamW on the module's parameters; its
      param_groups give the hyperparameters (groups may differ in
      weight_decay). Parameters in no group stay frozen.
    loss: None (forward returns the loss, or loss_output picks it from a
      tuple or dict), 'cross_entropy' or 'mse' against the one tensor of
      targets, or a callable loss(output, **targets).
    micro_batch, remat ('sqrt', 'blocks', 'all', ...), precision ('bf16',
      'f16'), max_grad_norm: gacc's accumulation, rematerialization, mixed
      precision and gradient clipping.
    lora: train low-rank adapters instead of the module (gacc-lora, as
      peft): a dict such as {'rank': 8, 'alpha': 16, 'dropout': 0.05,
      'targets': r'.*attn\.c_attn\.weight'} (targets: a regular expression
      over whole parameter names), or the same as `gacc --lora` text. Every
      parameter is frozen but the adapters; state_dict() gives the merged
      weights W + (alpha/r)·B·A under the module's own names.
    """
    from . import _gacc
    spec = _Spec()
    text = to_mlir(module, inputs, optimizer=optimizer, loss=loss,
                   targets=targets, loss_output=loss_output,
                   micro_batch=micro_batch, remat=remat, precision=precision,
                   max_grad_norm=max_grad_norm, target=target, _spec=spec)
    if isinstance(lora, dict):
        unknown = set(lora) - {"rank", "alpha", "dropout", "targets"}
        if unknown:
            raise ValueError(f"lora: unknown keys {sorted(unknown)} (rank, "
                             "alpha, dropout, targets)")
        lora = ",".join(f"{key}={value}" for key, value in lora.items())
    trainer = _gacc.Trainer.compile(text, name=type(module).__name__,
                                    target=target, lora=lora)
    for name, value, _ in spec.params:
        trainer.set_parameter(name, _numpy(value.detach().to(
            spec.declared[name])))
    return TorchTrainer(trainer, spec, merge_lora=lora is not None)
