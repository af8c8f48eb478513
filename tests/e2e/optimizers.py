"""Optimizers against NumPy references of their published algorithms.

A linear regression (a [2, 6, 5] weight read as [12, 5], a [12] bias, MSE)
whose gradients are known in closed form trains 20 steps in gacc (f32);
NumPy repeats them in f64 from the same weights and batches with the
algorithm as its authors' reference code states it (transformers'
Adafactor). Every parameter and optimizer-state tensor must agree within
1e-6 relative: ||gacc - numpy|| <= 1e-6 * ||numpy||.

usage: optimizers.py WORK_DIR
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402
import gacc  # noqa: E402

TOLERANCE = 1e-6
STEPS = 20
N, IN, OUT = 16, 5, 12

MODEL = """\
gacc.param @w : tensor<2x6x5xf32> = #gacc.init<normal, scale = 0.5, seed = 1>
gacc.param @b : tensor<12xf32> = #gacc.init<normal, scale = 0.5, seed = 2>
gacc.input @x : tensor<16x5xf32> features
gacc.input @y : tensor<16x12xf32> features
func.func @model() -> tensor<f32> {{
  %x = gacc.load @x : tensor<16x5xf32>
  %y = gacc.load @y : tensor<16x12xf32>
  %w3 = gacc.load @w : tensor<2x6x5xf32>
  %w = gacc.reshape %w3 : tensor<2x6x5xf32> -> tensor<12x5xf32>
  %b = gacc.load @b : tensor<12xf32>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<16x5xf32>, tensor<12x5xf32> -> tensor<16x12xf32>
  %p = gacc.add %h, %b : tensor<16x12xf32>, tensor<12xf32>
  %l = gacc.mse_loss mean %p, %y : tensor<16x12xf32>
  return %l : tensor<f32>
}}
gacc.train_step @train model @model batch_size 16 optimizer {optimizer}
"""


def gradients(params, x, y):
    w = params["w"].reshape(OUT, IN)
    r = x @ w.T + params["b"] - y
    scale = 2.0 / r.size
    return {"w": (scale * r.T @ x).reshape(params["w"].shape),
            "b": scale * r.sum(axis=0)}


def rms(t):
    return np.linalg.norm(t) / math.sqrt(t.size)


def adafactor(options):
    """transformers.optimization.Adafactor.step, one parameter at a time."""
    lr = options.get("lr", 0.0)
    eps1, eps2 = options.get("eps1", 1e-30), options.get("eps2", 1e-3)
    clip, decay_rate = options.get("clip_threshold", 1.0), -0.8
    beta1 = options.get("beta1", 0.0)
    weight_decay = options.get("weight_decay", 0.0)
    scale_parameter = options.get("scale_parameter", True)
    relative_step = options.get("relative_step", True)
    warmup_init = options.get("warmup_init", False)

    def step(p, g, state, t):
        factored = g.ndim >= 2
        if not state:
            if beta1:
                state["exp_avg"] = np.zeros_like(g)
            if factored:
                state["exp_avg_sq_row"] = np.zeros(g.shape[:-1])
                state["exp_avg_sq_col"] = np.zeros(g.shape[:-2] + g.shape[-1:])
            else:
                state["exp_avg_sq"] = np.zeros_like(g)
        step_size = lr
        if relative_step:
            min_step = 1e-6 * t if warmup_init else 1e-2
            step_size = min(min_step, 1.0 / math.sqrt(t))
        param_scale = max(eps2, rms(p)) if scale_parameter else 1.0
        step_lr = param_scale * step_size
        beta2t = 1.0 - math.pow(t, decay_rate)
        update = g ** 2 + eps1
        if factored:
            row, col = state["exp_avg_sq_row"], state["exp_avg_sq_col"]
            row[...] = row * beta2t + update.mean(axis=-1) * (1 - beta2t)
            col[...] = col * beta2t + update.mean(axis=-2) * (1 - beta2t)
            r = 1 / np.sqrt(row / row.mean(axis=-1, keepdims=True))
            c = 1 / np.sqrt(col)
            update = r[..., None] * c[..., None, :] * g
        else:
            v = state["exp_avg_sq"]
            v[...] = v * beta2t + update * (1 - beta2t)
            update = g / np.sqrt(v)
        update = update / max(rms(update) / clip, 1.0)
        update = update * step_lr
        if beta1:
            m = state["exp_avg"]
            m[...] = m * beta1 + update * (1 - beta1)
            update = m
        if weight_decay:
            p = p - weight_decay * step_lr * p
        return p - update
    return step


def attribute(kind, options):
    def text(v):
        return ("true" if v else "false") if isinstance(v, bool) else repr(v)
    body = ", ".join(f"{k} = {text(v)}" for k, v in options.items())
    return f"#gacc.{kind}<{body}>"


CASES = [
    ("adafactor", {}),
    ("adafactor", {"beta1": 0.9, "weight_decay": 0.1}),
    ("adafactor", {"warmup_init": True, "clip_threshold": 0.5}),
    ("adafactor", {"lr": 0.05, "relative_step": False,
                   "scale_parameter": False}),
]
REFERENCES = {"adafactor": adafactor}


def compare(tag, ours, reference):
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference)
    if ours.shape != reference.shape:
        print(f"MISMATCH {tag}: shape {ours.shape}, expected "
              f"{reference.shape}")
        return False
    error = np.linalg.norm(ours - reference) / max(
        np.linalg.norm(reference), 1e-30)
    ok = error <= TOLERANCE
    print(f"{'ok' if ok else 'MISMATCH'} {tag}: relative error {error:.2e}")
    return ok


def check(kind, options, work):
    tag = attribute(kind, options)
    trainer = gacc.Trainer.compile(MODEL.format(optimizer=tag), name=tag)
    params = {k: v.astype(np.float64) for k, v in trainer.parameters().items()}
    rng = np.random.default_rng(0)
    step = REFERENCES[kind](options)
    states = {name: {} for name in params}
    for t in range(1, STEPS + 1):
        x = rng.standard_normal((N, IN)).astype(np.float32)
        y = rng.standard_normal((N, OUT)).astype(np.float32)
        trainer.step({"x": x, "y": y})
        grads = gradients(params, x.astype(np.float64), y.astype(np.float64))
        for name in params:
            params[name] = step(params[name], grads[name], states[name], t)
    ok = True
    ours = trainer.parameters()
    for name, value in params.items():
        ok &= compare(f"{tag}: {name} after {STEPS} steps", ours[name], value)
    path = os.path.join(work, "checkpoint.safetensors")
    trainer.save_checkpoint(path)
    saved = tensorfiles.load(path)
    for name, state in states.items():
        for slot, value in state.items():
            key = f"{slot}.{name}"
            if key not in saved:
                print(f"MISMATCH {tag}: the checkpoint lacks {key}")
                ok = False
                continue
            ok &= compare(f"{tag}: {key}", saved[key], value)
    return ok


def main():
    work = sys.argv[1]
    ok = True
    for kind, options in CASES:
        ok &= check(kind, options, work)
    print("OPTIMIZERS OK" if ok else "OPTIMIZERS MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
