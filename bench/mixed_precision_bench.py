#!/usr/bin/python3
"""Mixed precision: speed against PyTorch autocast, and memory both ways.

1. Throughput, in one run: samples/s of a full step (forward, backward,
   AdamW) of examples/mlp.mlir (batch 64) and examples/gpt_mini.mlir (batch
   16) for gacc in f32, bf16 and f16 (`gacc run --precision`) and PyTorch
   eager in f32 and under torch.autocast("cpu", bfloat16) (this PyTorch has
   no f16 autocast on the CPU), with the ratios gacc/PyTorch at equal
   precision and bf16/f32 within each.
2. Memory, from `gacc plan --measure` (planned and measured peak): the seed
   notes' point both ways. A small model with a large batch (GPT-mini at
   batch 64, a 8x256 MLP at batch 4096) saves memory in 16 bits (2-byte
   activations); a wide model with a small batch (4x2048 MLP at batch 8)
   spends more (the 16-bit copies of the f32 master weights).

usage: bench/mixed_precision_bench.py [--gacc build/bin/gacc] [--threads 2]
                                      [--steps 40]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import parity  # noqa: E402  (the PyTorch versions of the examples)
from train_bench import gacc_samples_per_s, torch_samples_per_s  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")


def plan(gacc, model, flags):
    out = subprocess.run([gacc, "plan", model, "--json", "--measure"] + flags,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=40)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {a.threads} threads; samples/s")
    print(f"{'model':9} {'batch':>5} {'gacc f32':>9} {'gacc bf16':>9} "
          f"{'gacc f16':>9} {'torch f32':>9} {'torch bf16':>10} "
          f"{'f32 ratio':>9} {'bf16 ratio':>10} {'gacc bf16/f32':>13}")
    for name, file, batch in (("mlp", "mlp.mlir", 64),
                              ("gpt", "gpt_mini.mlir", 16)):
        model = os.path.join(ROOT, "examples", file)
        ours = {precision: gacc_samples_per_s(a.gacc, model, a.steps,
                                              a.threads,
                                              [f"--precision={precision}"])
                for precision in ("f32", "bf16", "f16")}
        _, make_params, make_batch, loss_fn, adamw, clip = parity.MODELS[name]
        theirs = {precision: torch_samples_per_s(
                      make_params, make_batch, loss_fn, batch, a.steps, adamw,
                      clip, autocast=precision == "bf16")
                  for precision in ("f32", "bf16")}
        print(f"{name:9} {batch:5d} {ours['f32']:9.0f} {ours['bf16']:9.0f} "
              f"{ours['f16']:9.0f} {theirs['f32']:9.0f} {theirs['bf16']:10.0f} "
              f"{ours['f32'] / theirs['f32']:9.2f} "
              f"{ours['bf16'] / theirs['bf16']:10.2f} "
              f"{ours['bf16'] / ours['f32']:13.2f}")

    print("\npeak memory of one step, MiB (planned / measured)")
    print(f"{'model':28} {'f32':>15} {'bf16':>15} {'f16':>15} "
          f"{'bf16/f32':>8} {'weight copies':>13}")
    with tempfile.TemporaryDirectory() as work:
        def generated(tag, flags):
            path = os.path.join(work, f"{tag}.mlir")
            with open(path, "w") as f:
                subprocess.run([sys.executable,
                                os.path.join(ROOT, "examples", "make_mlp.py")]
                               + flags, stdout=f, check=True)
            return path
        cases = (
            ("GPT-mini, batch 64", os.path.join(ROOT, "examples",
                                                "gpt_mini.mlir"),
             ["--batch=64"]),
            ("MLP 8x256, batch 4096", generated(
                "deep", ["--layers=8", "--width=256", "--batch=4096"]), []),
            ("MLP 4x2048, batch 8", generated(
                "wide", ["--layers=4", "--width=2048", "--batch=8"]), []),
        )
        for title, model, flags in cases:
            plans = {precision: plan(a.gacc, model,
                                     flags + [f"--precision={precision}"])
                     for precision in ("f32", "bf16", "f16")}
            cells = " ".join(
                f"{plans[p]['peak'] / 2**20:7.1f}/{plans[p]['measured_peak'] / 2**20:<7.1f}"
                for p in ("f32", "bf16", "f16"))
            print(f"{title:28} {cells} "
                  f"{plans['bf16']['peak'] / plans['f32']['peak']:8.2f} "
                  f"{plans['bf16']['weight_copies'] / 2**20:11.1f} MiB")


if __name__ == "__main__":
    main()
