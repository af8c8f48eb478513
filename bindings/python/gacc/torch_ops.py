"""The aten op table of the PyTorch importer: one handler per aten op (or
family), registered with `_handles`, each emitting the gacc ops of one fx
node through the importer's emitter (torch_import.py)."""
import torch

from .torch_import import (ImportError, _HANDLERS, _INPLACE_RESULT,  # noqa
                           _Value, _handles, _is_float, aten, fmt,
                           tensor_type)


def _int_list(value, rank=2):
    if isinstance(value, int):
        return [value] * rank
    value = list(value)
    return value * rank if len(value) == 1 else value


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
