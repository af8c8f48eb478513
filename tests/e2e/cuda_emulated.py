"""The CUDA target's kernels, run on the CPU, train as the CPU target does.

    cuda_emulated.py GACC EXAMPLES WORKDIR

`gacc run --target cuda-emulated` runs the very kernel IR `gacc compile
--target cuda` turns into PTX (loops collapsed, tiled by 256, mapped to
blocks and threads; thread and block ids as loop indices, barriers
splitting the thread loops) instead of the CPU's loops and BLAS. For the
MLP and GPT-mini, plain and with accumulation, remat, bf16, f16 (loss
scaling), 8-bit AdamW (the MLP) and ZeRO-3 on 2 ranks, and the CNN
(convolution, pooling, batch
norm) plain and in bf16: the losses of 3 steps and the first
step's gradients match the CPU target's (only the order of additions
differs: block reductions add as a tree). In bf16 and f16 the order moves
roundings, and the tree is the more accurate one, so there the gradients
must be at least as close (within 1.5x) to f32's as the CPU target's are.
Parameters and AdamW state after 3 steps are compared in absolute terms,
within 6 lr: AdamW turns gradients near zero that differ in their last
bits into updates of about lr, of either sign, every step (the attention's
key bias has an exactly-zero gradient).
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

gacc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"]


def run(model, flags, target, tag):
    grads = os.path.join(work, f"{tag}.grads.safetensors")
    params = os.path.join(work, f"{tag}.params.safetensors")
    metrics = os.path.join(work, f"{tag}.jsonl")
    command = [gacc, "run", model, "--steps=3", f"--target={target}",
               f"--dump-grads={grads}", f"--save={params}",
               f"--metrics={metrics}", *flags]
    if "--ranks=2" in flags:
        command = MPIRUN + command
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    with open(metrics) as f:
        losses = [float(line.split('"loss": ')[1].split(",")[0]) for line in f]
    return losses, tensorfiles.load(grads), tensorfiles.load(params)


def difference(a, b, relative):
    """The largest difference, relative to the tensor's largest value."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    scale = max(np.abs(b).max(), 1e-30) if relative else 1.0
    return float(np.abs(a - b).max() / scale)


failures = 0
f32_gradients = {}
f32_parameters = {}
configurations = [
    ("mlp.mlir", []), ("mlp.mlir", ["--micro-batch=16"]),
    ("mlp.mlir", ["--remat=sqrt"]), ("mlp.mlir", ["--precision=bf16"]),
    ("mlp.mlir", ["--precision=f16"]),
    ("mlp.mlir", ["--optimizer=adamw8bit"]),
    ("gpt_mini.mlir", []), ("gpt_mini.mlir", ["--micro-batch=4"]),
    ("gpt_mini.mlir", ["--precision=bf16"]),
    ("cnn.mlir", []), ("cnn.mlir", ["--precision=bf16"]),
]
if shutil.which("mpirun"):
    configurations.append(("mlp.mlir", ["--ranks=2", "--zero-stage=3"]))
for name, flags in configurations:
    model = os.path.join(examples, name)
    tag = name.split(".")[0] + "".join(f.replace("=", "-") for f in flags)
    cpu = run(model, flags, "cpu", tag + ".cpu")
    emulated = run(model, flags, "cuda-emulated", tag + ".emulated")
    if not flags:
        f32_gradients[name] = cpu[1]
        f32_parameters[name] = cpu[2]
    # (losses, gradients relative to their largest, parameters absolute):
    # lr is 1e-3, 3 steps.
    tolerances = (1e-5, 1e-5, 6e-3)
    reference = cpu[1]
    if any("precision" in f for f in flags):
        # Both against f32's gradients: the CPU's error, with room.
        # Parameters: 6e-3, or the CPU's own distance from f32 with room
        # (the CNN's SGD takes larger steps than the others' AdamW).
        reference = f32_gradients[name]
        f32 = f32_parameters[name]
        tolerances = (1e-3, 1.5 * max(difference(cpu[1][k], reference[k], True)
                                      for k in reference),
                      max(6e-3, 1.5 * max(difference(cpu[2][k], f32[k], False)
                                          for k in f32)))
    loss = max(abs(a - b) / abs(b) for a, b in zip(emulated[0], cpu[0]))
    grads = max(difference(emulated[1][k], reference[k], True)
                for k in reference)
    params = max(difference(emulated[2][k], cpu[2][k], False) for k in cpu[2]
                 if cpu[2][k].dtype != np.uint8)
    # 8-bit optimizer state: codes of moments that round apart by the order
    # of additions may be neighbours; at most 1% of them.
    codes = max([float(np.mean(emulated[2][k] != cpu[2][k])) for k in cpu[2]
                 if cpu[2][k].dtype == np.uint8], default=0.0)
    print(f"{name} {' '.join(flags) or '(plain)'}: losses {loss:.1e}, "
          f"gradients {grads:.1e}, parameters {params:.1e}"
          + (f", 8-bit codes differing {100 * codes:.2f}%" if codes else ""))
    if len(emulated[0]) != 3 or codes > 0.01 or any(
            x > t for x, t in zip((loss, grads, params), tolerances)):
        print(f"MISMATCH {name} {' '.join(flags)}: over "
              f"{', '.join(f'{t:.1e}' for t in tolerances)}")
        failures += 1
if not failures:
    print("EMULATED OK")
