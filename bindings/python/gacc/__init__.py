"""gacc: compile and train neural-network training steps.

    import gacc
    trainer = gacc.Trainer.compile(open("examples/mlp.mlir").read())
    trainer = gacc.from_torch(model, {"x": x}, optimizer=opt, loss="mse",
                              targets={"y": y})

`Trainer` and `set_num_threads`/`get_num_threads` (the CPU steps' thread
pool, as torch's) are the compiled extension (bindings/python/GaccModule.cpp);
`from_torch` and `to_mlir` import a PyTorch module (gacc/frontend.py), and
load torch only when called.
"""
from ._gacc import Trainer, get_num_threads, set_num_threads  # noqa: F401


def from_torch(module, inputs, **keywords):
    from .frontend import from_torch as impl
    return impl(module, inputs, **keywords)


def to_mlir(module, inputs, **keywords):
    from .frontend import to_mlir as impl
    return impl(module, inputs, **keywords)


from_torch.__doc__ = "See gacc.frontend.from_torch."
to_mlir.__doc__ = "See gacc.frontend.to_mlir."
