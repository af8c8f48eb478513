#!/bin/bash
# Bundles what bench/gpu/runtime_tests.sh needs on a GPU machine without
# LLVM: the runtime's test binary (from build/), the Debian libraries it
# links that such a machine lacks, and the examples' kernels as PTX.
set -euo pipefail
out=${1:-build-gpu}
rm -rf "$out" && mkdir -p "$out/lib"
cp build/tests/unit/gacc-runtime-tests "$out/"
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$out/lib/"
done
# The kernels of the examples, plain and in bf16.
for model in mlp gpt_mini; do
  build/bin/gacc compile "examples/$model.mlir" --target cuda --emit ptx \
    -o "$out/$model.ptx"
  build/bin/gacc compile "examples/$model.mlir" --target cuda --emit ptx \
    --precision bf16 -o "$out/${model}_bf16.ptx"
done
du -sh "$out"
