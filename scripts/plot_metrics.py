#!/usr/bin/python3
"""Plots one or more `gacc run --metrics` files (loss against step) to PNG.

usage: /usr/bin/python3 scripts/plot_metrics.py OUT.png RUN.jsonl [RUN.jsonl ...]
       [--metric loss|lr|grad_norm|samples_per_s]
Each file is one line in the plot, labelled with its file name. Needs
Debian's python3-matplotlib.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output")
    p.add_argument("runs", nargs="+")
    p.add_argument("--metric", default="loss",
                   choices=["loss", "lr", "grad_norm", "samples_per_s"])
    a = p.parse_args()
    fig, ax = plt.subplots(figsize=(8, 5))
    for run in a.runs:
        rows = [json.loads(line) for line in open(run) if line.strip()]
        if not rows:
            raise SystemExit(f"{run}: no metrics")
        ax.plot([r["step"] for r in rows], [r[a.metric] for r in rows],
                label=os.path.basename(run))
    ax.set_xlabel("step")
    ax.set_ylabel(a.metric)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.output, dpi=100)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
