#!/usr/bin/python3
"""Memory saved against time spent, per rematerialization policy.

For GPT-mini (batch 64) and a 16-layer MLP (batch 1024), every policy:
the planned peak of a step and the activations its backward keeps (`gacc
plan --json`), the estimated recompute time against the forward's (gacc-remat's cost model), and
the median samples/s of `gacc run` (synthetic data) relative to `none`.
`budget` runs at `sqrt`'s planned peak, so the two compare at equal memory.

usage: bench/remat_bench.py [--gacc build/bin/gacc] [--steps 30]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(__file__), "..")


def generate(script, flags, path):
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", script)]
                       + flags, stdout=f, check=True)
    return path


def plan(gacc, model, flags):
    out = subprocess.run([gacc, "plan", model, "--json"] + flags, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def rate(gacc, model, flags, steps, work):
    metrics = os.path.join(work, "metrics.jsonl")
    subprocess.run([gacc, "run", model, f"--steps={steps}",
                    f"--metrics={metrics}"] + flags, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [json.loads(line) for line in open(metrics)][5:]
    return statistics.median(r["samples_per_s"] for r in rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--steps", type=int, default=30)
    a = p.parse_args()
    print(f"{'model':12} {'policy':8} {'peak MiB':>9} {'kept MiB':>9} "
          f"{'recompute':>9} {'samples/s':>10} {'time':>7}")
    with tempfile.TemporaryDirectory() as work:
        models = [("GPT-mini", generate("make_gpt.py", ["--batch", "64"],
                                        os.path.join(work, "gpt.mlir"))),
                  ("MLP 16x256", generate("make_mlp.py",
                                          ["--layers", "16", "--batch", "1024"],
                                          os.path.join(work, "mlp.mlir")))]
        for name, model in models:
            base = None
            sqrt_peak = plan(a.gacc, model, ["--remat=sqrt"])["peak"]
            for policy in ("none", "blocks", "sqrt", "matmuls", "budget"):
                flags = [f"--remat={policy}"]
                if policy == "budget":
                    flags.append(f"--remat-budget={sqrt_peak}")
                pl = plan(a.gacc, model, flags)
                r = rate(a.gacc, model, flags, a.steps, work)
                base = base or r
                print(f"{name:12} {policy:8} {pl['peak'] / 2**20:9.1f} "
                      f"{pl['activations'] / 2**20:9.1f} "
                      f"{pl['recompute_cost'] / pl['forward_cost']:9.2f} "
                      f"{r:10.0f} {base / r:6.3f}x")


if __name__ == "__main__":
    main()
