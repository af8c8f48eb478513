"""Trainer.compile for the emulated CUDA target trains as for the CPU (the
same batch, 3 steps, losses within 1e-5); an unknown target is refused.

usage: target_bindings.py MODEL.mlir
"""
import sys

import gacc
import numpy as np

text = open(sys.argv[1]).read()
rng = np.random.default_rng(0)
batch = {"image": rng.standard_normal((64, 784), dtype=np.float32),
         "label": rng.integers(0, 10, 64).astype(np.int32)}
cpu = gacc.Trainer.compile(text)
emulated = gacc.Trainer.compile(text, target="cuda-emulated")
losses = [(cpu.step(batch)["loss"], emulated.step(batch)["loss"])
          for _ in range(3)]
print("close" if all(abs(a - b) <= 1e-5 * abs(a) for a, b in losses)
      else losses)
try:
    gacc.Trainer.compile(text, target="tpu")
except RuntimeError as error:
    print("refused:", error)
