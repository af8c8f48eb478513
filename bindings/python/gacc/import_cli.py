"""`gacc import FILE.py:FACTORY ...`: write a PyTorch module's training step
as gacc MLIR (model.mlir) and its initial weights (model.safetensors), which
model.mlir names (gacc.initial_values): `gacc run model.mlir` starts from
them, and an artifact from `gacc compile` with `--init model.safetensors`.

FACTORY is a function of FILE.py that returns a module, or a (module,
optimizer) pair; without an optimizer, --optimizer builds one on all
parameters.
"""
import argparse
import importlib.util
import json
import os
import struct
import sys

_DTYPES = {"float32": "float32", "f32": "float32", "float64": "float64",
           "f64": "float64", "int64": "int64", "i64": "int64",
           "int32": "int32", "i32": "int32", "bool": "bool", "i1": "bool"}


def _tensor_arg(text):
    """NAME:SHAPE:DTYPE, SHAPE as 4x64 (the batch first)."""
    parts = text.split(":")
    if len(parts) != 3 or not parts[0]:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not NAME:SHAPE:DTYPE (e.g. idx:8x64:int64)")
    name, shape, dtype = parts
    try:
        dims = [int(d) for d in shape.split("x")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape '{shape}' in '{text}'")
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"bad shape '{shape}' in '{text}'")
    if dtype not in _DTYPES:
        raise argparse.ArgumentTypeError(
            f"bad dtype '{dtype}' in '{text}' ({', '.join(sorted(_DTYPES))})")
    return name, dims, _DTYPES[dtype]


def write_safetensors(path, tensors):
    """name -> contiguous torch tensor, written atomically."""
    import torch
    names = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64",
             torch.int32: "I32", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        data = tensor.detach().contiguous().view(torch.uint8).numpy() \
            .tobytes() if tensor.numel() else b""
        header[name] = {"dtype": names[tensor.dtype],
                        "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    temporary = path + ".tmp"
    with open(temporary, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)
    os.replace(temporary, path)


def _load_factory(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit(f"gacc import: '{spec}' is not FILE.py:FACTORY")
    if not os.path.exists(path):
        raise SystemExit(f"gacc import: {path}: no such file")
    module_spec = importlib.util.spec_from_file_location("_gacc_user_model",
                                                         path)
    source = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec.loader.exec_module(source)
    factory = getattr(source, name, None)
    if not callable(factory):
        raise SystemExit(f"gacc import: {path} has no function '{name}'")
    return factory


def _optimizer(args, module):
    import torch
    kind = args.optimizer
    params = [p for p in module.parameters() if p.requires_grad]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=args.lr, momentum=args.momentum,
                               weight_decay=args.weight_decay)
    if kind == "adam":
        return torch.optim.Adam(params, lr=args.lr,
                                weight_decay=args.weight_decay)
    return torch.optim.AdamW(params, lr=args.lr,
                             weight_decay=args.weight_decay)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="gacc import", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factory", metavar="FILE.py:FACTORY")
    parser.add_argument("--input", type=_tensor_arg, action="append",
                        default=[], metavar="NAME:SHAPE:DTYPE",
                        help="a keyword argument of forward (repeat)")
    parser.add_argument("--target-input", type=_tensor_arg, action="append",
                        default=[], metavar="NAME:SHAPE:DTYPE",
                        help="the loss's target (with --loss), or a further "
                        "argument of forward")
    parser.add_argument("--loss", choices=["cross_entropy", "mse"],
                        help="applied to forward's output and the target "
                        "(default: forward returns the loss)")
    parser.add_argument("--loss-output", help="index or key of the loss in "
                        "what forward returns")
    parser.add_argument("--optimizer", choices=["sgd", "adam", "adamw"],
                        default="adamw", help="when FACTORY returns no "
                        "optimizer (default adamw)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--micro-batch", type=int)
    parser.add_argument("--remat")
    parser.add_argument("--precision", choices=["f32", "bf16", "f16"])
    parser.add_argument("--max-grad-norm", type=float)
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.mlir")
    args = parser.parse_args(argv)
    if not args.input:
        parser.error("at least one --input NAME:SHAPE:DTYPE is needed")

    import torch
    from . import frontend
    from .torch_import import ImportError as GaccImportError

    made = _load_factory(args.factory)()
    module, optimizer = made if isinstance(made, tuple) else (made, None)
    if not isinstance(module, torch.nn.Module):
        raise SystemExit(f"gacc import: {args.factory} returned "
                         f"{type(module).__name__}, not an nn.Module")
    module.train()
    if optimizer is None:
        optimizer = _optimizer(args, module)

    def example(name, dims, dtype):
        return torch.zeros(dims, dtype=getattr(torch, dtype))

    inputs = {n: example(n, d, t) for n, d, t in args.input}
    targets = {n: example(n, d, t) for n, d, t in args.target_input}
    loss_output = args.loss_output
    if loss_output is not None and loss_output.lstrip("-").isdigit():
        loss_output = int(loss_output)
    spec = frontend._Spec()
    stem = os.path.splitext(args.output)[0]
    try:
        text = frontend.to_mlir(
            module, inputs, optimizer=optimizer, loss=args.loss,
            targets=targets or None, loss_output=loss_output,
            micro_batch=args.micro_batch, remat=args.remat,
            precision=args.precision, max_grad_norm=args.max_grad_norm,
            _spec=spec,
            _initial_values=os.path.basename(stem) + ".safetensors")
    except GaccImportError as error:
        raise SystemExit(f"gacc import: {error}")
    weights = {name: value.detach().to(spec.declared[name])
               for name, value, _ in spec.params}
    try:
        write_safetensors(stem + ".safetensors", weights)
        temporary = args.output + ".tmp"
        with open(temporary, "w") as out:
            out.write(text)
        os.replace(temporary, args.output)
    except OSError as error:
        written = str(error.filename).removesuffix(".tmp")
        raise SystemExit(f"gacc import: cannot write {written}: "
                         f"{error.strerror}")
    print(f"gacc import: wrote {args.output} ({len(spec.params)} tensors, "
          f"{len(spec.inputs)} inputs) and {stem}.safetensors")


if __name__ == "__main__":
    main()
