"""Fused attention's kernels, run on the CPU, train as the CPU target does.

    flash_attention.py GACC GACC_OPT EXAMPLES WORKDIR

The CUDA targets fuse attention (gacc-fuse-attention) into
gacc.attention, which gacc-cuda-flash-attention lowers to FlashAttention-2's
kernels: the forward with its online softmax, dQ, and dK with dV. `gacc run
--target cuda-emulated` runs those kernels on the CPU. For GPT models
(make_gpt.py) of two 64-query tiles (the loops over tiles, the causal
bound, the rescaling as the maximum grows), causal with a key-padding mask
in bf16 accumulated over two micro-batches and bidirectional in f16 (loss
scaling), and a bare attention of unit-normal Q, K and V at twice the
usual scale (peaked probabilities, where rounding the scores matters):
the losses of 3 steps match the CPU
target's in the same precision, and the first step's gradients are at least
as close (within 1.5x) to the f32 CPU step's as the CPU target's are. The
fused kernels keep the scores in f32, which autocast rounds to 16 bits on
the CPU, so they are usually closer. Each model is checked to have been
fused, so that the test cannot pass on the unfused path.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

gacc, gacc_opt, examples, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)

BARE = """module {
  gacc.param @q : tensor<2x2x128x32xf32> = #gacc.init<normal, scale = 1.0, seed = 1>
  gacc.param @k : tensor<2x2x128x32xf32> = #gacc.init<normal, scale = 1.0, seed = 2>
  gacc.param @v : tensor<2x2x128x32xf32> = #gacc.init<normal, scale = 1.0, seed = 3>
  gacc.input @w : tensor<2x2x128x32xf32> features
  func.func @attention() -> tensor<f32> {
    %q = gacc.load @q : tensor<2x2x128x32xf32>
    %k = gacc.load @k : tensor<2x2x128x32xf32>
    %v = gacc.load @v : tensor<2x2x128x32xf32>
    %w = gacc.load @w : tensor<2x2x128x32xf32>
    %scale = gacc.constant dense<0.35> : tensor<f32>
    %ninf = gacc.constant dense<0xFF800000> : tensor<f32>
    %mask = gacc.causal_mask : tensor<128x128xi1>
    %s = gacc.matmul %q, %k transpose_rhs : tensor<2x2x128x32xf32>, tensor<2x2x128x32xf32> -> tensor<2x2x128x128xf32>
    %t = gacc.mul %s, %scale : tensor<2x2x128x128xf32>, tensor<f32>
    %u = gacc.select %mask, %t, %ninf : tensor<128x128xi1>, tensor<2x2x128x128xf32>, tensor<f32>
    %p = gacc.softmax %u axis = 3 : tensor<2x2x128x128xf32>
    %o = gacc.matmul %p, %v : tensor<2x2x128x128xf32>, tensor<2x2x128x32xf32> -> tensor<2x2x128x32xf32>
    %l = gacc.mse_loss mean %o, %w : tensor<2x2x128x32xf32>
    return %l : tensor<f32>
  }
  gacc.train_step @train model @attention batch_size 2
      optimizer #gacc.sgd<lr = 1.0e-02>
}
"""


def gpt(name, *flags):
    path = os.path.join(work, name + ".mlir")
    text = subprocess.run(
        [sys.executable, os.path.join(examples, "make_gpt.py"), "--vocab=64",
         "--context=128", "--width=64", "--heads=2", "--layers=1",
         "--batch=2", *flags], check=True, capture_output=True,
        text=True).stdout
    with open(path, "w") as f:
        f.write(text)
    return path


def bare():
    path = os.path.join(work, "bare.mlir")
    with open(path, "w") as f:
        f.write(BARE)
    return path


def fused(model, precision):
    """How many gacc.attention the CUDA targets' pipeline makes."""
    out = subprocess.run(
        [gacc_opt, model, "--gacc-training-pipeline=target=cuda-emulated "
         f"precision={precision}"], check=True, capture_output=True,
        text=True).stdout
    return out.count("gacc.attention ")


def run(model, flags, target, tag):
    grads = os.path.join(work, f"{tag}.grads.safetensors")
    metrics = os.path.join(work, f"{tag}.jsonl")
    subprocess.run([gacc, "run", model, "--steps=3", f"--target={target}",
                    f"--dump-grads={grads}", f"--metrics={metrics}", *flags],
                   check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    with open(metrics) as f:
        losses = [float(line.split('"loss": ')[1].split(",")[0]) for line in f]
    return losses, tensorfiles.load(grads)


def difference(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


configurations = [
    ("causal-padded-accumulated", gpt("causal-padded", "--padding-mask"),
     "bf16", ["--micro-batch=1"]),
    ("bidirectional", gpt("bidirectional", "--bidirectional"), "f16", []),
    ("bare", bare(), "bf16", []),
]
failures = 0
for tag, model, precision, flags in configurations:
    count = fused(model, precision)
    print(f"{tag}: {count} fused")
    if count == 0:
        print(f"MISMATCH {tag}: nothing fused")
        failures += 1
        continue
    flags = [f"--precision={precision}", *flags]
    f32 = run(model, flags[1:], "cpu", tag + ".f32")
    cpu = run(model, flags, "cpu", tag + ".cpu")
    emulated = run(model, flags, "cuda-emulated", tag + ".emulated")
    loss = max(abs(a - b) / abs(b) for a, b in zip(emulated[0], cpu[0]))
    if loss > 2e-3:
        print(f"MISMATCH {tag} losses: {emulated[0]} vs {cpu[0]}")
        failures += 1
    for name, reference in f32[1].items():
        ours = difference(emulated[1][name], reference)
        theirs = difference(cpu[1][name], reference)
        if ours > 1.5 * theirs + 1e-4:
            print(f"MISMATCH {tag} {name}: {ours:.2e} from f32, the CPU's "
                  f"{precision} {theirs:.2e}")
            failures += 1
    worst = max(difference(emulated[1][n], r) for n, r in f32[1].items())
    print(f"{tag}: losses within {loss:.1e}, gradients within {worst:.1e} "
          "of f32")
if failures == 0:
    print("FLASH ATTENTION OK")
