"""Gradient accumulation equals the full batch.

For a model, its data and initial parameters: runs `gacc run` with the whole
batch (K = 1) and with K micro-batches for every K given (an uneven split as
--micro-batch), and compares each with K = 1: the loss of every step and the
first step's gradients within 1e-6 relative (over all gradients together:
||g_K - g_1|| <= 1e-6 ||g_1||), and the parameters after the last step
within 1e-5, over the elements whose first gradient exceeds 1e-6 (100 times
AdamW's eps: below it Adam turns rounding-level differences of the gradient
into updates of up to lr; tests/e2e/parity.py explains). The summation order
of micro-batches differs from the full batch's, so gradients differ at the
rounding level (~5e-7 in f32) and Adam's division by sqrt(v) amplifies that
about twofold per step. The evaluation after the last step (`--eval-data`,
a micro-batch at a time as the step runs them) gives the same loss within
1e-5 relative, the parameters' tolerance (measured: 1.2e-7).
Prints one line per comparison and ACCUMULATION OK at the end.

usage: accumulation.py GACC MODEL DATA INIT WORK STEPS SPLIT...
  SPLIT: K (--accumulation-steps K) or mM (--micro-batch M)
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

TOLERANCE = 1e-6
PARAMETER_TOLERANCE = 1e-5


def run(gacc, model, data, init, work, steps, split):
    tag = split or "full"
    flag = []
    if split:
        flag = ([f"--micro-batch={split[1:]}"] if split.startswith("m")
                else [f"--accumulation-steps={split}"])
    paths = {k: os.path.join(work, f"{tag}.{k}")
             for k in ("grads", "params", "metrics")}
    subprocess.run([gacc, "run", model, f"--steps={steps}", f"--data={data}",
                    f"--init={init}", f"--dump-grads={paths['grads']}",
                    f"--save={paths['params']}",
                    f"--metrics={paths['metrics']}", f"--eval-data={data}"]
                   + flag, check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in open(paths["metrics"])]
    losses = np.array([r["loss"] for r in records if "loss" in r])
    evaluated = [r["eval_loss"] for r in records if "eval_loss" in r]
    grads = tensorfiles.load(paths["grads"])
    checkpoint = tensorfiles.load(paths["params"])
    return losses, grads, {k: checkpoint[k] for k in grads}, evaluated[-1]


def relative(ours, reference, mask=None):
    keys = sorted(reference)
    a = np.concatenate([np.ravel(ours[k]) for k in keys])
    b = np.concatenate([np.ravel(reference[k]) for k in keys])
    if mask is not None:
        keep = np.concatenate([np.ravel(mask[k]) for k in keys])
        a, b = a[keep], b[keep]
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    gacc, model, data, init, work, steps = sys.argv[1:7]
    os.makedirs(work, exist_ok=True)
    base = run(gacc, model, data, init, work, steps, None)
    conditioned = {k: np.abs(g) > 1e-6 for k, g in base[1].items()}
    ok = True
    for split in sys.argv[7:]:
        losses, grads, params, evaluated = run(gacc, model, data, init, work,
                                               steps, split)
        for what, error, tolerance in (
                ("losses", float(np.max(np.abs(losses - base[0])
                                        / np.abs(base[0]))), TOLERANCE),
                ("gradients", relative(grads, base[1]), TOLERANCE),
                (f"parameters after {steps} steps",
                 relative(params, base[2], conditioned), PARAMETER_TOLERANCE),
                ("evaluation loss",
                 abs(evaluated - base[3]) / abs(base[3]),
                 PARAMETER_TOLERANCE)):
            good = error <= tolerance
            ok &= good
            print(f"{'ok' if good else 'MISMATCH'} split {split}: {what} "
                  f"relative error {error:.2e}")
    print("ACCUMULATION OK" if ok else "ACCUMULATION FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
