"""Every CUDA kernel gacc emits for the examples, under every transform,
passes ptxas for sm_80 and sm_90.

    ptx_kernels.py GACC EXAMPLES PTXAS WORKDIR

For the MLP, GPT-mini and the CNN (convolution, pooling, batch norm), plain and with accumulation, remat, bf16, f16
(loss scaling) and ZeRO-3 on 2 ranks: `gacc compile --target cuda --emit
ptx` (one module holding every kernel of the step) through `ptxas
--gpu-name sm_80` and `sm_90`.
Prints one line per configuration and PTX OK, or MISMATCH lines.
"""
import os
import subprocess
import sys

gacc, examples, ptxas, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
failures = 0
for model in ("mlp.mlir", "gpt_mini.mlir", "cnn.mlir"):
    for flags in ([], ["--micro-batch=4"], ["--remat=sqrt"],
                  ["--precision=bf16"], ["--precision=f16"],
                  ["--ranks=2", "--zero-stage=3"]):
        ptx = subprocess.run([gacc, "compile", os.path.join(examples, model),
                              "--target", "cuda", "--emit", "ptx", *flags],
                             capture_output=True, text=True, check=True).stdout
        modules = ptx.split("// gacc kernel module ")[1:]
        bad = 0
        for i, text in enumerate(modules):
            path = os.path.join(work, "kernel.ptx")
            with open(path, "w") as f:
                f.write(text.split("\n", 1)[1])
            for arch in ("sm_80", "sm_90"):
                result = subprocess.run([ptxas, "--gpu-name", arch, path,
                                         "-o", os.devnull],
                                        capture_output=True, text=True)
                if result.returncode:
                    bad += 1
                    print(f"MISMATCH {model} {' '.join(flags)} module {i} "
                          f"{arch}: {result.stderr.strip()[:300]}")
        failures += bad
        kernels = ptx.count(".entry ")
        print(f"{model} {' '.join(flags) or '(plain)'}: {kernels} kernels in "
              f"{len(modules)} module(s), {bad} rejected")
        if not kernels:
            print(f"MISMATCH {model} {' '.join(flags)}: no kernels")
            failures += 1
if not failures:
    print("PTX OK")
