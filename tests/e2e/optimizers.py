"""Optimizers against NumPy references of their published algorithms.

A linear regression (a [2, 6, 5] weight read as [12, 5], a [12] bias, MSE)
whose gradients are known in closed form trains 20 steps in gacc (f32);
NumPy repeats them in f64 from the same weights and batches with the
algorithm as its authors' reference code states it (transformers'
Adafactor, bitsandbytes' block-wise AdamW8bit). Every parameter and f32
optimizer-state tensor must agree within 1e-6 relative: ||gacc - numpy||
<= 1e-6 * ||numpy||; 8-bit moments must have the reference's codes and
dequantize within their block's quantization error.

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


def dynamic_map(signed):
    """bitsandbytes' create_dynamic_map, as gacc computes it."""
    values = [0.0, 1.0]
    for decade in range(7):
        count = 2 ** decade if signed else 2 ** (decade + 1)
        for j in range(count):
            value = 10.0 ** (decade - 6) * (0.1 + 0.9 * (j + 0.5) / count)
            values += [value, -value] if signed else [value]
    return np.sort(np.array(values, np.float32)).astype(np.float64)


def quantize(x, block, signed):
    """Block-wise: each block's absolute maximum, and the nearest code of
    every element over it."""
    code = dynamic_map(signed)
    flat = x.reshape(-1)
    pad = (-flat.size) % block
    blocks = np.concatenate([flat, np.zeros(pad)]).reshape(-1, block)
    absmax = np.abs(blocks).max(axis=1)
    normalized = blocks / np.where(absmax > 0, absmax, 1e-38)[:, None]
    index = np.abs(normalized[..., None] - code).argmin(axis=-1)
    return index.reshape(-1)[:flat.size].reshape(x.shape), absmax


def dequantize(index, absmax, block, signed):
    scale = np.repeat(absmax, block)[:index.size].reshape(index.shape)
    return dynamic_map(signed)[index] * scale


def adamw8bit(options):
    """bitsandbytes' AdamW8bit (block-wise): torch's AdamW update on the
    dequantized moments, which are quantized again after it; tensors with
    fewer than min_8bit_size elements keep f32 moments."""
    lr, wd = options["lr"], options.get("weight_decay", 0.01)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    block, smallest = options["block_size"], options["min_8bit_size"]

    def step(p, g, state, t):
        quantized = g.size >= smallest
        if not state:
            if quantized:
                state["exp_avg"] = np.zeros(g.shape, np.int64)
                state["exp_avg_sq"] = np.zeros(g.shape, np.int64)
                blocks = -(-g.size // block)
                state["exp_avg_absmax"] = np.zeros(blocks)
                state["exp_avg_sq_absmax"] = np.zeros(blocks)
            else:
                state["exp_avg"] = np.zeros_like(g)
                state["exp_avg_sq"] = np.zeros_like(g)
        if quantized:
            m = dequantize(state["exp_avg"], state["exp_avg_absmax"], block,
                           True)
            v = dequantize(state["exp_avg_sq"], state["exp_avg_sq_absmax"],
                           block, False)
        else:
            m, v = state["exp_avg"], state["exp_avg_sq"]
        p = p * (1 - lr * wd)
        m = m + (g - m) * (1 - beta1)
        v = v * beta2 + (1 - beta2) * g * g
        denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
        p = p - m / denom * (lr / (1 - beta1 ** t))
        if quantized:
            state["exp_avg"], state["exp_avg_absmax"] = quantize(m, block,
                                                                 True)
            state["exp_avg_sq"], state["exp_avg_sq_absmax"] = quantize(
                v, block, False)
            state["unquantized"] = (m, v)
        else:
            state["exp_avg"], state["exp_avg_sq"] = m, v
        return p
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
    # The weight (60 elements) in 8 bits, in blocks of 16 (the last
    # partial); the bias (12) below min_8bit_size, in f32.
    ("adamw8bit", {"lr": 0.01, "weight_decay": 0.1, "block_size": 16,
                   "min_8bit_size": 32}),
]
REFERENCES = {"adafactor": adafactor, "adamw8bit": adamw8bit}


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
        if "unquantized" in state:
            ok &= check_quantized(tag, name, saved, state, options)
            continue
        for slot, value in state.items():
            key = f"{slot}.{name}"
            if key not in saved:
                print(f"MISMATCH {tag}: the checkpoint lacks {key}")
                ok = False
                continue
            ok &= compare(f"{tag}: {key}", saved[key], value)
    return ok


def check_quantized(tag, name, saved, state, options):
    """8-bit moments: the codes are the reference's (but for elements within
    rounding of a tie between two codes), and each dequantized moment lies
    within its block's quantization error of the reference's unquantized
    moment: half the gap to the neighbouring code, times the block's
    maximum."""
    block = options["block_size"]
    ok = True
    for slot, signed, exact in (("exp_avg", True, state["unquantized"][0]),
                                ("exp_avg_sq", False,
                                 state["unquantized"][1])):
        codes = saved[f"{slot}.{name}"].astype(np.uint8).astype(np.int64)
        absmax = saved[f"{slot}_absmax.{name}"].astype(np.float64)
        same = np.mean(codes == state[slot])
        ok &= compare(f"{tag}: {slot}_absmax.{name}", absmax,
                      state[f"{slot}_absmax"])
        code = dynamic_map(signed)
        gap = np.maximum(np.diff(code, prepend=code[0])[codes],
                         np.diff(code, append=code[-1])[codes])
        bound = np.repeat(absmax, block)[:codes.size].reshape(codes.shape) \
            * gap / 2 * (1 + 1e-4)
        error = np.abs(dequantize(codes, absmax, block, signed) - exact)
        within = bool(np.all(error <= bound)) and same >= 0.98
        print(f"{'ok' if within else 'MISMATCH'} {tag}: {slot}.{name} in 8 "
              f"bits: {100 * same:.1f}% of the codes equal the reference's, "
              f"error at most {np.max(error / bound):.2f} of the block's "
              "quantization error")
        ok &= within
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
