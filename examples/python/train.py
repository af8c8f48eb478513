#!/usr/bin/python3
"""Train the MLP from Python: compile it in-process (JIT) or open an
artifact from `gacc compile`, step with numpy batches of a synthetic task
(a random label whose pixel, of the first 10, is raised by 1), read the
parameters as numpy arrays. Exits non-zero unless the loss falls.

usage: PYTHONPATH=build/python examples/python/train.py MODEL.mlir|MODEL.gacc [STEPS]
"""
import sys

import numpy as np

import gacc


def main():
    path = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    if path.endswith(".gacc"):
        trainer = gacc.Trainer.open(path)
    else:
        trainer = gacc.Trainer.compile(open(path).read(), name=path)
    shapes = {name: shape for name, _, shape in trainer.inputs}
    batch, width = shapes["image"]
    rng = np.random.default_rng(7)
    losses = []
    for step in range(steps):
        label = rng.integers(0, 10, size=batch).astype(np.int32)
        image = rng.random((batch, width), dtype=np.float32)
        image[np.arange(batch), label] += 1.0
        losses.append(trainer.step({"image": image, "label": label})["loss"])
    weights = trainer.parameters()
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    print(f"{trainer.step_count} steps: mean loss {first:.4f} -> {last:.4f}; "
          f"fc1.weight {weights['fc1.weight'].shape} {weights['fc1.weight'].dtype}")
    try:
        trainer.step({"image": image.astype(np.float64)})
    except ValueError as error:
        print(f"refused: {error}")
    sys.exit(0 if last < first else 1)


if __name__ == "__main__":
    main()
