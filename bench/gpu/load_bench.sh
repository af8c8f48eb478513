#!/bin/bash
# How long opening a CUDA artifact takes (loading its kernels), with the
# kernels as PTX only, which the driver compiles at load, and as a fatbin
# with machine code for sm_80 and sm_90 (gacc-cuda-assemble-kernels, what
# `gacc compile --target cuda` makes where CUDA's ptxas is installed).
# The driver's own cache of compiled PTX is disabled for the cold loads
# (CUDA_CACHE_DISABLE=1, as on a fresh machine) and used for the warm one.
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/load_bench.sh build-gpu
set -euo pipefail
bundle=${1:-build-gpu}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
open_s() {
  "$bundle/gacc-train-artifact" "$1" 1 | sed -n 's/^open_s //p'
}
cache=$(mktemp -d)
for model in mlp gpt_mini; do
  ptx="$bundle/$model.f32.ptx-only.gacc" fatbin="$bundle/$model.f32.cuda.gacc"
  cold_ptx=$(CUDA_CACHE_DISABLE=1 open_s "$ptx")
  cold_fatbin=$(CUDA_CACHE_DISABLE=1 open_s "$fatbin")
  CUDA_CACHE_PATH=$cache open_s "$ptx" > /dev/null
  warm_ptx=$(CUDA_CACHE_PATH=$cache open_s "$ptx")
  echo "$model: open PTX only ${cold_ptx} s cold, ${warm_ptx} s from the" \
    "driver's cache; fatbin ${cold_fatbin} s"
done
rm -rf "$cache"
