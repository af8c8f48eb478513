"""Writes a copy of an artifact whose header also requires a CPU feature.

    require_cpu_feature.py IN.gacc OUT.gacc FEATURE

The header's checksum is recomputed (FNV-1a 64 of its JSON without the
field, as the runtime dumps it: sorted keys, no spaces), so the runtime
reads the copy and refuses it only for the feature (docs/artifact.md).
"""
import json
import struct
import sys


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def dump(header):
    return json.dumps(header, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)


source, target, feature = sys.argv[1:]
data = open(source, "rb").read()
size = struct.unpack("<I", data[12:16])[0]
header = json.loads(data[16:16 + size])
checksum = header.pop("checksum")
assert checksum == format(fnv1a64(dump(header).encode()), "016x"), \
    "the header's JSON is not dumped as the runtime does"
header["cpu_features"] = header.get("cpu_features", []) + [feature]
header["checksum"] = format(fnv1a64(dump(header).encode()), "016x")
text = dump(header).encode()
start = (16 + size + 63) // 64 * 64  # the data area
out = data[:12] + struct.pack("<I", len(text)) + text
out += b"\0" * ((-len(out)) % 64) + data[start:]
open(target, "wb").write(out)
