#!/usr/bin/python3
"""The memory levers of the optimizer: 8-bit AdamW, Adafactor and LoRA
against AdamW.

For GPT-2-small shapes (vocab 50257, context 256, width 768, 12 heads,
batch 4; `--layers` to shrink it): full fine-tuning with AdamW, the same
with 8-bit AdamW (`--optimizer adamw8bit`) and with Adafactor
(`--optimizer adafactor`), and LoRA r=8, alpha=16 on the
attention projections (`--lora`). For each, from `gacc plan --json`: the
trainable parameters, gradient and optimizer-state bytes and the planned
peak; from `gacc run` (synthetic data): the measured peak and the median
samples/s after the first step; each also as a ratio to AdamW's.

usage: bench/optimizer_bench.py [--gacc build/bin/gacc] [--layers 12]
                                [--steps 6]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(__file__), "..")
CONFIGS = [
    ("AdamW", []),
    ("AdamW 8bit", ["--optimizer=adamw8bit"]),
    ("Adafactor", ["--optimizer=adafactor"]),
    ("LoRA r=8", [r"--lora=rank=8,alpha=16,targets=.*attn\.c_(attn|proj)\.weight"]),
]


def plan(gacc, model, flags):
    out = subprocess.run([gacc, "plan", model, "--json"] + flags, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def run(gacc, model, flags, steps, work):
    metrics = os.path.join(work, "metrics.jsonl")
    out = subprocess.run([gacc, "run", model, f"--steps={steps}",
                          f"--metrics={metrics}"] + flags, check=True,
                         capture_output=True, text=True)
    peak = re.search(r"peak ([0-9.]+) MiB \(measured\)",
                     out.stdout + out.stderr)
    rows = [json.loads(line) for line in open(metrics)][1:]
    return (float(peak.group(1)) * 2**20,
            statistics.median(r["samples_per_s"] for r in rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--steps", type=int, default=6)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "gpt2.mlir")
        with open(model, "w") as f:
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "examples", "make_gpt.py"),
                            "--vocab", "50257", "--context", "256", "--width",
                            "768", "--heads", "12", "--layers",
                            str(a.layers), "--batch", "4"], stdout=f,
                           check=True)
        print(f"GPT-2-small shapes, {a.layers} layers, batch 4, context 256")
        print(f"{'config':10} {'trainable':>10} {'grads MB':>9} "
              f"{'state MB':>9} {'plan MiB':>9} {'meas MiB':>9} "
              f"{'samples/s':>10} {'peak':>6} {'speed':>6}")
        base = None
        for name, flags in CONFIGS:
            planned = plan(a.gacc, model, flags)
            measured, speed = run(a.gacc, model, flags, a.steps, work)
            if base is None:
                base = (planned["peak"], speed)
            share = planned["trainable_elements"] / planned[
                "parameter_elements"]
            print(f"{name:10} {100 * share:9.2f}% "
                  f"{planned['gradients'] / 1e6:9.1f} "
                  f"{planned['optimizer_state'] / 1e6:9.1f} "
                  f"{planned['peak'] / 2**20:9.1f} {measured / 2**20:9.1f} "
                  f"{speed:10.3f} {planned['peak'] / base[0]:5.2f}x "
                  f"{speed / base[1]:5.2f}x")


if __name__ == "__main__":
    main()
