"""Import a PyTorch nn.Module's training step as a gacc MLIR module.

The forward (and the loss) is traced with functorch's `make_fx` into an
aten-level torch.fx graph, with the parameters and buffers passed in by
`torch.nn.utils.stateless.functional_call`. Of the tracers PyTorch 1.13 has,
it is the one that traced every model we tried (torchvision CNNs,
nn.TransformerEncoder, nanoGPT-style code): `torch.fx.symbolic_trace` stops
at data-dependent Python (iterating a Proxy, `torch.arange(t)`), and the meta
tracer fails inside nn.TransformerEncoder. The price is a larger op set
(aten instead of nn modules), which `_Emitter` maps one op at a time.

Every state_dict entry becomes a `gacc.param` of the same name: trainable
parameters as parameters, buffers and parameters the optimizer does not
update as `frozen` ones. A buffer that the forward mutates (batch-norm
running statistics) is written back with `gacc.assign`. A weight shared by
several modules (tied embeddings) is one parameter read twice.
"""
import math
import operator
import re
import os
import struct
import traceback

import torch
import torch.nn.functional as F
from torch.fx.experimental import proxy_tensor
from torch.nn.utils import stateless

aten = torch.ops.aten


class ImportError(ValueError):  # noqa: A001 - gacc.ImportError
    """A module, op or argument that gacc cannot import."""


_ELEMENT_TYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.bool: "i1",
}


def element_type(dtype):
    if dtype not in _ELEMENT_TYPES:
        raise ImportError(f"tensors of {dtype} are not supported")
    return _ELEMENT_TYPES[dtype]


def tensor_type(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element_type(dtype)}>"


def symbol(name):
    """`@name`, quoted unless it is an MLIR bare identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return "@" + name
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fmt(value):
    """A float as MLIR's lexer reads it: with a '.' before any exponent."""
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _float_literal(value, dtype):
    """An MLIR float literal; non-finite values as hex bit patterns."""
    value = float(value)
    if math.isfinite(value):
        return fmt(value)
    if dtype == torch.float64:
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if dtype == torch.float32:
        return "0x%08X" % struct.unpack("<I", struct.pack("<f", value))[0]
    raise ImportError(f"a non-finite constant of {dtype} is not supported")


def _is_float(dtype):
    return dtype.is_floating_point


class _Value:
    """An SSA value of the emitted function with its shape and dtype."""

    def __init__(self, name, shape, dtype, transposed_of=None):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype
        # The value this one swaps the last two dimensions of, which a
        # matmul reads with its transpose flag instead.
        self.transposed_of = transposed_of

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)


def _broadcast_shapes(*shapes):
    return tuple(torch.broadcast_shapes(*shapes))


def _user_location(node):
    """'file:line in function' of the innermost frame of the user's code that
    created `node` (node.stack_trace lists the innermost frame first)."""
    trace = getattr(node, "stack_trace", None) or ""
    torch_dir = os.path.dirname(torch.__file__)
    frames = [line.strip() for line in trace.splitlines()
              if line.strip().startswith("File ")]
    for frame in frames:
        path = frame.split('"')[1] if '"' in frame else ""
        if path and not path.startswith(torch_dir) and \
                not path.startswith(os.path.dirname(__file__)):
            # File "x.py", line 12, in forward
            parts = frame.split(", ")
            line = parts[1].replace("line ", "") if len(parts) > 1 else "?"
            function = parts[2].replace("in ", "") if len(parts) > 2 else "?"
            return f"{path}:{line} in {function}"
    return None


class _Emitter:
    """Writes the body of the model function, one fx node at a time."""

    def __init__(self):
        self.lines = []
        self.counter = 0
        self.constants = {}

    def body(self, results):
        """The emitted lines without those whose values neither `results`
        nor a kept line reads."""
        names = re.compile(r"%v[0-9]+")
        used = {v.name for v in results}
        kept = []
        for line in reversed(self.lines):
            target, sep, rest = line.partition(" = ")
            defined = names.findall(target) if sep else []
            if defined and not any(d in used for d in defined) and \
                    "gacc.dropout" not in rest:
                continue
            used.update(names.findall(rest if sep else line))
            kept.append(line)
        return kept[::-1]

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def op(self, text, shape, dtype):
        """Emits `%vN = text` and returns %vN as a value."""
        name = self.fresh()
        self.lines.append(f"    {name} = {text}")
        return _Value(name, shape, dtype)

    # Constants ---------------------------------------------------------------

    def scalar(self, value, dtype):
        """A rank-0 constant, emitted once per (value, dtype)."""
        key = (repr(float(value)) if _is_float(dtype) else repr(value), dtype)
        if key not in self.constants:
            if _is_float(dtype):
                literal = _float_literal(value, dtype)
            elif dtype == torch.bool:
                literal = "true" if value else "false"
            else:
                literal = str(int(value))
            self.constants[key] = self.op(
                f"gacc.constant dense<{literal}> : {tensor_type((), dtype)}",
                (), dtype)
        return self.constants[key]

    def tensor(self, value):
        """A constant tensor (computed while tracing: arange, a mask): a
        gacc.causal_mask where it is one, else a dense literal."""
        value = value.detach().contiguous()
        if value.dim() >= 2 and value.numel() > 1:
            t, s = value.shape[-2:]
            causal = torch.ones(t, s, dtype=torch.bool).tril(s - t)
            as_bool = value != 0
            binary = bool(((value == 0) | (value == 1)).all())
            for negated in (False, True):
                if not binary or not bool((as_bool == (causal ^ negated))
                                          .all()):
                    continue
                mask = self.op(f"gacc.causal_mask : "
                               f"{tensor_type(value.shape, torch.bool)}",
                               value.shape, torch.bool)
                if negated:  # the future positions: not the mask
                    mask = self.compare("eq", self.to_float(mask,
                                                            torch.float32),
                                        self.scalar(0.0, torch.float32))
                return mask if value.dtype == torch.bool else \
                    self.to_dtype(mask, value.dtype)
        if value.dtype == torch.bool and value.numel() > 64:
            as_float = self.tensor(value.to(torch.float32))
            return self.compare("ne", as_float, self.scalar(0.0,
                                                            torch.float32))
        if value.numel() > 64 and value.dtype != torch.bool:
            data = value.view(torch.uint8).numpy().tobytes() \
                if value.dtype not in (torch.bfloat16,) else None
            if data is not None:
                return self.op(f'gacc.constant dense<"0x{data.hex().upper()}">'
                               f" : {tensor_type(value.shape, value.dtype)}",
                               value.shape, value.dtype)
        flat = value.flatten().tolist()
        if value.dtype == torch.bool:
            text = lambda x: "true" if x else "false"  # noqa: E731
        elif _is_float(value.dtype):
            text = lambda x: _float_literal(x, value.dtype)  # noqa: E731
        else:
            text = str
        if flat and all(x == flat[0] for x in flat):
            literal = text(flat[0])
        else:
            literal = "[" + ", ".join(text(x) for x in flat) + "]"
            if value.dim() != 1:
                # A flat list with a reshape keeps the literal simple.
                flat_value = self.op(
                    f"gacc.constant dense<{literal}> : "
                    f"{tensor_type((value.numel(),), value.dtype)}",
                    (value.numel(),), value.dtype)
                return self.reshape(flat_value, value.shape)
        return self.op(
            f"gacc.constant dense<{literal}> : "
            f"{tensor_type(value.shape, value.dtype)}",
            value.shape, value.dtype)

    # Ops ------------------------------------------------------------------

    def load(self, name, shape, dtype):
        return self.op(f"gacc.load {symbol(name)} : "
                       f"{tensor_type(shape, dtype)}", shape, dtype)

    def binary(self, name, lhs, rhs):
        if lhs.dtype != rhs.dtype or not _is_float(lhs.dtype):
            raise ImportError(f"'{name}' of {lhs.dtype} and {rhs.dtype}")
        shape = _broadcast_shapes(lhs.shape, rhs.shape)
        return self.op(f"gacc.{name} {lhs.name}, {rhs.name} : {lhs.type}, "
                       f"{rhs.type}", shape, lhs.dtype)

    def unary(self, name, x, attrs=""):
        if not _is_float(x.dtype):
            raise ImportError(f"'{name}' of {x.dtype}")
        return self.op(f"gacc.{name} {x.name}{attrs} : {x.type}", x.shape,
                       x.dtype)

    def reshape(self, x, shape):
        shape = tuple(shape)
        if shape == x.shape:
            return x
        return self.op(f"gacc.reshape {x.name} : {x.type} -> "
                       f"{tensor_type(shape, x.dtype)}", shape, x.dtype)

    def transpose(self, x, perm):
        perm = [p % max(x.rank, 1) for p in perm]
        if perm == list(range(x.rank)):
            return x
        shape = tuple(x.shape[p] for p in perm)
        result = self.op(f"gacc.transpose {x.name} perm = {list(perm)} : "
                         f"{x.type} -> {tensor_type(shape, x.dtype)}", shape,
                         x.dtype)
        swap = list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]
        if x.rank >= 2 and perm == swap:
            result.transposed_of = x
        return result

    def broadcast(self, x, shape):
        shape = tuple(shape)
        if shape == x.shape:
            return x
        if not _is_float(x.dtype):
            x = self.to_float(x, torch.float32)
            return self.to_dtype(self.broadcast(x, shape), torch.bool)
        return self.op(f"gacc.broadcast {x.name} : {x.type} -> "
                       f"{tensor_type(shape, x.dtype)}", shape, x.dtype)

    def slice(self, x, offsets, sizes):
        offsets, sizes = list(offsets), list(sizes)
        if offsets == [0] * x.rank and tuple(sizes) == x.shape:
            return x
        return self.op(f"gacc.slice {x.name} offsets = {offsets} sizes = "
                       f"{sizes} : {x.type} -> {tensor_type(sizes, x.dtype)}",
                       sizes, x.dtype)

    def matmul(self, lhs, rhs, transpose_lhs=False, transpose_rhs=False):
        if lhs.transposed_of is not None and not transpose_lhs:
            lhs, transpose_lhs = lhs.transposed_of, True
        if rhs.transposed_of is not None and not transpose_rhs:
            rhs, transpose_rhs = rhs.transposed_of, True
        m = lhs.shape[-1] if transpose_lhs else lhs.shape[-2]
        n = rhs.shape[-2] if transpose_rhs else rhs.shape[-1]
        batch = _broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
        shape = batch + (m, n)
        flags = (" transpose_lhs" if transpose_lhs else "") + \
            (" transpose_rhs" if transpose_rhs else "")
        return self.op(f"gacc.matmul {lhs.name}, {rhs.name}{flags} : "
                       f"{lhs.type}, {rhs.type} -> "
                       f"{tensor_type(shape, lhs.dtype)}", shape, lhs.dtype)

    def select(self, condition, true_value, false_value):
        shape = _broadcast_shapes(condition.shape, true_value.shape,
                                  false_value.shape)
        return self.op(f"gacc.select {condition.name}, {true_value.name}, "
                       f"{false_value.name} : {condition.type}, "
                       f"{true_value.type}, {false_value.type}", shape,
                       true_value.dtype)

    def compare(self, predicate, lhs, rhs):
        shape = _broadcast_shapes(lhs.shape, rhs.shape)
        return self.op(f"gacc.compare {predicate} {lhs.name}, {rhs.name} : "
                       f"{lhs.type}, {rhs.type}", shape, torch.bool)

    def to_float(self, x, dtype):
        """A bool tensor as 0/1 in `dtype`."""
        return self.select(x, self.scalar(1.0, dtype), self.scalar(0.0, dtype))

    def to_dtype(self, x, dtype):
        if x.dtype == dtype:
            return x
        if x.dtype == torch.bool and _is_float(dtype):
            return self.to_float(x, dtype)
        if _is_float(x.dtype) and dtype == torch.bool:
            return self.compare("ne", x, self.scalar(0.0, x.dtype))
        if _is_float(x.dtype) and _is_float(dtype):
            return self.op(f"gacc.cast {x.name} : {x.type} to "
                           f"{tensor_type(x.shape, dtype)}", x.shape, dtype)
        raise ImportError(f"a conversion from {x.dtype} to {dtype}")

    def reduce(self, name, x, axes, keepdims):
        axes = sorted({a % x.rank for a in axes}) if axes else \
            list(range(x.rank))
        if not axes:
            return x
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)
                      if keepdims or i not in axes)
        keep = " keepdims" if keepdims else ""
        return self.op(f"gacc.{name} {x.name} axes = {axes}{keep} : "
                       f"{x.type} -> {tensor_type(shape, x.dtype)}", shape,
                       x.dtype)


def _int_list(value, rank=2):
    if isinstance(value, int):
        return [value] * rank
    value = list(value)
    return value * rank if len(value) == 1 else value


class _GraphImporter:
    """Maps a make_fx graph to the body of a gacc model function."""

    def __init__(self, graph, placeholders):
        self.graph = graph
        # node -> _Value (or a list of them for multi-result ops)
        self.env = {}
        self.placeholders = placeholders  # node -> ("param"|"input", name)
        self.emit = _Emitter()
        self.assigned = {}  # state name -> node whose value it takes
        self.folded = {}  # node -> its value, for ops of constants only

    # Liveness: what the outputs and the state updates need ------------------

    def live_nodes(self, roots):
        live = set()
        work = list(roots)
        inplace = [n for n in self.graph.nodes if n.op == "call_function"
                   and _mutated_args(n)]
        while work:
            while work:
                node = work.pop()
                if node in live:
                    continue
                live.add(node)
                for arg in node.all_input_nodes:
                    work.append(arg)
            # An in-place op is live when what it mutates is.
            for node in inplace:
                if node not in live and any(a in live for a in
                                            _mutated_args(node)):
                    work.append(node)
        return live

    def run(self, output_nodes):
        state_roots = [n for n in self.graph.nodes if n.op == "call_function"
                       and any(self.placeholders.get(a, ("",))[0] == "state"
                               for a in _mutated_args(n))]
        live = self.live_nodes(list(output_nodes) + state_roots)
        for node in self.graph.nodes:
            if node not in live or node.op == "output":
                continue
            try:
                self.env[node] = self.visit(node)
            except ImportError as error:
                raise self.located(node, str(error)) from None
            except (TypeError, IndexError, KeyError, RuntimeError) as error:
                raise self.located(
                    node, f"{type(error).__name__}: {error}") from None
        return self.emit

    def located(self, node, message):
        where = _user_location(node)
        target = getattr(node.target, "__name__", str(node.target))
        text = f"cannot import fx node '{node.name}' ({target})"
        if where:
            text += f" at {where}"
        return ImportError(f"{text}: {message}")


    def meta(self, node):
        meta = node.meta.get("tensor_meta")
        if meta is None:
            raise ImportError("no shape was recorded for this node")
        return meta

    def operand(self, arg, like):
        """`arg` as a value; a Python number becomes a constant of `like`'s
        dtype."""
        if isinstance(arg, torch.fx.Node):
            v = self.value(arg)
            if v.dtype != like.dtype and _is_float(like.dtype):
                if v.rank == 0 or v.dtype == torch.bool:
                    v = self.emit.to_dtype(v, like.dtype)
            return v
        if isinstance(arg, (int, float, bool)):
            return self.emit.scalar(arg, like.dtype)
        raise ImportError(f"unsupported operand {arg!r}")

    # The op table ----------------------------------------------------------

    def visit(self, node):
        if node.op == "placeholder":
            return self.visit_placeholder(node)
        if node.op != "call_function":
            raise ImportError(f"unsupported fx node kind '{node.op}'")
        if all(a in self.folded for a in node.all_input_nodes):
            return self.fold(node)
        if node.target is operator.getitem:
            return self.env[node.args[0]][node.args[1]]
        handler = _HANDLERS.get(node.target)
        if handler is None:
            handler = _HANDLERS.get(getattr(node.target, "overloadpacket",
                                            None))
        if handler is None:
            raise ImportError("this op has no gacc mapping")
        result = handler(self, node, *node.args, **node.kwargs)
        if node.target in _INPLACE_RESULT:
            # The mutated tensor takes the result's value for later readers.
            self.env[node.args[0]] = result
            self.note_assign(node.args[0], result)
        return result

    def note_assign(self, target, value):
        kind = self.placeholders.get(target)
        if kind and kind[0] == "state":
            self.assigned[kind[1]] = target
        elif kind:
            raise ImportError(f"the forward writes its input '{kind[1]}' "
                              "in place")

    def visit_placeholder(self, node):
        kind, name = self.placeholders[node]
        meta = self.meta(node)
        return self.emit.load(name, meta.shape, meta.dtype)

    def fold(self, node):
        """An op of constants only (arange, tril(ones(...)), a mask made of
        them): computed now, emitted where an op reads it."""
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs),
                                             lambda n: self.folded[n])
        if node.target is operator.getitem:
            value = args[0][args[1]]
        else:
            value = node.target(*args, **kwargs)
        self.folded[node] = value
        return value

    def value(self, arg):
        if not isinstance(arg, torch.fx.Node):
            raise ImportError(f"expected a tensor, got {arg!r}")
        value = self.env[arg]
        if isinstance(value, torch.Tensor):
            value = self.env[arg] = self.emit.tensor(value)
        if not isinstance(value, _Value):
            raise ImportError(f"expected a tensor, got {type(value).__name__}")
        return value


def _mutated_args(node):
    """The fx nodes an op writes in place."""
    if node.op != "call_function":
        return []
    if node.target is aten.native_batch_norm.default and node.args[5]:
        return [a for a in node.args[3:5] if isinstance(a, torch.fx.Node)]
    if node.target in _INPLACE_RESULT and isinstance(node.args[0],
                                                      torch.fx.Node):
        return [node.args[0]]
    return []


_HANDLERS = {}
_INPLACE_RESULT = set()


def _handles(*targets, inplace=()):
    def register(function):
        for target in targets:
            _HANDLERS[target] = function
        for target in inplace:
            _HANDLERS[target] = function
            _INPLACE_RESULT.add(target)
        return function
    return register


def _out(g, node):
    meta = g.meta(node)
    return tuple(meta.shape), meta.dtype


# Identity-like ----------------------------------------------------------------

@_handles(aten.clone.default, aten.detach.default, aten.alias.default,
          aten.lift_fresh_copy.default, aten.contiguous.default)
def _identity(g, node, x, *args, **kwargs):
    if node.target is aten.detach.default:
        # The traced forward detaches only what autograd saves for backward;
        # a detach that the loss reads would stop its gradient.
        raise ImportError("detach() inside the forward is not supported "
                          "(it would stop the gradient)")
    return g.value(x)


@_handles(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
          aten._reshape_alias.default, aten.unsqueeze.default,
          aten.squeeze.dim, aten.squeeze.default, aten.flatten.using_ints,
          aten.view.dtype)
def _view(g, node, x, *args, **kwargs):
    shape, dtype = _out(g, node)
    v = g.value(x)
    if dtype != v.dtype:
        raise ImportError("a view that changes the dtype")
    return g.emit.reshape(v, shape)


@_handles(aten.expand.default)
def _expand(g, node, x, sizes, **kwargs):
    shape, _ = _out(g, node)
    v = g.value(x)
    if len(shape) > v.rank:
        v = g.emit.reshape(v, (1,) * (len(shape) - v.rank) + v.shape)
    return g.emit.broadcast(v, shape)


@_handles(aten.t.default)
def _t(g, node, x):
    v = g.value(x)
    return g.emit.transpose(v, [1, 0]) if v.rank == 2 else v


@_handles(aten.transpose.int)
def _transpose(g, node, x, a, b):
    v = g.value(x)
    perm = list(range(v.rank))
    a, b = a % v.rank, b % v.rank
    perm[a], perm[b] = perm[b], perm[a]
    return g.emit.transpose(v, perm)


@_handles(aten.permute.default)
def _permute(g, node, x, perm):
    return g.emit.transpose(g.value(x), list(perm))


@_handles(aten.slice.Tensor)
def _slice(g, node, x, dim=0, start=None, end=None, step=1):
    v = g.value(x)
    if step != 1:
        raise ImportError("slices with a step other than 1")
    dim %= v.rank
    size = v.shape[dim]
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    offsets = [0] * v.rank
    sizes = list(v.shape)
    offsets[dim], sizes[dim] = start, end - start
    return g.emit.slice(v, offsets, sizes)


@_handles(aten.select.int)
def _select_index(g, node, x, dim, index):
    v = g.value(x)
    dim %= v.rank
    index %= v.shape[dim]
    offsets = [0] * v.rank
    sizes = list(v.shape)
    offsets[dim], sizes[dim] = index, 1
    shape, _ = _out(g, node)
    return g.emit.reshape(g.emit.slice(v, offsets, sizes), shape)


@_handles(aten.split.Tensor, aten.split_with_sizes.default,
          aten.unbind.int, aten.chunk.default)
def _split(g, node, x, size_or_sizes=None, dim=0):
    v = g.value(x)
    if node.target is aten.unbind.int:
        dim = size_or_sizes or 0
    dim %= v.rank
    total = v.shape[dim]
    if node.target is aten.unbind.int:
        lengths = [1] * total
    elif node.target is aten.split_with_sizes.default:
        lengths = list(size_or_sizes)
    elif node.target is aten.chunk.default:
        step = -(-total // size_or_sizes)
        lengths = [min(step, total - i) for i in range(0, total, step)]
    else:
        lengths = [min(size_or_sizes, total - i)
                   for i in range(0, total, size_or_sizes)]
    pieces = []
    offset = 0
    for length in lengths:
        sizes = list(v.shape)
        sizes[dim] = length
        offsets = [0] * v.rank
        offsets[dim] = offset
        piece = g.emit.slice(v, offsets, sizes)
        if node.target is aten.unbind.int:
            piece = g.emit.reshape(piece, v.shape[:dim] + v.shape[dim + 1:])
        pieces.append(piece)
        offset += length
    return pieces


@_handles(aten.cat.default)
def _cat(g, node, tensors, dim=0):
    values = [g.value(t) for t in tensors]
    shape, dtype = _out(g, node)
    dim %= len(shape)
    types = ", ".join(v.type for v in values)
    names = ", ".join(v.name for v in values)
    return g.emit.op(f"gacc.concat {names} axis = {dim} : {types} -> "
                     f"{tensor_type(shape, dtype)}", shape, dtype)


# Elementwise ------------------------------------------------------------------

def _binary(name):
    def handler(g, node, a, b, alpha=1, **kwargs):
        shape, dtype = _out(g, node)
        if isinstance(a, torch.fx.Node) and _is_float(g.value(a).dtype):
            dtype = g.value(a).dtype  # a count kept as a float (frontend)
        if not _is_float(dtype):
            raise ImportError(f"'{name}' on {dtype} tensors")
        lhs = g.operand(a, _Value("", (), dtype))
        rhs = g.operand(b, _Value("", (), dtype))
        if alpha != 1:
            rhs = g.emit.binary("mul", rhs, g.emit.scalar(alpha, dtype))
        return g.emit.binary(name, lhs, rhs)
    return handler


_HANDLERS[aten.add.Tensor] = _binary("add")
_HANDLERS[aten.add.Scalar] = _binary("add")
_HANDLERS[aten.sub.Tensor] = _binary("sub")
_HANDLERS[aten.sub.Scalar] = _binary("sub")
_HANDLERS[aten.mul.Tensor] = _binary("mul")
_HANDLERS[aten.mul.Scalar] = _binary("mul")
_HANDLERS[aten.div.Tensor] = _binary("div")
_HANDLERS[aten.div.Scalar] = _binary("div")
for _target, _name in [(aten.add_.Tensor, "add"), (aten.sub_.Tensor, "sub"),
                       (aten.mul_.Tensor, "mul"), (aten.div_.Tensor, "div")]:
    _HANDLERS[_target] = _binary(_name)
    _INPLACE_RESULT.add(_target)


@_handles(aten.rsub.Scalar, aten.rsub.Tensor)
def _rsub(g, node, a, b, alpha=1):
    return _binary("sub")(g, node, b, a) if alpha == 1 else \
        _unsupported("rsub with alpha")


def _unary(name, attrs=""):
    def handler(g, node, x, *args, **kwargs):
        return g.emit.unary(name, g.value(x), attrs)
    return handler


for _target, _name in [
        (aten.neg.default, "neg"), (aten.exp.default, "exp"),
        (aten.log.default, "log"), (aten.sqrt.default, "sqrt"),
        (aten.rsqrt.default, "rsqrt"), (aten.tanh.default, "tanh"),
        (aten.sigmoid.default, "sigmoid"), (aten.relu.default, "relu"),
        (aten.erf.default, "erf")]:
    _HANDLERS[_target] = _unary(_name)
_HANDLERS[aten.relu_.default] = _unary("relu")
_INPLACE_RESULT.add(aten.relu_.default)


@_handles(aten.gelu.default)
def _gelu(g, node, x, approximate="none"):
    attrs = " approximation = tanh" if approximate == "tanh" else ""
    return g.emit.unary("gelu", g.value(x), attrs)


@_handles(aten.pow.Tensor_Scalar)
def _pow(g, node, x, exponent):
    v = g.value(x)
    if exponent == 2:
        return g.emit.binary("mul", v, v)
    if exponent == 0.5:
        return g.emit.unary("sqrt", v)
    if exponent == -0.5:
        return g.emit.unary("rsqrt", v)
    if exponent == 1:
        return v
    if exponent == 3:
        return g.emit.binary("mul", g.emit.binary("mul", v, v), v)
    raise ImportError(f"pow with exponent {exponent}")


@_handles(aten._to_copy.default)
def _to_copy(g, node, x, dtype=None, **kwargs):
    _, out_dtype = _out(g, node)
    return g.emit.to_dtype(g.value(x), out_dtype)


@_handles(aten.bitwise_not.default, aten.logical_not.default)
def _not(g, node, x):
    v = g.value(x)
    if v.dtype != torch.bool:
        raise ImportError("bitwise not of a non-bool tensor")
    as_float = g.emit.to_float(v, torch.float32)
    return g.emit.compare("eq", as_float, g.emit.scalar(0.0, torch.float32))


_PREDICATES = {aten.eq: "eq", aten.ne: "ne", aten.lt: "lt", aten.le: "le",
               aten.gt: "gt", aten.ge: "ge"}


def _compare_handler(predicate):
    def handler(g, node, a, b):
        lhs = g.value(a)
        if not _is_float(lhs.dtype):
            lhs = g.emit.to_float(lhs, torch.float32) \
                if lhs.dtype == torch.bool else _unsupported(
                    "comparisons of integer tensors")
        rhs = g.operand(b, lhs)
        return g.emit.compare(predicate, lhs, rhs)
    return handler


for _packet, _predicate in _PREDICATES.items():
    _HANDLERS[_packet.Scalar] = _compare_handler(_predicate)
    _HANDLERS[_packet.Tensor] = _compare_handler(_predicate)


@_handles(aten.masked_fill.Scalar, aten.masked_fill.Tensor,
          inplace=(aten.masked_fill_.Scalar, aten.masked_fill_.Tensor))
def _masked_fill(g, node, x, mask, value):
    v = g.value(x)
    m = g.value(mask)
    fill = g.operand(value, v)
    out = g.emit.select(m, fill, v)
    return g.emit.broadcast(out, v.shape) if out.shape != v.shape else out


@_handles(aten.where.self)
def _where(g, node, condition, a, b):
    shape, dtype = _out(g, node)
    like = _Value("", (), dtype)
    return g.emit.select(g.value(condition), g.operand(a, like),
                         g.operand(b, like))


@_handles(aten.zeros_like.default, aten.ones_like.default,
          aten.full_like.default)
def _filled_like(g, node, x, *args, **kwargs):
    shape, dtype = _out(g, node)
    fill = {aten.zeros_like.default: 0, aten.ones_like.default: 1}.get(
        node.target, args[0] if args else kwargs.get("fill_value"))
    return g.emit.broadcast(g.emit.scalar(fill, dtype), shape)


@_handles(aten.native_dropout.default)
def _dropout(g, node, x, p, train):
    v = g.value(x)
    if not train or p == 0:
        return [v, None]
    return [g.emit.op(f"gacc.dropout {v.name} rate = {fmt(p)} seed = "
                      f"{g.emit.counter} : {v.type}", v.shape, v.dtype), None]


# Linear algebra -----------------------------------------------------------------

def _matmul_operands(g, a, b):
    lhs, rhs = g.value(a), g.value(b)
    if lhs.rank == 1:
        lhs = g.emit.reshape(lhs, (1,) + lhs.shape)
    if rhs.rank == 1:
        rhs = g.emit.reshape(rhs, rhs.shape + (1,))
    return lhs, rhs


@_handles(aten.mm.default, aten.bmm.default, aten.matmul.default)
def _mm(g, node, a, b):
    lhs, rhs = _matmul_operands(g, a, b)
    shape, _ = _out(g, node)
    return g.emit.reshape(g.emit.matmul(lhs, rhs), shape)


@_handles(aten.addmm.default, aten.baddbmm.default)
def _addmm(g, node, bias, a, b, beta=1, alpha=1):
    product = _mm(g, node, a, b)
    dtype = product.dtype
    if alpha != 1:
        product = g.emit.binary("mul", product, g.emit.scalar(alpha, dtype))
    if beta == 0:
        return product
    c = g.value(bias)
    if beta != 1:
        c = g.emit.binary("mul", c, g.emit.scalar(beta, dtype))
    return g.emit.binary("add", product, c)


# Reductions ---------------------------------------------------------------------

@_handles(aten.sum.dim_IntList, aten.sum.default)
def _sum(g, node, x, dims=None, keepdim=False, **kwargs):
    return g.emit.reduce("reduce_sum", g.value(x), dims, keepdim)


@_handles(aten.mean.dim, aten.mean.default)
def _mean(g, node, x, dims=None, keepdim=False, **kwargs):
    return g.emit.reduce("reduce_mean", g.value(x), dims, keepdim)


@_handles(aten.amax.default)
def _amax(g, node, x, dims=(), keepdim=False):
    return g.emit.reduce("reduce_max", g.value(x), dims, keepdim)


# Neural-network ops -----------------------------------------------------------

@_handles(aten._softmax.default)
def _softmax(g, node, x, dim, half_to_float=False):
    v = g.value(x)
    return g.emit.unary("softmax", v, f" axis = {dim % v.rank}")


@_handles(aten._log_softmax.default)
def _log_softmax(g, node, x, dim, half_to_float=False):
    v = g.value(x)
    return g.emit.unary("log_softmax", v, f" axis = {dim % v.rank}")


@_handles(aten.native_layer_norm.default)
def _layer_norm(g, node, x, normalized_shape, weight, bias, eps):
    v = g.value(x)
    shape = tuple(normalized_shape)
    scale = g.value(weight) if weight is not None else \
        g.emit.broadcast(g.emit.scalar(1.0, v.dtype), shape)
    offset = g.value(bias) if bias is not None else \
        g.emit.broadcast(g.emit.scalar(0.0, v.dtype), shape)
    y = g.emit.op(f"gacc.layer_norm {v.name}, {scale.name}, {offset.name} "
                  f"{{epsilon = {fmt(eps)} : f64}} : {v.type}, "
                  f"{scale.type}", v.shape, v.dtype)
    return [y, None, None]


@_handles(aten.index_select.default)
def _index_select(g, node, x, dim, index):
    table, ids = g.value(x), g.value(index)
    if dim % table.rank != 0 or table.rank != 2 or ids.rank != 1:
        raise ImportError("index_select is supported on dimension 0 of a "
                          "matrix with a vector of indices (an embedding)")
    shape, dtype = _out(g, node)
    return g.emit.op(f"gacc.embedding {table.name}, {ids.name} : "
                     f"{table.type}, {ids.type} -> "
                     f"{tensor_type(shape, dtype)}", shape, dtype)


@_handles(aten.embedding.default)
def _embedding(g, node, weight, indices, padding_idx=-1, *args):
    table, ids = g.value(weight), g.value(indices)
    shape, dtype = _out(g, node)
    return g.emit.op(f"gacc.embedding {table.name}, {ids.name} : "
                     f"{table.type}, {ids.type} -> "
                     f"{tensor_type(shape, dtype)}", shape, dtype)


@_handles(aten.nll_loss_forward.default)
def _nll_loss(g, node, log_probs, target, weight, reduction, ignore_index):
    producer = log_probs
    if not (isinstance(producer, torch.fx.Node) and
            producer.target is aten._log_softmax.default and
            producer.args[1] % len(g.meta(producer).shape) ==
            len(g.meta(producer).shape) - 1):
        raise ImportError("nll_loss is supported on the log_softmax of "
                          "logits over their last dimension "
                          "(F.cross_entropy)")
    if weight is not None:
        raise ImportError("class weights are not supported")
    logits = g.value(producer.args[0])
    targets = g.value(target)
    mode = {0: None, 1: "token_mean", 2: "sum"}[reduction]
    if mode is None:
        raise ImportError("reduction='none' as the loss")
    loss = g.emit.op(
        f"gacc.cross_entropy {mode} {logits.name}, {targets.name} "
        f"ignore_index = {int(ignore_index)} : {logits.type}, {targets.type}",
        (), logits.dtype)
    return [loss, None]


@_handles(aten.mse_loss.default)
def _mse_loss(g, node, x, target, reduction=1):
    v, t = g.value(x), g.value(target)
    mode = {1: "mean", 2: "sum"}.get(reduction)
    if mode is None:
        raise ImportError("reduction='none' as the loss")
    return g.emit.op(f"gacc.mse_loss {mode} {v.name}, {t.name} : {v.type}",
                     (), v.dtype)


@_handles(aten.convolution.default)
def _convolution(g, node, x, weight, bias, stride, padding, dilation,
                 transposed, output_padding, groups):
    v, w = g.value(x), g.value(weight)
    if transposed:
        raise ImportError("transposed convolutions are not supported")
    if v.rank != 4:
        raise ImportError("only 2-d convolutions (NCHW) are supported")
    shape, dtype = _out(g, node)
    y = g.emit.op(
        f"gacc.conv2d {v.name}, {w.name} stride = {_int_list(stride)} "
        f"padding = {_int_list(padding)} dilation = {_int_list(dilation)} "
        f"groups = {groups} : {v.type}, {w.type} -> "
        f"{tensor_type(shape, dtype)}", shape, dtype)
    if bias is None:
        return y
    b = g.emit.reshape(g.value(bias), (shape[1], 1, 1))
    return g.emit.binary("add", y, b)


@_handles(aten.max_pool2d_with_indices.default)
def _max_pool2d(g, node, x, kernel, stride=(), padding=0, dilation=1,
                ceil_mode=False):
    if ceil_mode:
        raise ImportError("max_pool2d with ceil_mode=True")
    v = g.value(x)
    kernel = _int_list(kernel)
    stride = _int_list(stride) if stride else kernel
    padding, dilation = _int_list(padding), _int_list(dilation)
    shape = v.shape[:2] + tuple(
        (v.shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1)
        // stride[i] + 1 for i in range(2))
    y = g.emit.op(
        f"gacc.max_pool2d {v.name} kernel = {kernel} stride = {stride} "
        f"padding = {_int_list(padding)} dilation = {_int_list(dilation)} : "
        f"{v.type} -> {tensor_type(shape, v.dtype)}", shape, v.dtype)
    return [y, None]


@_handles(aten.avg_pool2d.default)
def _avg_pool2d(g, node, x, kernel, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override:
        raise ImportError("avg_pool2d supports count_include_pad=True, "
                          "ceil_mode=False and no divisor_override")
    v = g.value(x)
    kernel = _int_list(kernel)
    stride = _int_list(stride) if stride else kernel
    shape, dtype = _out(g, node)
    return g.emit.op(
        f"gacc.avg_pool2d {v.name} kernel = {kernel} stride = {stride} "
        f"padding = {_int_list(padding)} : {v.type} -> "
        f"{tensor_type(shape, dtype)}", shape, dtype)


@_handles(aten._adaptive_avg_pool2d.default)
def _adaptive_avg_pool2d(g, node, x, output_size):
    v = g.value(x)
    shape, dtype = _out(g, node)
    if tuple(shape[-2:]) == (1, 1):
        return g.emit.reduce("reduce_mean", v, [-2, -1], True)
    height, width = v.shape[-2:]
    if height % shape[-2] or width % shape[-1]:
        raise ImportError(f"adaptive_avg_pool2d from {height}x{width} to "
                          f"{shape[-2]}x{shape[-1]}: only sizes that divide "
                          "the input (equal windows) are supported")
    kernel = [height // shape[-2], width // shape[-1]]
    return g.emit.op(
        f"gacc.avg_pool2d {v.name} kernel = {kernel} stride = {kernel} "
        f"padding = [0, 0] : {v.type} -> {tensor_type(shape, dtype)}",
        shape, dtype)


@_handles(aten.native_batch_norm.default)
def _batch_norm(g, node, x, weight, bias, running_mean, running_var,
                training, momentum, eps):
    v = g.value(x)
    channels = v.shape[1]
    ones = (channels,)
    w = g.value(weight) if weight is not None else \
        g.emit.broadcast(g.emit.scalar(1.0, v.dtype), ones)
    b = g.value(bias) if bias is not None else \
        g.emit.broadcast(g.emit.scalar(0.0, v.dtype), ones)
    if running_mean is None or running_var is None:
        raise ImportError("batch norm without running statistics "
                          "(track_running_stats=False)")
    if not training:
        raise ImportError("batch norm in eval mode while training (call "
                          "module.train() before importing)")
    rm, rv = g.value(running_mean), g.value(running_var)
    stat = _Value("", ones, rm.dtype)
    names = [g.emit.fresh() for _ in range(3)]
    g.emit.lines.append(
        f"    {names[0]}, {names[1]}, {names[2]} = gacc.batch_norm {v.name}, "
        f"{w.name}, {b.name}, {rm.name}, {rv.name} momentum = "
        f"{fmt(momentum)} epsilon = {fmt(eps)} : {v.type}, "
        f"{stat.type}")
    y = _Value(names[0], v.shape, v.dtype)
    new_mean = _Value(names[1], ones, rm.dtype)
    new_var = _Value(names[2], ones, rv.dtype)
    g.env[running_mean] = new_mean
    g.env[running_var] = new_var
    g.note_assign(running_mean, new_mean)
    g.note_assign(running_var, new_var)
    return [y, None, None]


def _unsupported(what):
    raise ImportError(f"{what} is not supported")
