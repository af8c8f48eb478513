#!/usr/bin/python3
"""Data preloading: training from a token file on disk against in-memory
synthetic batches, and the memory the data holds.

GPT-mini (examples/gpt_mini.mlir, batch 16, context 64) trains `--steps`
steps three ways, interleaved `--repeats` times: on synthetic batches made in
memory, and from a `--megabytes` token file (random ids, uint16) read
through mmap with the default prefetch of 4 batches, in shuffled epochs and
with nanoGPT's random windows. Prints each run's median samples/s (from
--metrics, after the first step) and its ratio to the synthetic run's, the
time steps waited for data, and the process's resident memory (VmRSS from
/proc/PID/status every 0.25 s once training runs, median) less the
synthetic run's: the memory the data holds, against the bytes of one batch.
A first run fills the compile cache, so that no run compiles.

usage: bench/data_bench.py [--gacc build/bin/gacc] [--steps 300]
                           [--megabytes 200] [--repeats 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.join(os.path.dirname(__file__), "..")
BATCH, CONTEXT, VOCAB = 16, 64, 96


def rss_kib(pid):
    """VmRSS of process `pid`, or None once it is gone."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def train(gacc, model, flags, steps, work, tag):
    metrics = os.path.join(work, tag + ".jsonl")
    process = subprocess.Popen(
        [gacc, "run", model, "--steps", str(steps), "--metrics", metrics] +
        flags, stdout=subprocess.DEVNULL)
    samples = []
    started = time.time()
    while process.poll() is None:
        rss = rss_kib(process.pid)
        if rss and time.time() - started > 1.0:  # past loading and opening
            samples.append(rss)
        time.sleep(0.25)
    if process.returncode:
        raise SystemExit(f"gacc run {tag} failed")
    rows = [json.loads(line) for line in open(metrics)]
    rows = [r for r in rows if "loss" in r][1:]
    return (statistics.median(r["samples_per_s"] for r in rows),
            sum(r["data_s"] for r in rows),
            statistics.median(samples) if samples else float("nan"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--megabytes", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    model = os.path.join(ROOT, "examples/gpt_mini.mlir")
    with tempfile.TemporaryDirectory() as work:
        tokens = os.path.join(work, "train.bin")
        import numpy as np
        rng = np.random.default_rng(0)
        count = a.megabytes * 2**20 // 2
        with open(tokens, "wb") as out:
            for start in range(0, count, 2**24):
                n = min(2**24, count - start)
                rng.integers(0, VOCAB, n, dtype=np.uint16).tofile(out)
        configs = [("synthetic, in memory", []),
                   ("token file, epochs", ["--tokens", tokens]),
                   ("token file, random windows",
                    ["--tokens", tokens, "--token-sampling", "random"])]
        results = {name: [] for name, _ in configs}
        train(a.gacc, model, [], 2, work, "warm-up")
        for repeat in range(a.repeats):
            for index, (name, flags) in enumerate(configs):
                results[name].append(train(a.gacc, model, flags, a.steps, work,
                                           f"run{repeat}-{index}"))
    batch_kib = BATCH * CONTEXT * 4 * 2 / 1024  # i32 tokens and targets
    base = statistics.median(r[0] for r in results[configs[0][0]])
    base_rss = statistics.median(r[2] for r in results[configs[0][0]])
    print(f"GPT-mini, {a.steps} steps, token file {a.megabytes} MB, "
          f"median of {a.repeats} interleaved runs; one batch = "
          f"{batch_kib:.0f} KiB")
    print(f"{'data':28} {'samples/s':>10} {'ratio':>6} {'data wait s':>11} "
          f"{'RSS KiB':>9} {'data KiB':>9} {'batches':>8}")
    for name, _ in configs:
        rows = results[name]
        rate = statistics.median(r[0] for r in rows)
        wait = statistics.median(r[1] for r in rows)
        rss = statistics.median(r[2] for r in rows)
        print(f"{name:28} {rate:10.1f} {rate / base:6.3f} {wait:11.3f} "
              f"{rss:9.0f} {rss - base_rss:9.0f} "
              f"{(rss - base_rss) / batch_kib:8.1f}")

if __name__ == "__main__":
    main()
