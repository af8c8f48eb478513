#!/usr/bin/python3
"""Cost of gradient accumulation at equal effective batch.

For each model and K: the median samples/s of `gacc run --accumulation-steps
K` (synthetic data) relative to K = 1 at the same effective batch, and the
peak bytes of the step's temporaries the runtime measured (activations and
everything else the compiled step allocates; parameters, gradients and
optimizer state are the fixed state on top).

usage: bench/accumulation_bench.py [--gacc build/bin/gacc] [--steps 40]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(__file__), "..")


def models(work):
    mlp = open(os.path.join(ROOT, "examples/mlp.mlir")).read()
    path = os.path.join(work, "mlp_b512.mlir")
    open(path, "w").write(mlp.replace("tensor<64x", "tensor<512x")
                          .replace("tensor<64xi32>", "tensor<512xi32>")
                          .replace("batch_size 64", "batch_size 512"))
    yield "MLP 784-256-10", path, 512, (1, 2, 4, 8)
    gpt = os.path.join(work, "gpt_b64.mlir")
    with open(gpt, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples/make_gpt.py"),
                        "--batch", "64"], stdout=f, check=True)
    yield "GPT-mini", gpt, 64, (1, 2, 4, 8)


def measure(gacc, model, k, steps, work):
    metrics = os.path.join(work, f"m{k}.jsonl")
    subprocess.run([gacc, "run", model, f"--steps={steps}",
                    f"--accumulation-steps={k}", f"--metrics={metrics}"],
                   check=True, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in open(metrics)][5:]
    return (statistics.median(r["samples_per_s"] for r in rows),
            max(r["peak_bytes"] for r in rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--steps", type=int, default=40)
    a = p.parse_args()
    print(f"{'model':16} {'batch':>5} {'K':>2} {'micro':>5} {'samples/s':>10} "
          f"{'time vs K=1':>11} {'peak memory':>13}")
    with tempfile.TemporaryDirectory() as work:
        for name, path, batch, ks in models(work):
            base = None
            for k in ks:
                rate, peak = measure(a.gacc, path, k, a.steps, work)
                base = base or rate
                print(f"{name:16} {batch:5d} {k:2d} {-(-batch // k):5d} "
                      f"{rate:10.0f} {base / rate:10.3f}x "
                      f"{peak / 2**20:9.1f} MiB")


if __name__ == "__main__":
    main()
