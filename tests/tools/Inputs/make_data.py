"""Writes data files for gacc-run.test: good ones and broken ones."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e"))
import tensorfiles  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
x = rng.standard_normal((96, 8)).astype(np.float32)
y = (x[:, :4].argmax(axis=1)).astype(np.int32)
tensorfiles.save(f"{out}/good.safetensors", {"x": x, "y": y})
os.makedirs(f"{out}/npy", exist_ok=True)
np.save(f"{out}/npy/x.npy", x)
np.save(f"{out}/npy/y.npy", y)
tensorfiles.save(f"{out}/wrong_name.safetensors", {"x": x, "labels": y})
tensorfiles.save(f"{out}/wrong_dtype.safetensors", {"x": x, "y": y.astype(np.int64)})
tensorfiles.save(f"{out}/wrong_shape.safetensors", {"x": x[:, :7].copy(), "y": y})
tensorfiles.save(f"{out}/too_few.safetensors", {"x": x[:10].copy(), "y": y[:10].copy()})
bad = y.copy()
bad[17] = 9
tensorfiles.save(f"{out}/bad_label.safetensors", {"x": x, "y": bad})
data = open(f"{out}/good.safetensors", "rb").read()
open(f"{out}/truncated.safetensors", "wb").write(data[: len(data) // 2])
os.makedirs(f"{out}/corrupt_npy", exist_ok=True)
np.save(f"{out}/corrupt_npy/x.npy", x)
open(f"{out}/corrupt_npy/y.npy", "wb").write(b"not numpy at all")
tensorfiles.save(f"{out}/partial_init.safetensors", {"w1": np.zeros((16, 8), np.float32)})
