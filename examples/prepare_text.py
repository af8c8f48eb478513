#!/usr/bin/python3
"""Turns a plain text file into character-level training data for
examples/gpt_mini.mlir (vocabulary 96: newline and printable ASCII; other
characters become spaces).

Writes OUT/train and OUT/test, directories of tokens.npy and targets.npy
(int32 [N, 64]): windows of 64 characters and the same windows shifted by
one (the next character to predict), every 32 characters; the last tenth of
the text is the test split.

usage: /usr/bin/python3 examples/prepare_text.py TEXT OUT
  e.g. examples/prepare_text.py /usr/share/common-licenses/GPL-3 build/gpl
"""
import os
import sys

import numpy as np

CONTEXT, STRIDE = 64, 32


def encode(text):
    ids = [0 if c == "\n" else (ord(c) - 31 if 32 <= ord(c) < 127 else 1)
           for c in text]
    return np.array(ids, dtype=np.int32)


def windows(ids):
    starts = range(0, len(ids) - CONTEXT - 1, STRIDE)
    tokens = np.stack([ids[s:s + CONTEXT] for s in starts])
    targets = np.stack([ids[s + 1:s + CONTEXT + 1] for s in starts])
    return tokens, targets


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text, out = sys.argv[1:]
    ids = encode(open(text, encoding="utf-8", errors="replace").read())
    split = len(ids) * 9 // 10
    for name, part in (("train", ids[:split]), ("test", ids[split:])):
        tokens, targets = windows(part)
        os.makedirs(os.path.join(out, name), exist_ok=True)
        np.save(os.path.join(out, name, "tokens.npy"), tokens)
        np.save(os.path.join(out, name, "targets.npy"), targets)
        print(f"{name}: {len(tokens)} windows of {CONTEXT} characters")


if __name__ == "__main__":
    main()
