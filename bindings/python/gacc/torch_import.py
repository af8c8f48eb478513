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
several modules (tied embeddings) is one parameter read twice. The op
table is torch_ops.py.
"""
import math
import operator
import re
import os
import struct

import torch

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


def string(text):
    """`text` as an MLIR string literal (other than printable ASCII as hex
    escapes of its UTF-8 bytes)."""
    def escaped(c):
        if c.isascii() and c.isprintable() and c not in '"\\':
            return c
        return "".join(f"\\{byte:02X}" for byte in c.encode())
    return '"' + "".join(map(escaped, text)) + '"'


def symbol(name):
    """`@name`, quoted unless it is an MLIR bare identifier."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name):
        return "@" + name
    return "@" + string(name)


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




# The op table (torch_ops.py) registers itself in _HANDLERS on import.
from . import torch_ops  # noqa: E402,F401
