#!/usr/bin/env bash
# Fuzzes gacc with libFuzzer (docs/hardening.md): builds the fuzz targets of
# tools/gacc-fuzz with clang, AddressSanitizer and UBSan into build-fuzz/,
# gathers the seed corpus (examples/, the lit tests' models, a compiled
# artifact, a checkpoint, .npy files) and runs both targets at once for
# SECONDS each (default 600), going on past findings (libFuzzer's fork
# mode). Findings land in build-fuzz/findings/TARGET/; each one becomes a
# regression input in tests/fuzz/Inputs/.
#
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
fuzz=$root/build-fuzz

# The normal build writes the readers' seeds; the fuzz build is clang's.
"$root/scripts/setup.sh"
GACC_BUILD_DIR=$fuzz GACC_EXTRA_PACKAGES="clang-22 libclang-rt-22-dev" \
  GACC_CMAKE_ARGS="-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DGACC_FUZZ=ON" \
  GACC_BUILD_TARGETS="gacc-compile-fuzzer gacc-readers-fuzzer" \
  "$root/scripts/setup.sh"

seeds=$fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds/compile" "$seeds/readers"
# Every model in examples/ and the lit tests, one seed per split-input-file
# chunk.
/usr/bin/python3 - "$root" "$seeds/compile" <<'PY'
import pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(root.glob("examples/*.mlir")) + sorted(root.glob("tests/**/*.mlir"))
count = 0
for path in files:
    for chunk in path.read_text().split("// -----"):
        if chunk.strip():
            (out / f"{count:04d}-{path.stem}.mlir").write_text(chunk)
            count += 1
print(f"fuzz: {count} model seeds")
PY
gacc=$root/build/bin/gacc
"$gacc" compile "$root/examples/mlp.mlir" -o "$seeds/readers/mlp.gacc"
"$gacc" run "$root/examples/mlp.mlir" --steps 1 --save "$seeds/readers/mlp.safetensors" >/dev/null
/usr/bin/python3 - "$seeds/readers" <<'PY'
import pathlib, struct, sys
import numpy as np
out = pathlib.Path(sys.argv[1])
# The artifact's header alone: the fuzzer seals it with a valid checksum.
artifact = (out / "mlp.gacc").read_bytes()
size = struct.unpack_from("<I", artifact, 12)[0]
(out / "mlp-header.json").write_bytes(artifact[16:16 + size])
for name, array in {
    "f32": np.arange(12, dtype="<f4").reshape(3, 4),
    "f64": np.linspace(0, 1, 5),
    "f16": np.ones((2, 2), dtype="<f2"),
    "i32": np.arange(6, dtype="<i4").reshape(2, 3),
    "i64": np.array([7, -1], dtype="<i8"),
    "u8": np.arange(4, dtype="u1"),
    "bool": np.array([True, False]),
    "scalar": np.array(3.5, dtype="<f4"),
}.items():
    np.save(out / f"{name}.npy", array)
PY
mkdir -p "$fuzz/corpus/compile" "$fuzz/corpus/readers" \
  "$fuzz/findings/compile" "$fuzz/findings/readers"

run() { # TARGET MAX_LEN EXTRA...
  local target=$1 max_len=$2
  shift 2
  "$fuzz/bin/gacc-$target-fuzzer" "$fuzz/corpus/$target" "$seeds/$target" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=60 \
    -rss_limit_mb=4096 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 \
    -artifact_prefix="$fuzz/findings/$target/" "$@" \
    >"$fuzz/$target.log" 2>&1
}
run compile 16384 -dict="$root/tools/gacc-fuzz/gacc.dict" & compile=$!
# An artifact's shared object makes it too long to mutate usefully: the
# readers fuzzer takes its first 8 KiB, and its header whole.
run readers 8192 & readers=$!
status=0
wait $compile || status=$?
wait $readers || status=$?
for target in compile readers; do
  echo "fuzz: gacc-$target-fuzzer:"
  grep -E "^#[0-9]+: cov" "$fuzz/$target.log" | tail -1 | sed 's/^/  /'
  { grep -E "^SUMMARY" "$fuzz/$target.log" || true; } | sort | uniq -c | sed 's/^/  /'
  ls "$fuzz/findings/$target" | sed 's/^/  finding: /'
done
exit $status
