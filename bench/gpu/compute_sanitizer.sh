#!/bin/bash
# The kernels gacc emits under NVIDIA's compute-sanitizer, on a machine with
# a GPU: out-of-bounds and misaligned accesses (memcheck), shared-memory
# races (racecheck: the tiled matmuls and block reductions), barrier misuse
# (synccheck) and reads of uninitialized device memory (initcheck), for
# every CUDA artifact of the bundle over a few steps.
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/compute_sanitizer.sh build-gpu [STEPS]
set -euo pipefail
bundle=${1:-build-gpu}
steps=${2:-2}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
sanitizer=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
status=0
for artifact in "$bundle"/*.cuda.gacc; do
  for tool in memcheck racecheck synccheck initcheck; do
    if log=$("$sanitizer" --tool "$tool" --error-exitcode 9 \
        "$bundle/gacc-train-artifact" "$artifact" "$steps" 2>&1); then
      echo "$(basename "$artifact") $tool: clean"
    else
      echo "$(basename "$artifact") $tool: FAILED"
      echo "$log" | grep -v '^loss' | tail -20
      status=1
    fi
  done
done
exit $status
