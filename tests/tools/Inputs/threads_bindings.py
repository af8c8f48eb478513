"""gacc.set_num_threads: the MLP trained on 1 and on 3 threads gives the
same losses, bit for bit; a count below 1 is refused."""
import sys

import numpy as np

import gacc

mlir = open(sys.argv[1]).read()


def losses(threads):
    gacc.set_num_threads(threads)
    assert gacc.get_num_threads() == threads
    trainer = gacc.Trainer.compile(mlir, name="mlp.mlir")
    rng = np.random.default_rng(0)
    out = []
    for _ in range(5):
        batch = {"image": rng.standard_normal((64, 784), dtype=np.float32),
                 "label": rng.integers(0, 10, 64).astype(np.int32)}
        out.append(trainer.step(batch)["loss"])
    return out


one, three = losses(1), losses(3)
print("same" if one == three else f"differ: {one} {three}")
try:
    gacc.set_num_threads(0)
except ValueError as error:
    print(f"refused: {error}")
