#!/usr/bin/python3
"""ZeRO on the CPU: per-rank memory and step rate by stage, against PyTorch DDP.

GPT-mini (global batch 16, AdamW, clipping) on N = 2 ranks (mpirun; one
BLAS thread per rank: this machine has 2 cores) in ZeRO stages 0-3, in f32
and bf16. For each: the measured per-rank peak bytes (and its ratio to
stage 0), the elements communicated per step per rank (over Ψ), and the
job's samples/s against PyTorch DDP's (gloo, 2 processes of 1 thread,
gradients all-reduced after backward as DistributedDataParallel does) with
the same model and batch in the same run; and one gacc rank with 2 threads
as the single-process peer.

usage: zero_bench.py [--gacc build/bin/gacc] [--steps 40]
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
import torch.distributed as dist
import torch.multiprocessing as mp

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "e2e"))
import parity  # noqa: E402  (the PyTorch version of GPT-mini)

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]


def gacc_run(gacc, model, steps, ranks, flags):
    """Median samples/s, peak bytes and communicated elements per step."""
    with tempfile.TemporaryDirectory() as work:
        metrics = os.path.join(work, "m.jsonl")
        command = [gacc, "run", model, f"--steps={steps + 5}",
                   f"--metrics={metrics}", *flags]
        threads = "1" if ranks > 1 else "2"
        if ranks > 1:
            command = MPIRUN + ["-np", str(ranks), "-x",
                                f"OPENBLAS_NUM_THREADS={threads}"] + command
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS=threads))
        rows = [json.loads(line) for line in open(metrics)][5:]
    return (statistics.median(r["samples_per_s"] for r in rows),
            rows[-1]["peak_bytes"], rows[-1].get("communicated_elements", 0))


def ddp_worker(rank, ranks, steps, port, bf16, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=ranks)
    torch.manual_seed(0)
    params = {k: v.requires_grad_(True) for k, v in parity.gpt_params().items()}
    batch = parity.gpt_batch()
    share = parity.B // ranks
    local = {k: v[rank * share:(rank + 1) * share] for k, v in batch.items()}
    optimizer = torch.optim.AdamW(list(params.values()), lr=1e-3,
                                  weight_decay=0.1)

    def step():
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = parity.gpt_loss(params, local)
        loss.backward()
        for p in params.values():
            dist.all_reduce(p.grad)
            p.grad /= ranks
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        optimizer.step()

    for _ in range(5):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    if rank == 0:
        out.put(parity.B * steps / (time.perf_counter() - start))
    dist.destroy_process_group()


def ddp_samples_per_s(ranks, steps, bf16):
    context = mp.get_context("spawn")
    out = context.Queue()
    port = 29500 + os.getpid() % 1000
    mp.start_processes(ddp_worker, args=(ranks, steps, port, bf16, out),
                       nprocs=ranks, start_method="spawn")
    return out.get()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gacc", default=os.path.join(root, "build/bin/gacc"))
    p.add_argument("--steps", type=int, default=40)
    a = p.parse_args()
    model = os.path.join(root, "examples", "gpt_mini.mlir")
    ranks = 2
    print(f"torch {torch.__version__}; GPT-mini, global batch {parity.B}, "
          f"{ranks} ranks")
    print(f"{'precision':9} {'stage':>5} {'peak/rank':>11} {'vs st0':>7} "
          f"{'comm/Ψ':>7} {'gacc/s':>8} {'ddp/s':>8} {'vs ddp':>7} "
          f"{'1 rank/s':>9}")
    for precision in ("f32", "bf16"):
        flags = [f"--precision={precision}"]
        single, _, _ = gacc_run(a.gacc, model, a.steps, 1, flags)
        theirs = ddp_samples_per_s(ranks, a.steps, precision == "bf16")
        base = None
        psi = 0
        plan = subprocess.run([a.gacc, "plan", model, "--json"],
                              capture_output=True, text=True, check=True)
        psi = json.loads(plan.stdout)["parameter_elements"]
        for stage in range(4):
            rate, peak, comm = gacc_run(
                a.gacc, model, a.steps, ranks,
                flags + [f"--ranks={ranks}", f"--zero-stage={stage}"])
            base = base or peak
            print(f"{precision:9} {stage:5d} {peak:11d} {peak / base:7.2f} "
                  f"{comm / psi:7.3f} {rate:8.0f} {theirs:8.0f} "
                  f"{rate / theirs:7.2f} {single:9.0f}")


if __name__ == "__main__":
    main()
