#!/bin/bash
# A model on one GPU: gacc's CUDA step (the runtime-only trainer) against
# PyTorch eager on the same GPU (torch_peer.py), f32 and bf16 (autocast),
# samples/s and their ratio.
#   gpt2      GPT-2-small (issue 28's shapes: vocab 50257, context 1024,
#             width 768, 12 heads, 12 layers, batch 8; examples/make_gpt.py);
#             PyTorch with scaled_dot_product_attention; also the model FLOP
#             utilization of the H100's dense peak (nanoGPT's count:
#             6 N + 12 L T C per token).
#   resnet18  torchvision's resnet18 (10 classes, 32x32 images, batch 256,
#             SGD with momentum; bench/gpu/make_resnet.py through
#             gacc.to_mlir).
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/peer_bench.sh {gpt2,resnet18} build-gpu [STEPS]
set -euo pipefail
model=$1
bundle=${2:-build-gpu}
steps=${3:-10}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for variant in f32 bf16; do
  gacc=$("$bundle/gacc-train-artifact" "$bundle/$model.$variant.cuda.gacc" "$steps" 2>&1) || true
  torch=$(cd "$bundle" && $python torch_peer.py "$model" "$variant" "$steps" 2>&1) || true
  $python - "$model" "$variant" "$gacc" "$torch" <<'PY'
import sys
model, variant, gacc, torch = sys.argv[1:]
def rate(text):
    for line in text.splitlines():
        if line.startswith("samples_per_s"):
            return float(line.split()[1])
    print(f"  failed: {text.strip()[-400:]}")
    return None
def mfu(rate):
    if model != "gpt2":
        return ""
    V, T, C, L = 50257, 1024, 768, 12
    params = V * C * 2 + T * C + L * (12 * C * C + 13 * C) + 2 * C
    flops_per_sample = (6 * params + 12 * L * T * C) * T
    peak = 989e12 if variant == "bf16" else 67e12  # H100 SXM dense bf16 / f32
    return f" (MFU {rate * flops_per_sample / peak:.1%})"
losses = [line.split()[2] for line in gacc.splitlines() if line.startswith("loss")]
g, t = rate(gacc), rate(torch)
line = f"{model} {variant}: losses {losses[:1]} .. {losses[-1:]}"
if g:
    line += f", gacc {g:.1f} samples/s{mfu(g)}"
if t:
    line += f", PyTorch {t:.1f} samples/s{mfu(t)}"
if g and t:
    line += f", gacc/PyTorch {g / t:.2f}"
def memory(text):
    return " ".join(line.split(None, 1)[1] for line in text.splitlines()
                    if line.startswith("memory_mib"))
line += f"; MiB: gacc {memory(gacc)}, PyTorch {memory(torch)}"
print(line)
PY
done
