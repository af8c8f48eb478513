"""Loads what `gacc run --save` wrote into the imported module with
load_state_dict(strict=True) and checks that training changed it."""
import json
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, sys.argv[1])
import torch_modules  # noqa: E402


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    dtypes = {"F32": np.float32, "F64": np.float64, "I64": np.int64}
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(
            data[begin:end], dtype=dtypes[entry["dtype"]]).reshape(
                entry["shape"]).copy())
    return out


module, _ = torch_modules.classifier()
initial = {k: v.clone() for k, v in module.state_dict().items()}
saved = read_safetensors(sys.argv[2])
state = {k: saved[k] for k in initial}
module.load_state_dict(state, strict=True)
moved = sum(not torch.equal(initial[k], module.state_dict()[k])
            for k in initial)
print(f"loaded {len(state)} tensors, {moved} changed by training")
