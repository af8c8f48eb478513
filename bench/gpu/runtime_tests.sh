#!/bin/bash
# The runtime's GPU tests (CUDA driver layer, NCCL) on a machine with a GPU,
# its driver and PyTorch but no LLVM: build here, carry the test binary and
# the shared libraries it needs from this machine, run there.
#
#   here:  scripts/gpu_bundle.sh build-gpu      (or by hand: see below)
#   there: bench/gpu/runtime_tests.sh build-gpu
#
# build-gpu/ holds gacc-runtime-tests, lib/ (Debian's libopenblas.so.0,
# libgfortran.so.5, libquadmath.so.0) and the PTX gacc emits for the
# examples (*.ptx), which the driver must load. NCCL and the CUDA runtime
# come from the machine's PyTorch (nvidia-* packages) or /usr/local/cuda.
set -euo pipefail
bundle=${1:-build-gpu}
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH="$bundle/lib:${nccl}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$bundle/gacc-runtime-tests" --gtest_filter='Cuda*:Nccl*'
for ptx in "$bundle"/*.ptx; do
  [ -e "$ptx" ] || continue
  echo "== $ptx"
  GACC_KERNELS_PTX="$ptx" "$bundle/gacc-runtime-tests" \
    --gtest_filter='CudaTest.LoadsTheKernelsGaccEmits'
done
