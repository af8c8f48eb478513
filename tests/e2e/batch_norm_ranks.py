"""Batch norm on several ranks (mpirun).

Each of 2 ranks takes batch-norm statistics over its own examples, as
DistributedDataParallel without SyncBatchNorm does, and every rank keeps
rank 0's running statistics after the step (DDP broadcasts buffers from
rank 0). So the losses and the trainable parameters equal one rank's with
micro-batches of a rank's examples (statistics per micro-batch, gradients
summed), within 1e-6 relative; the running statistics are the same on
both ranks (their files of --save-sharded, whole) and in the checkpoint,
and differ from the micro-batches' (two updates per step, not one).
Prints one line per comparison and BATCH NORM RANKS OK at the end.

usage: batch_norm_ranks.py GACC MODEL WORK_DIR
"""
import glob
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"]
os.environ["OPENBLAS_NUM_THREADS"] = "1"


def main():
    gacc, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    ok = True

    def report(good, what):
        nonlocal ok
        ok &= good
        print(f"{'ok' if good else 'MISMATCH'} {what}")

    def run(tag, flags, prefix=()):
        metrics = os.path.join(work, tag + ".jsonl")
        subprocess.run(list(prefix) + [gacc, "run", model, "--steps=3",
                                       f"--metrics={metrics}"] + flags,
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        return np.array([json.loads(line)["loss"] for line in open(metrics)])

    whole = os.path.join(work, "ranks.safetensors")
    shards = os.path.join(work, "shards")
    ranks = run("ranks", ["--ranks=2", "--zero-stage=3", f"--save={whole}"],
                MPIRUN)
    run("sharded", ["--ranks=2", "--zero-stage=3",
                    f"--save-sharded={shards}"], MPIRUN)
    single = os.path.join(work, "micro.safetensors")
    micro = run("micro", ["--micro-batch=4", f"--save={single}"])
    report(np.allclose(ranks, micro, rtol=1e-6, atol=0),
           "2 ranks: the losses of one rank with micro-batches of 4")
    a, b = tensorfiles.load(whole), tensorfiles.load(single)
    for key in ("w1", "w2", "bn.weight", "bn.bias"):
        error = np.linalg.norm(a[key] - b[key]) / np.linalg.norm(b[key])
        report(error <= 1e-6, f"2 ranks: {key} as with micro-batches "
               f"(relative error {error:.1e})")
    files = [tensorfiles.load(path) for path in
             sorted(glob.glob(os.path.join(shards, "rank-*.safetensors")))]
    for key in ("bn.running_mean", "bn.running_var"):
        same = len(files) == 2 and all(
            f[key].shape == a[key].shape and np.array_equal(f[key], a[key])
            for f in files)
        report(same, f"2 ranks: {key} whole and the same on both ranks")
        report(not np.array_equal(a[key], b[key]),
               f"2 ranks: {key} (one update per step) differs from the "
               "micro-batches' (two)")
    print("BATCH NORM RANKS OK" if ok else "BATCH NORM RANKS FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
