#!/usr/bin/python3
"""Training-step throughput of gacc against PyTorch eager, in one run.

For examples/mlp.mlir (batch 64) and examples/gpt_mini.mlir (batch 16), and
with --models ...,gpt2_small GPT-2-small's shapes (examples/make_gpt.py: vocab 50257, context
256, width 768, 12 heads, 12 layers, batch 4): samples/s of a full step
(forward, backward, AdamW) for gacc (`gacc run`, synthetic data, JIT) and
PyTorch eager with the same model, batch and thread count, their ratio, and
each one's model FLOP utilization against the sgemm rate (1024^3, the same
threads) this machine measures just before and after that side's run. The
bf16 rows are gacc's `--precision bf16` against PyTorch under
torch.autocast("cpu", dtype=torch.bfloat16).

usage: bench/train_bench.py [--gacc build/bin/gacc] [--threads 2] [--steps 60]
                            [--models mlp,gpt_mini,gpt2_small] [--no-bf16]
Needs Debian's python3-torch and libopenblas0-pthread (without OpenBLAS,
torch uses the reference BLAS and any ratio is meaningless).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import parity  # noqa: E402  (the PyTorch versions of the examples)


def sgemm_gflops(n=1024, repeats=10, bursts=3):
    """The sgemm ceiling now: the fastest of `bursts` runs of `repeats`."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = 0.0
    for _ in range(bursts):
        start = time.perf_counter()
        for _ in range(repeats):
            torch.mm(a, b)
        best = max(best, 2 * n ** 3 * repeats /
                   (time.perf_counter() - start) / 1e9)
    return best


def rate(samples_per_s):
    """Samples/s in 9 columns, with decimals where it is small."""
    return f"{samples_per_s:9.2f}" if samples_per_s < 100 else f"{samples_per_s:9.0f}"


def random_tokens():
    """A batch of parity's GPT at its current shapes, without padding."""
    shape = (parity.B, parity.T)
    return {"tokens": torch.randint(0, parity.V, shape, dtype=torch.int32),
            "targets": torch.randint(0, parity.V, shape, dtype=torch.int32)}


def mlp_flops(batch):
    return 3 * 2 * batch * (784 * 256 + 256 * 10)


def gpt_flops(batch):
    V, T, C, H, L = parity.V, parity.T, parity.C, parity.H, parity.L
    per_layer = (2 * batch * T * C * 3 * C + 2 * 2 * batch * T * T * C
                 + 2 * batch * T * C * C + 2 * 2 * batch * T * C * 4 * C)
    return 3 * (L * per_layer + 2 * batch * T * C * V)


def torch_samples_per_s(make_params, make_batch, loss_fn, batch, steps,
                        adamw, clip, autocast=False):
    """PyTorch eager; with `autocast`, under torch.autocast("cpu", bf16)."""
    params = {k: v.clone().requires_grad_(True)
              for k, v in make_params().items()}
    data = make_batch()
    optimizer = torch.optim.AdamW(list(params.values()), **adamw)

    def step():
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_fn(params, data)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(list(params.values()), clip)
        optimizer.step()

    for _ in range(5):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return batch * steps / (time.perf_counter() - start)


def gacc_samples_per_s(gacc, model, steps, threads, flags=()):
    with tempfile.TemporaryDirectory() as work:
        metrics = os.path.join(work, "m.jsonl")
        subprocess.run([gacc, "run", model, f"--steps={steps + 5}",
                        f"--threads={threads}", f"--metrics={metrics}",
                        *flags], check=True, stdout=subprocess.DEVNULL)
        rates = [json.loads(line)["samples_per_s"] for line in open(metrics)]
    return statistics.median(rates[5:])


def main():
    root = os.path.join(os.path.dirname(__file__), "..")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(root, "build/bin/gacc"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--models", default="mlp,gpt_mini",
                   help="of mlp, gpt_mini, gpt2_small (minutes per row)")
    p.add_argument("--no-bf16", action="store_true", help="f32 rows only")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {a.threads} threads")
    print(f"{'model':10} {'prec':>5} {'batch':>5} {'gacc/s':>9} "
          f"{'torch/s':>9} {'ratio':>6} {'gacc MFU':>9} {'torch MFU':>9} "
          f"sgemm GFLOP/s before, between, after")
    examples = os.path.join(root, "examples")
    gpt_mini_shapes = (parity.V, parity.T, parity.C, parity.H, parity.L,
                       parity.B)
    models = [("mlp", os.path.join(examples, "mlp.mlir"), None, a.steps),
              ("gpt_mini", os.path.join(examples, "gpt_mini.mlir"),
               gpt_mini_shapes, a.steps)]
    work = tempfile.TemporaryDirectory()
    if "gpt2_small" in a.models.split(","):
        gpt2 = os.path.join(work.name, "gpt2.mlir")
        with open(gpt2, "w") as f:
            subprocess.run([sys.executable, os.path.join(examples, "make_gpt.py"),
                            "--vocab", "50257", "--context", "256", "--width",
                            "768", "--heads", "12", "--layers", "12", "--batch",
                            "4"], stdout=f, check=True)
        models.append(("gpt2_small", gpt2, (50257, 256, 768, 12, 12, 4),
                       max(3, a.steps // 10)))
    for name, file, shapes, steps in models:
        if name not in a.models.split(","):
            continue
        if shapes:  # parity's GPT at these shapes
            parity.V, parity.T, parity.C, parity.H, parity.L, parity.B = shapes
        _, make_params, make_batch, loss_fn, adamw, clip = \
            parity.MODELS["mlp" if name == "mlp" else "gpt"]
        if name == "gpt2_small":
            make_batch = random_tokens
        batch = next(iter(make_batch().values())).shape[0]
        flops = mlp_flops if name == "mlp" else gpt_flops
        for precision in ("f32",) if a.no_bf16 else ("f32", "bf16"):
            # Each side's utilization against the sgemm rate measured just
            # before and after its run: this VM's speed drifts by up to 1.7x
            # within minutes, which one rate at the start read as MFU.
            before = sgemm_gflops()
            ours = gacc_samples_per_s(a.gacc, file, steps, a.threads,
                                      ["--precision", precision])
            between = sgemm_gflops()
            theirs = torch_samples_per_s(make_params, make_batch, loss_fn,
                                         batch, steps, adamw, clip,
                                         autocast=precision == "bf16")
            after = sgemm_gflops()
            per_sample = flops(batch) / batch / 1e9
            print(f"{name:10} {precision:>5} {batch:5d} {rate(ours)} "
                  f"{rate(theirs)} {ours / theirs:6.2f} "
                  f"{ours * per_sample / ((before + between) / 2):9.1%} "
                  f"{theirs * per_sample / ((between + after) / 2):9.1%} "
                  f"{before:5.0f} {between:5.0f} {after:5.0f}", flush=True)

if __name__ == "__main__":
    main()
