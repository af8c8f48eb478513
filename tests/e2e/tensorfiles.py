"""Minimal .safetensors and .npy helpers for the end-to-end tests (no
dependency beyond NumPy)."""
import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32,
           "I64": np.int64, "F16": np.float16, "U8": np.uint8,
           "BOOL": np.bool_}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save(path, tensors, metadata=None):
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        # ascontiguousarray makes scalars 1-d; keep their shape.
        array = np.asarray(tensors[name])
        array = np.ascontiguousarray(array).reshape(array.shape)
        blob = array.tobytes()
        header[name] = {"dtype": _NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    base = 8 + size
    def array(e):
        raw = data[base + e["data_offsets"][0]:base + e["data_offsets"][1]]
        if e["dtype"] == "BF16":  # NumPy has no bfloat16: widen to f32
            bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            return bits.view(np.float32).reshape(e["shape"])
        return np.frombuffer(raw, dtype=_DTYPES[e["dtype"]]).reshape(e["shape"])
    return {name: array(e) for name, e in header.items()}
