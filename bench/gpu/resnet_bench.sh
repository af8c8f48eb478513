#!/bin/bash
# resnet18 on one GPU (issue 28's shapes: torchvision's resnet18, 10
# classes, 32x32 images, batch 256, SGD with momentum; exported by
# bench/gpu/make_resnet.py through gacc.to_mlir): gacc's CUDA step against
# PyTorch eager (torch_peer.py resnet18), f32 and bf16 (autocast), samples/s.
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/resnet_bench.sh build-gpu [STEPS]
set -euo pipefail
bundle=${1:-build-gpu}
steps=${2:-10}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for variant in f32 bf16; do
  gacc=$("$bundle/gacc-train-artifact" "$bundle/resnet18.$variant.cuda.gacc" "$steps" 2>&1) || true
  torch=$(cd "$bundle" && $python torch_peer.py resnet18 "$variant" "$steps" 2>&1) || true
  $python - "$variant" "$gacc" "$torch" <<'PY'
import sys
variant, gacc, torch = sys.argv[1:]
def rate(text):
    for line in text.splitlines():
        if line.startswith("samples_per_s"):
            return float(line.split()[1])
    print(f"  failed: {text.strip()[-400:]}")
    return None
g, t = rate(gacc), rate(torch)
line = f"resnet18 {variant}:"
if g:
    line += f" gacc {g:.1f} samples/s"
if t:
    line += f", PyTorch {t:.1f} samples/s"
if g and t:
    line += f", gacc/PyTorch {g / t:.2f}"
print(line)
PY
done
