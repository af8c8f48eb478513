#!/bin/bash
# GPT-2-small on one GPU (issue 28's shapes: vocab 50257, context 1024,
# width 768, 12 heads, 12 layers, batch 8; examples/make_gpt.py): gacc's
# CUDA step against PyTorch eager with scaled_dot_product_attention
# (torch_peer.py gpt2), f32 and bf16, samples/s and model FLOP utilization
# of the H100's dense peak (nanoGPT's count: 6 N + 12 L T C per token).
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/gpt2_bench.sh build-gpu [STEPS]
set -euo pipefail
bundle=${1:-build-gpu}
steps=${2:-10}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for variant in f32 bf16; do
  gacc=$("$bundle/gacc-train-artifact" "$bundle/gpt2.$variant.cuda.gacc" "$steps" 2>&1) || true
  torch=$(cd "$bundle" && $python torch_peer.py gpt2 "$variant" "$steps" 2>&1) || true
  $python - "$variant" "$gacc" "$torch" <<'PY'
import sys
variant, gacc, torch = sys.argv[1:]
def rate(text):
    for line in text.splitlines():
        if line.startswith("samples_per_s"):
            return float(line.split()[1])
    print(f"  failed: {text.strip()[-400:]}")
    return None
losses = [line.split()[2] for line in gacc.splitlines() if line.startswith("loss")]
V, T, C, L = 50257, 1024, 768, 12
params = V * C * 2 + T * C + L * (12 * C * C + 13 * C) + 2 * C
flops_per_sample = (6 * params + 12 * L * T * C) * T
peak = 989e12 if variant == "bf16" else 67e12  # H100 SXM dense bf16 / f32
g, t = rate(gacc), rate(torch)
line = f"gpt2 {variant}: losses {losses[:1]} .. {losses[-1:]}"
if g:
    line += f", gacc {g:.1f} samples/s (MFU {g * flops_per_sample / peak:.1%})"
if t:
    line += f", PyTorch SDPA {t:.1f} samples/s (MFU {t * flops_per_sample / peak:.1%})"
if g and t:
    line += f", gacc/PyTorch {g / t:.2f}"
print(line)
PY
done
