#!/bin/bash
# Bundles what bench/gpu/runtime_tests.sh needs on a GPU machine without
# LLVM: the runtime's test binary (from build/) and the Debian libraries it
# links that such a machine lacks.
set -euo pipefail
out=${1:-build-gpu}
rm -rf "$out" && mkdir -p "$out/lib"
cp build/tests/unit/gacc-runtime-tests "$out/"
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$out/lib/"
done
du -sh "$out"
