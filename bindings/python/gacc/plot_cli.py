"""`gacc plot RUN.jsonl [RUN.jsonl ...] -o loss.png`: draw `gacc run --metrics`
files as a PNG: the training loss against the step, and the evaluation loss
where the run evaluated (--eval-every), one colour per run.

--metric lr|grad_norm|samples_per_s draws another per-step metric instead.
Needs matplotlib (Debian's python3-matplotlib).
"""
import argparse
import json
import os
import sys

STEP_METRICS = ["loss", "lr", "grad_norm", "samples_per_s"]


def read_run(path):
    """The per-step and the evaluation records of a metrics file."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as error:
        sys.exit(f"gacc plot: error: {path}: {error.strerror}")
    lines = text.splitlines()
    steps, evals = [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            if number == len(lines) and not text.endswith("\n") and number > 1:
                break  # a running (or killed) run's line, cut short
            sys.exit(f"gacc plot: error: {path}:{number}: not JSON: {error}")
        if not isinstance(record, dict) or "step" not in record:
            sys.exit(f"gacc plot: error: {path}:{number}: not a gacc run "
                     "metrics record (no 'step')")
        (evals if "eval_loss" in record else steps).append(record)
    if not steps and not evals:
        sys.exit(f"gacc plot: error: {path}: no metrics")
    return steps, evals


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gacc plot",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN.jsonl")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.png")
    parser.add_argument("--metric", default="loss", choices=STEP_METRICS)
    args = parser.parse_args(argv)
    runs = [(path, *read_run(path)) for path in args.runs]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("gacc plot: error: needs matplotlib "
                 "(apt-get install python3-matplotlib)")

    figure, axes = plt.subplots(figsize=(8, 5))
    for index, (path, steps, evals) in enumerate(runs):
        color = f"C{index}"
        name = os.path.basename(path)
        drawn = [r for r in steps if r.get(args.metric) is not None]
        if drawn:
            axes.plot([r["step"] for r in drawn],
                      [r[args.metric] for r in drawn], color=color,
                      label=name if args.metric != "loss" else f"{name} train")
        if args.metric == "loss" and evals:
            axes.plot([r["step"] for r in evals],
                      [r["eval_loss"] for r in evals], color=color,
                      linestyle="--", marker="o", label=f"{name} eval")
    axes.set_xlabel("step")
    axes.set_ylabel(args.metric)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    try:
        figure.savefig(args.output, dpi=100)
    except OSError as error:
        sys.exit(f"gacc plot: error: {args.output}: {error.strerror}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
