"""Trainer.compile's keywords are the `gacc` flags: a trainer compiled with
micro_batch, remat and precision keywords trains exactly as one compiled
from the model with those attributes written in, and not as the plain
model; f16 brings loss scaling. batch, lr and byte sizes reach the step;
a bad value raises the located error the flag gets.

usage: training_options.py MODEL.mlir
"""
import re
import sys

import gacc
import numpy as np

text = open(sys.argv[1]).read()
written = re.sub(r"batch_size 64", "batch_size 64 micro_batch_size 16", text)
written = re.sub(r"weight_decay = 0.0>",
                 "weight_decay = 0.0> precision f16 remat #gacc.remat<sqrt>",
                 written)


def losses(trainer, steps=3, batch=64):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        result = trainer.step({
            "image": rng.standard_normal((batch, 784), dtype=np.float32),
            "label": rng.integers(0, 10, batch).astype(np.int32)})
        out.append(result["loss"])
    return out, result


keywords = gacc.Trainer.compile(text, name="mlp.mlir", micro_batch=16,
                                remat="sqrt", precision="f16")
attributes = gacc.Trainer.compile(written, name="mlp.mlir")
plain = gacc.Trainer.compile(text, name="mlp.mlir")
(configured, last), (expected, _), (unchanged, _) = (
    losses(keywords), losses(attributes), losses(plain))
print("as attributes" if configured == expected else (configured, expected))
print("differs from the model" if configured != unchanged else unchanged)
print("loss scale", last["loss_scale"])

# batch rebuilds the model; lr is the base learning rate; a memory budget
# is bytes or a string.
small = gacc.Trainer.compile(text, batch=16, lr=0.5, memory_budget="64MiB",
                             seed=3)
print("inputs", small.inputs)
print("lr", losses(small, 1, 16)[1]["lr"])
try:
    gacc.Trainer.compile(text, name="mlp.mlir", remat="often")
except RuntimeError as error:
    print("refused:", error)
try:
    gacc.Trainer.compile(text, microbatch=16)
except TypeError as error:
    print("refused:", error)
