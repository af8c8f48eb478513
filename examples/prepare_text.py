#!/usr/bin/python3
"""Turns a text file into byte-level token files for examples/gpt_bytes.mlir,
as nanoGPT's prepare.py scripts do: OUT/train.bin and OUT/val.bin hold the
text's bytes (vocabulary 256) as uint16, the last tenth of the text being
the validation split.

usage: /usr/bin/python3 examples/prepare_text.py TEXT OUT
  e.g. examples/prepare_text.py /usr/share/common-licenses/GPL-3 build/gpl
then:  gacc run examples/gpt_bytes.mlir --tokens build/gpl/train.bin \\
           --eval-tokens build/gpl/val.bin --epochs 10 --eval-every 50
"""
import os
import sys

import numpy as np


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text, out = sys.argv[1:]
    try:
        ids = np.frombuffer(open(text, "rb").read(), dtype=np.uint8)
    except OSError as error:
        sys.exit(f"prepare_text.py: {text}: {error.strerror}")
    split = len(ids) * 9 // 10
    os.makedirs(out, exist_ok=True)
    for name, part in (("train", ids[:split]), ("val", ids[split:])):
        path = os.path.join(out, name + ".bin")
        part.astype(np.uint16).tofile(path)
        print(f"{path}: {len(part)} tokens")


if __name__ == "__main__":
    main()
