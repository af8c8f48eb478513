#!/usr/bin/python3
"""gacc tune against an exhaustive measured search.

For each model and budget (a fraction of the model's unconstrained planned
peak): `gacc tune` (timed, its choice measured by itself), then every
configuration of the same space (precision f32/bf16 × remat
none/blocks/sqrt/matmuls/budget × every micro-batch ceil(b/k)) planned
with `gacc plan --json` and, when its planned peak fits, measured with `gacc
run` (median samples/s of --steps after the first, and the measured peak).
Prints, per budget: the choice, its samples/s against the best of the
exhaustive search (both measured again in --rounds alternate runs: the best
of many short runs is biased upward), whether any measured peak exceeded
the budget, and the tuning time against the exhaustive search's.

usage: bench/tune_bench.py [--gacc build/bin/gacc] [--models mini,gpt2w4]
                           [--budgets 0.25,0.5,0.75] [--steps 4]
                           [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.join(os.path.dirname(__file__), "..")
PRECISIONS = ["f32", "bf16"]
REMATS = ["none", "blocks", "sqrt", "matmuls", "budget"]


def model_path(name, work):
    if name == "mini":
        return os.path.join(ROOT, "examples/gpt_mini.mlir")
    path = os.path.join(work, "gpt2w4.mlir")  # GPT-2-small width, 4 layers
    with open(path, "w") as out:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples",
                        "make_gpt.py"), "--vocab", "50257", "--context", "256",
                        "--width", "768", "--heads", "12", "--layers", "4",
                        "--batch", "4"], stdout=out, check=True)
    return path


def plan(gacc, model, flags):
    result = subprocess.run([gacc, "plan", model, "--json"] + flags,
                            capture_output=True, text=True)
    return json.loads(result.stdout) if result.returncode == 0 else None


def measure(gacc, model, flags, steps, work):
    metrics = os.path.join(work, "m.jsonl")
    subprocess.run([gacc, "run", model, "--steps", str(steps), "--metrics",
                    metrics] + flags, check=True, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in open(metrics)][1:]
    return (statistics.median(r["samples_per_s"] for r in rows),
            max(r["peak_bytes"] for r in rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--models", default="mini,gpt2w4")
    p.add_argument("--budgets", default="0.25,0.5,0.75")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for name in a.models.split(","):
            model = model_path(name, work)
            full = plan(a.gacc, model, [])
            rows = full["batch_size"]
            micro = sorted({-(-rows // k) for k in range(1, rows + 1)},
                           reverse=True)
            for fraction in map(float, a.budgets.split(",")):
                budget = int(full["peak"] * fraction)
                start = time.time()
                tuned = subprocess.run(
                    [a.gacc, "tune", model, "--memory-budget", str(budget),
                     "--json", "--measure-steps", str(a.steps - 1)],
                    capture_output=True, text=True)
                tune_seconds = time.time() - start
                if tuned.returncode:
                    print(f"{name} {fraction:.0%}: tune: "
                          f"{tuned.stderr.strip()}")
                    continue
                choice = json.loads(tuned.stdout)
                start = time.time()
                results, over = [], []
                for precision in PRECISIONS:
                    for remat in REMATS:
                        for m in micro:
                            flags = ["--precision", precision, "--remat",
                                     remat, "--micro-batch", str(m)]
                            if remat == "budget":
                                flags += ["--remat-budget", str(budget)]
                            planned = plan(a.gacc, model, flags)
                            if not planned or planned["peak"] > budget:
                                continue
                            rate, peak = measure(a.gacc, model, flags,
                                                 a.steps, work)
                            results.append((rate, " ".join(flags)))
                            if peak > budget:
                                over.append(" ".join(flags))
                exhaustive_seconds = time.time() - start
                best = max(results)
                # The best of many short runs is biased upward (the luckiest
                # run wins): measure the choice and the search's best again,
                # alternately, and compare medians; the same configuration
                # is a ratio of 1.
                config = os.path.join(work, "tuned.json")
                json.dump(choice, open(config, "w"))
                chosen_flags = ["--precision", choice["precision"], "--remat",
                                choice["remat"], "--micro-batch",
                                str(choice["micro_batch_size"])]
                if choice["remat"] == "budget":
                    chosen_flags += ["--remat-budget", str(budget)]
                chosen_rates, best_rates, chosen_peak = [], [], 0
                for _ in range(a.rounds):
                    rate, peak = measure(a.gacc, model, ["--config", config],
                                         a.steps, work)
                    chosen_rates.append(rate)
                    chosen_peak = max(chosen_peak, peak)
                    if " ".join(chosen_flags) != best[1]:
                        best_rates.append(measure(
                            a.gacc, model, best[1].split(), a.steps,
                            work)[0])
                chosen_rate = statistics.median(chosen_rates)
                ratio = (chosen_rate / statistics.median(best_rates)
                         if best_rates else 1.0)
                print(f"{name} budget {fraction:.0%} ({budget / 2**20:.1f} "
                      f"MiB): chose '{choice['options']}' "
                      f"{chosen_rate:.1f} samples/s (peak "
                      f"{chosen_peak / 2**20:.1f} MiB); best of "
                      f"{len(results)} measured: {best[0]:.1f} "
                      f"('{best[1]}'), ratio {ratio:.3f} (medians of "
                      f"{a.rounds} alternate runs); over budget: "
                      f"{over or 'none'}; tune {tune_seconds:.1f}"
                      f" s vs exhaustive {exhaustive_seconds:.1f} s "
                      f"({tune_seconds / exhaustive_seconds:.1%})",
                      flush=True)


if __name__ == "__main__":
    main()
