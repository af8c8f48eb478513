#!/usr/bin/python3
"""Turns text files into byte-level token files for examples/gpt_bytes.mlir,
as nanoGPT's prepare.py scripts do: OUT/train.bin and OUT/val.bin hold the
bytes of the texts, one after another (vocabulary 256), as uint16; the last
tenth is the validation split.

usage: /usr/bin/python3 examples/prepare_text.py TEXT... OUT
  e.g. examples/prepare_text.py /usr/share/common-licenses/* build/licenses
then:  gacc run examples/gpt_bytes.mlir --tokens build/licenses/train.bin \\
           --eval-tokens build/licenses/val.bin --epochs 3 --eval-every 100
"""
import os
import sys

import numpy as np


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    *texts, out = sys.argv[1:]
    data = b""
    for text in texts:
        try:
            data += open(text, "rb").read()
        except OSError as error:
            sys.exit(f"prepare_text.py: {text}: {error.strerror}")
    ids = np.frombuffer(data, dtype=np.uint8)
    split = len(ids) * 9 // 10
    os.makedirs(out, exist_ok=True)
    for name, part in (("train", ids[:split]), ("val", ids[split:])):
        path = os.path.join(out, name + ".bin")
        part.astype(np.uint16).tofile(path)
        print(f"{path}: {len(part)} tokens")


if __name__ == "__main__":
    main()
