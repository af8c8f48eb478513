#!/bin/bash
# gacc on a GPU against gacc on the CPU (parity) and against PyTorch on the
# same GPU (samples/s), on a machine with a GPU, its driver and PyTorch but
# no LLVM: the artifacts and the runtime-only trainer come from here.
#
#   here:  scripts/gpu_bundle.sh build-gpu
#   there: bench/gpu/gpu_bench.sh build-gpu [STEPS]
#
# For the MLP and GPT-mini in f32 and bf16: the CUDA artifact's losses over
# STEPS steps (same synthetic batches) against the CPU artifact's (parity:
# the largest relative difference, within 1e-4 in f32 and 2e-2 in bf16),
# then samples/s of the CUDA artifact and of PyTorch (torch_peer.py) and
# their ratio. Exits non-zero on a parity failure.
set -euo pipefail
bundle=${1:-build-gpu}
steps=${2:-30}
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
for model in mlp gpt_mini; do
  for precision in f32 bf16; do
    tag="${model}_${precision}"
    "$bundle/gacc-train-artifact" "$bundle/$tag.cpu.gacc" "$steps" > "$bundle/$tag.cpu.out"
    "$bundle/gacc-train-artifact" "$bundle/$tag.cuda.gacc" "$steps" > "$bundle/$tag.cuda.out"
    peer=$([ "$model" = mlp ] && echo mlp || echo gpt)
    (cd "$bundle" && $python torch_peer.py "$peer" "$precision" "$steps") > "$bundle/$tag.torch.out"
    $python - "$bundle/$tag" "$precision" <<'PY' || status=1
import sys
tag, precision = sys.argv[1], sys.argv[2]
def read(kind):
    losses, rate = [], None
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
tolerance = 1e-4 if precision == "f32" else 2e-2
ok = len(gpu) == len(cpu) and worst <= tolerance
print(f"{tag.split('/')[-1]}: losses vs CPU {worst:.1e} ({'ok' if ok else 'MISMATCH'}), "
      f"gacc {gpu_rate:.0f} samples/s (CPU {cpu_rate:.0f}), "
      f"PyTorch {torch_rate:.0f} samples/s, gacc/PyTorch {gpu_rate / torch_rate:.2f}")
sys.exit(0 if ok else 1)
PY
  done
done
exit $status
