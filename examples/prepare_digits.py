#!/usr/bin/python3
"""Exports scikit-learn's digits (Debian's python3-sklearn) for gacc.

Writes OUT/train and OUT/test, each a directory of image.npy (float32
[N, 64], pixels scaled to [0, 1]) and label.npy (int32 [N]), named like the
inputs of examples/digits.mlir. The split is fixed (seed 0): 1437 training
and 360 test images.

usage: /usr/bin/python3 examples/prepare_digits.py OUT
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(labels))
    test, train = order[:360], order[360:]
    for split, index in (("train", train), ("test", test)):
        os.makedirs(os.path.join(out, split), exist_ok=True)
        np.save(os.path.join(out, split, "image.npy"), images[index])
        np.save(os.path.join(out, split, "label.npy"), labels[index])
        print(f"{split}: {len(index)} images -> {os.path.join(out, split)}")


if __name__ == "__main__":
    main()
