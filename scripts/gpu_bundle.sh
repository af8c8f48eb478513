#!/bin/bash
# Bundles what bench/gpu/runtime_tests.sh and bench/gpu/gpu_bench.sh need on
# a GPU machine without LLVM: the runtime's test binary and runtime-only
# trainer (from build/), the Debian libraries they link that such a machine
# lacks, the examples' kernels as PTX, the examples compiled for the CPU and
# for CUDA (f32, bf16, and f16 with accumulation and remat), and the
# PyTorch peer; bench/gpu/load_bench.sh's PTX-only builds and
# bench/gpu/peer_bench.sh's GPT-2-small and resnet18.
set -euo pipefail
out=${1:-build-gpu}
rm -rf "$out" && mkdir -p "$out/lib"
cp build/tests/unit/gacc-runtime-tests build/bench/gpu/gacc-train-artifact "$out/"
cp bench/gpu/torch_peer.py tests/e2e/parity.py tests/e2e/tensorfiles.py "$out/"
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$out/lib/"
done
# The kernels of the examples, plain and in bf16.
for model in mlp gpt_mini; do
  build/bin/gacc compile "examples/$model.mlir" --target cuda --emit ptx \
    -o "$out/$model.f32.ptx"
  build/bin/gacc compile "examples/$model.mlir" --target cuda --emit ptx \
    --precision bf16 -o "$out/$model.bf16.ptx"
done
# The examples for gpu_bench.sh: the same step for the CPU and for CUDA, as
# written (f32), in bf16, and with accumulation, remat and f16 loss scaling
# together (deliverable 3 of issue 9: every transform on the GPU).
declare -A variants=(
  [f32]=""
  [bf16]="--precision bf16"
  [f16_ga4_sqrt]="--precision f16 --accumulation-steps 4 --remat sqrt"
)
for model in mlp gpt_mini; do
  for variant in "${!variants[@]}"; do
    for target in cpu cuda; do
      # shellcheck disable=SC2086 # the flags are words
      build/bin/gacc compile "examples/$model.mlir" --target "$target" \
        ${variants[$variant]} -o "$out/$model.$variant.$target.gacc"
    done
  done
done
# GPT-2-small for bench/gpu/peer_bench.sh gpt2.
python3 examples/make_gpt.py --vocab 50257 --context 1024 --width 768 \
  --heads 12 --layers 12 --batch 8 > "$out/gpt2.mlir"
for variant in f32 bf16; do
  build/bin/gacc compile "$out/gpt2.mlir" --target cuda --precision "$variant" \
    -o "$out/gpt2.$variant.cuda.gacc"
done
# resnet18 (torchvision, batch 256, 32x32) for bench/gpu/peer_bench.sh.
PYTHONPATH=build/python /usr/bin/python3 bench/gpu/make_resnet.py 256 \
  > "$out/resnet18.mlir"
for variant in f32 bf16; do
  build/bin/gacc compile "$out/resnet18.mlir" --target cuda \
    --precision "$variant" -o "$out/resnet18.$variant.cuda.gacc"
done
# The same CUDA steps with their kernels as PTX only (no ptxas in the
# toolkit gacc sees), for bench/gpu/load_bench.sh.
ptx_only=$(mktemp -d)
ln -s "${CUDA_HOME:-/usr/local/cuda}/nvvm" "$ptx_only/nvvm"
for model in mlp gpt_mini; do
  CUDA_HOME=$ptx_only build/bin/gacc compile "examples/$model.mlir" \
    --target cuda -o "$out/$model.f32.ptx-only.gacc"
done
rm -rf "$ptx_only"
du -sh "$out"
# The device tool carries at most 64 MiB with the working tree (about 3),
# the bundle about 110 MiB: it travels compressed (about 10 MiB; OpenBLAS
# and the artifacts compress well), in a folder git ignores.
mkdir -p build-carry
tar -cJf "build-carry/$(basename "$out").tar.xz" "$out"
du -sh "build-carry/$(basename "$out").tar.xz"
echo "carry build-carry; there, first: tar -xJf build-carry/$(basename "$out").tar.xz"

