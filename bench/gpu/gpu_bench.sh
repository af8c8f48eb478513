#!/bin/bash
# gacc on a GPU against gacc on the CPU (parity) and against PyTorch on the
# same GPU (samples/s), on a machine with a GPU, its driver and PyTorch but
# no LLVM: the artifacts and the runtime-only trainer come from here.
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/gpu_bench.sh build-gpu [STEPS]
#
# For each example and variant the bundle holds (MODEL.VARIANT.cuda.gacc:
# f32, bf16, f16 with accumulation and remat): the CUDA artifact's losses
# over STEPS steps (same synthetic batches) against the CPU artifact's
# (parity: the largest relative difference, within 1e-4 in f32 and 2e-2 in
# f16/bf16), the samples/s of both and, for f32 and bf16, of PyTorch
# (torch_peer.py) and the ratio. Exits non-zero on a parity failure.
set -euo pipefail
bundle=${1:-build-gpu}
steps=${2:-30}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
for artifact in "$bundle"/*.cuda.gacc; do
  tag=${artifact%.cuda.gacc}
  name=${tag##*/}
  model=${name%%.*}
  variant=${name#*.}
  # Only the steps the bundle has for both targets (not peer_bench.sh's).
  [ -e "$tag.cpu.gacc" ] || continue
  "$bundle/gacc-train-artifact" "$tag.cpu.gacc" "$steps" > "$tag.cpu.out"
  "$bundle/gacc-train-artifact" "$tag.cuda.gacc" "$steps" > "$tag.cuda.out"
  rm -f "$tag.torch.out"
  if [[ $variant == f32 || $variant == bf16 ]]; then
    peer=$([ "$model" = mlp ] && echo mlp || echo gpt)
    (cd "$bundle" && $python torch_peer.py "$peer" "$variant" "$steps") > "$tag.torch.out"
  fi
  $python - "$tag" "$variant" <<'PY' || status=1
import os, sys
tag, variant = sys.argv[1], sys.argv[2]
def read(kind):
    losses, rate = [], None
    if not os.path.exists(f"{tag}.{kind}.out"):
        return losses, rate
    for line in open(f"{tag}.{kind}.out"):
        word, *rest = line.split()
        if word == "loss":
            losses.append(float(rest[1]))
        elif word == "samples_per_s":
            rate = float(rest[0])
    return losses, rate
cpu, cpu_rate = read("cpu")
gpu, gpu_rate = read("cuda")
_, torch_rate = read("torch")
worst = max(abs(a - b) / abs(b) for a, b in zip(gpu, cpu))
tolerance = 1e-4 if variant == "f32" else 2e-2
ok = len(gpu) == len(cpu) and worst <= tolerance
line = (f"{os.path.basename(tag)}: losses vs CPU {worst:.1e} ({'ok' if ok else 'MISMATCH'}), "
        f"gacc {gpu_rate:.0f} samples/s (CPU {cpu_rate:.0f})")
if torch_rate:
    line += f", PyTorch {torch_rate:.0f} samples/s, gacc/PyTorch {gpu_rate / torch_rate:.2f}"
print(line)
sys.exit(0 if ok else 1)
PY
done
exit $status
