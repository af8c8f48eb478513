"""ZeRO stages 0-3 on 2 and 4 ranks (mpirun) against one rank.

    zero.py GACC EXAMPLES WORKDIR

For the MLP, with accumulation off and on: after 5 steps every rank's
losses and the consolidated checkpoint (parameters and AdamW state) equal
one rank's within 1e-5 relative (norm of the difference over the norm);
the elements each rank's collectives moved per step equal `gacc plan`'s
count, which is 2Ψ in stages 0-1, (K + 1)Ψ in stage 2 with K micro-batches
(reduce-scattered every micro-batch; 2Ψ without accumulation), and between
2KΨ and 3KΨ in stage 3 (a parameter is gathered again only for the backward
ops that read it), plus a few scalars; the plan's per-rank state bytes are the shards of each stage and
its predicted peak is the measured one. GPT-mini (token_mean loss, an
artifact) trains on 2 ranks in stage 3 as on one (losses within 1e-5,
parameters 2e-3: see below). In bf16, 2 ranks in every stage equal one rank
with micro-batches of a rank's size bitwise. Sharded checkpoints
consolidate to the gathered checkpoint and resume. ZeRO-3 with remat is
bitwise ZeRO-3 without. 8-bit AdamW and Adafactor (whose factored moments
need sums over every rank's shard) in stages 1-3 equal one rank and resume
bit for bit. A bad shard on one rank, or a rank killed mid-run,
ends the whole job. Prints ZERO OK, or MISMATCH lines.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

gacc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
# One BLAS thread everywhere (mpirun binds each rank to a core anyway), so
# that one rank and several sum in the same order where they can.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.stdout.reconfigure(line_buffering=True)
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root"]
STEPS = 5
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)
        print("MISMATCH:", message)


def load(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    types = {"F32": np.float32, "I64": np.int64, "U8": np.uint8}
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(body[begin:end], dtype=types[entry["dtype"]])
    return out


def train(tag, model, flags, ranks=1):
    metrics = os.path.join(work, tag + ".jsonl")
    save = os.path.join(work, tag + ".safetensors")
    command = [gacc, "run", model, "--steps", str(STEPS), "--metrics", metrics,
               "--save", save] + flags
    if ranks > 1:
        command = MPIRUN + ["-np", str(ranks)] + command
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=300)
    return [json.loads(line) for line in open(metrics)], load(save)


def plan(model, flags):
    out = subprocess.run([gacc, "plan", model, "--json"] + flags, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return json.loads(out)


def relative(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-30)


def compare(tag, reference, candidate, tolerance=1e-5, loss_tolerance=1e-5):
    ref_metrics, ref_state = reference
    metrics, state = candidate
    for want, got in zip(ref_metrics[-len(metrics):], metrics):
        check(abs(got["loss"] - want["loss"]) <= loss_tolerance * abs(want["loss"]),
              f"{tag}: loss {got['loss']} at step {got['step']}, one rank "
              f"{want['loss']}")
    for name, value in ref_state.items():
        error = relative(value, state[name])
        check(error <= tolerance, f"{tag}: {name} differs by {error:.2e}")


mlp = os.path.join(examples, "mlp.mlir")
# The MLP's parameters: 784x256 + 256 + 256x10 + 10.
shapes = [256 * 784, 256, 10 * 256, 10]
psi = sum(shapes)
one_rank = train("one-rank", mlp, [])
for ranks in (2, 4):
    for micro in (None, 8):
        for stage in range(4):
            flags = ["--ranks", str(ranks), "--zero-stage", str(stage)]
            if micro:
                flags += ["--micro-batch", str(micro)]
            tag = f"np{ranks}-stage{stage}" + (f"-micro{micro}" if micro else "")
            result = train(tag, mlp, flags, ranks)
            compare(tag, one_rank, result)
            planned = plan(mlp, flags)
            moved = {m["communicated_elements"] for m in result[0]}
            check(moved == {planned["communicated_elements"]},
                  f"{tag}: moved {moved}, planned "
                  f"{planned['communicated_elements']}")
            # Stage 0 all-reduces whole tensors; shards are padded.
            padded = psi if stage == 0 else sum(-(-n // ranks) * ranks
                                                for n in shapes)
            # K micro-batches: stages 0-1 reduce once per step (2Ψ); stage 2
            # reduce-scatters every micro-batch ((K + 1)Ψ); stage 3 also
            # gathers every micro-batch, forward and backward (≤ 3KΨ).
            k = (64 // ranks) // (micro or 64 // ranks)
            moved = planned["communicated_elements"]
            if stage < 3:
                want = (2 if stage < 2 or k == 1 else k + 1) * padded
                check(0 <= moved - want <= 8, f"{tag}: {moved} elements per "
                      f"step is not {want} + scalars")
            else:
                check(2 * k * padded <= moved <= 3 * k * padded + 8,
                      f"{tag}: stage 3 moved {moved}")
            shard = sum(-(-n // ranks) for n in shapes) * 4
            whole = psi * 4
            check(planned["parameters"] == (shard if stage >= 3 else whole) and
                  planned["gradients"] == (shard if stage >= 2 else whole) and
                  planned["optimizer_state"] == 2 * (shard if stage >= 1 else whole),
                  f"{tag}: plan state {planned['parameters']}, "
                  f"{planned['gradients']}, {planned['optimizer_state']}")
            measured = {m["peak_bytes"] for m in result[0][1:]}
            check(measured == {planned["peak"]},
                  f"{tag}: measured peak {measured}, planned {planned['peak']}")
            print(f"{tag}: {planned['communicated_elements']} elements per step "
                  f"({planned['communicated_elements'] / psi:.3f} Ψ), peak "
                  f"{planned['peak']} bytes")

# Mixed precision (bf16, DeepSpeed's layout: 16-bit weights and gradients,
# f32 master weights in the sharded optimizer state): 2 ranks round where
# one rank with micro-batches of a rank's size does, so they agree bitwise.
bf16_one = train("bf16-one-rank-m32", mlp, ["--precision", "bf16",
                                            "--micro-batch", "32"])
for stage in range(4):
    tag = f"bf16 np2-stage{stage}"
    compare(tag, bf16_one,
            train(tag.replace(" ", "-"), mlp, ["--precision", "bf16", "--ranks",
                                               "2", "--zero-stage", str(stage)],
                  2),
            tolerance=0.0, loss_tolerance=0.0)

# GPT-mini: token_mean counts the targets of all ranks; an artifact.
gpt = os.path.join(examples, "gpt_mini.mlir")
gpt_one = train("gpt-one-rank", gpt, [])
artifact = os.path.join(work, "gpt-zero3.gacc")
subprocess.run([gacc, "compile", gpt, "-o", artifact, "--ranks", "2",
                "--zero-stage", "3"], check=True, timeout=300)
# The key bias of attention has a zero gradient in exact arithmetic (softmax
# ignores what it adds to every key), so AdamW turns the rounding noise of
# any other summation order into lr-sized updates: parameters get a looser
# bound than the losses, as for PyTorch's DDP against one GPU.
compare("gpt np2-stage3", gpt_one, train("gpt-np2-stage3", artifact, [], 2),
        tolerance=2e-3)

# Sharded checkpoints: one file per rank and an index; consolidated, they
# are the gathered checkpoint byte for byte; resuming either continues as
# one rank would; another stage is refused.
shards = os.path.join(work, "sharded")
three = os.path.join(work, "three.safetensors")
consolidated = os.path.join(work, "consolidated.safetensors")
zero3 = ["--ranks", "2", "--zero-stage", "3"]
subprocess.run(MPIRUN + ["-np", "2", gacc, "run", mlp, "--steps", "3",
                         "--save-sharded", shards, "--save", three] + zero3,
               check=True, stdout=subprocess.DEVNULL, timeout=300)
check(sorted(os.listdir(shards)) == ["index.json", "rank-0-of-2.safetensors",
                                     "rank-1-of-2.safetensors"],
      f"sharded checkpoint holds {sorted(os.listdir(shards))}")
subprocess.run([gacc, "consolidate", shards, "-o", consolidated], check=True,
               stdout=subprocess.DEVNULL, timeout=60)
check(open(consolidated, "rb").read() == open(three, "rb").read(),
      "the consolidated checkpoint differs from the gathered one")
STEPS = 5  # until step 5: 2 more
resumed = train("resumed-sharded", mlp, zero3 + ["--resume", shards], 2)
compare("resumed sharded", one_rank, resumed)
resumed = train("resumed-consolidated", mlp, ["--resume", consolidated])
compare("resumed consolidated on one rank", one_rank, resumed)
job = subprocess.run(MPIRUN + ["-np", "2", gacc, "run", mlp, "--steps", "1",
                               "--ranks", "2", "--zero-stage", "1",
                               "--resume", shards],
                     capture_output=True, text=True, timeout=120)
check(job.returncode != 0 and "consolidate it" in job.stderr,
      "resuming a stage-3 checkpoint in stage 1 was not refused: " + job.stderr)

# GPT-mini in bf16 keeps some parameters in f32 (embeddings, layer norms):
# collectives of both types in one step. Against one rank with micro-batches
# of a rank's size: losses within 1e-4; parameters (not the AdamW moments,
# whose bf16-rounded inputs differ more) within 3e-3 but for the attention's
# qkv bias, whose key part has a zero gradient in exact arithmetic (AdamW
# normalizes its rounding noise into lr-sized steps). The biases of small
# gradients move by up to a few such steps: 2.7e-3 for h.0.mlp.c_proj.bias
# with the polynomial exp and tanh (gacc-cpu-approximate-math), 2e-3 with
# libm's; with fused attention, 4.5e-3 for h.0.mlp.c_fc.bias in stage 3 (one
# element of 512 off by 1.2e-4, the others within 1.2e-5; stage 0 equals one
# rank within 1e-8).
STEPS = 2
gpt_bf16 = train("gpt-bf16-one-rank-m8", gpt, ["--precision", "bf16",
                                                "--micro-batch", "8"])
for stage in (0, 3):
    _, state = result = train(f"gpt-bf16-np2-stage{stage}", gpt,
                              ["--precision", "bf16", "--ranks", "2",
                               "--zero-stage", str(stage)], 2)
    conditioned = {k: v for k, v in gpt_bf16[1].items()
                   if not k.endswith("attn.c_attn.bias")
                   and not k.startswith("exp_avg")}
    compare(f"gpt bf16 np2-stage{stage}", (gpt_bf16[0], conditioned), result,
            tolerance=5e-3, loss_tolerance=1e-4)

# Bad input on one rank (its shard of the checkpoint is truncated) ends
# the whole job with that rank's error, not a hang.
broken = os.path.join(work, "broken")
subprocess.run(["cp", "-r", shards, broken], check=True)
with open(os.path.join(broken, "rank-1-of-2.safetensors"), "r+b") as f:
    f.truncate(100)
try:
    job = subprocess.run(MPIRUN + ["-np", "2", gacc, "run", mlp, "--steps", "2",
                                   "--resume", broken] + zero3,
                         capture_output=True, text=True, timeout=120)
    check(job.returncode != 0 and "gacc: rank 1: gacc run: error:" in job.stderr,
          "a bad shard on rank 1 did not end the job with its error: " +
          job.stderr[-500:])
except subprocess.TimeoutExpired:
    check(False, "the job hung after rank 1 failed")

# Remat composes with ZeRO-3: the gathers are recomputed like any forward
# value, and the result is bitwise that without remat.
compare("gpt np2-stage3 remat sqrt", train("gpt-np2-stage3-again", artifact, [], 2),
        train("gpt-np2-stage3-remat", gpt, zero3 + ["--remat", "sqrt"], 2),
        tolerance=0.0, loss_tolerance=0.0)

# 8-bit AdamW under ZeRO: each rank quantizes its shard of the moments, in
# blocks from the shard's start (the block maxima of the whole are the
# ranks' side by side). Saved and resumed on 2 ranks, the run continues as
# the uninterrupted one does, bit for bit; close to one rank's 8-bit run.
adamw8bit = zero3[:2] + ["--zero-stage", "2", "--optimizer", "adamw8bit"]
STEPS = 5
straight = train("adamw8bit-np2", gpt, adamw8bit, 2)
STEPS = 3
train("adamw8bit-np2-first", gpt, adamw8bit, 2)
STEPS = 5
resumed = train("adamw8bit-np2-resumed", gpt, adamw8bit + [
    "--resume", os.path.join(work, "adamw8bit-np2-first.safetensors")], 2)
compare("8-bit AdamW on 2 ranks, resumed", straight,
        resumed, tolerance=0.0, loss_tolerance=0.0)
STEPS = 5
compare("8-bit AdamW on 2 ranks against one rank",
        (straight[0], {k: v for k, v in straight[1].items()
                       if v.dtype != np.uint8 and "absmax" not in k}),
        train("adamw8bit-one", gpt, ["--optimizer", "adamw8bit"]),
        tolerance=1e-2, loss_tolerance=1e-3)

# Adafactor under ZeRO: each rank updates its flat shard, whose rows and
# columns other ranks' shards share; the factored moments come from sums
# over the ranks and are whole on every rank. The model's shards start
# inside rows and inside the matrices of a 3-D parameter (105 elements on
# 2 ranks: 53 and 52; rows of 7, matrices of 5 rows); beta1, weight decay
# and parameter scaling read every rank's elements too. Equal to one rank
# (1e-5), communication as planned, resumed from a sharded checkpoint as
# the uninterrupted run.
factored = os.path.join(work, "factored.mlir")
with open(factored, "w") as f:
    f.write("""module {
  gacc.param @stack : tensor<3x5x7xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 1>
  gacc.param @fc.weight : tensor<15x10xf32> = #gacc.init<kaiming_uniform, scale = 0.57735026918962584, seed = 2>
  gacc.param @fc.bias : tensor<10xf32> = #gacc.init<uniform, scale = 0.1, seed = 3>
  gacc.input @x : tensor<8x7xf32> features
  gacc.input @t : tensor<8x10xf32> features
  func.func @model() -> tensor<f32> {
    %x = gacc.load @x : tensor<8x7xf32>
    %t = gacc.load @t : tensor<8x10xf32>
    %s = gacc.load @stack : tensor<3x5x7xf32>
    %w = gacc.load @fc.weight : tensor<15x10xf32>
    %b = gacc.load @fc.bias : tensor<10xf32>
    %s2 = gacc.reshape %s : tensor<3x5x7xf32> -> tensor<15x7xf32>
    %h = gacc.matmul %x, %s2 transpose_rhs : tensor<8x7xf32>, tensor<15x7xf32> -> tensor<8x15xf32>
    %a = gacc.tanh %h : tensor<8x15xf32>
    %y0 = gacc.matmul %a, %w : tensor<8x15xf32>, tensor<15x10xf32> -> tensor<8x10xf32>
    %y = gacc.add %y0, %b : tensor<8x10xf32>, tensor<10xf32>
    %loss = gacc.mse_loss mean %y, %t : tensor<8x10xf32>
    return %loss : tensor<f32>
  }
  gacc.train_step @train model @model batch_size 8
      optimizer #gacc.adafactor<lr = 1.0e-02, beta1 = 0.9, weight_decay = 0.01, relative_step = false>
}
""")
STEPS = 5
adafactor_one = train("adafactor-one", factored, [])
for ranks, stage, micro in [(2, 1, None), (2, 2, 2), (2, 3, None),
                            (4, 1, None), (4, 2, None), (4, 3, 1)]:
    flags = ["--ranks", str(ranks), "--zero-stage", str(stage)]
    if micro:
        flags += ["--micro-batch", str(micro)]
    tag = f"adafactor np{ranks} stage {stage}" + (f" micro {micro}" if micro else "")
    result = train(tag.replace(" ", "-"), factored, flags, ranks)
    compare(tag, adafactor_one, result)
    moved = {m["communicated_elements"] for m in result[0]}
    planned = plan(factored, flags)["communicated_elements"]
    check(moved == {planned}, f"{tag}: moved {moved}, planned {planned}")
# On one rank in stage 1 (the shard is the whole, flat); in 16-bit
# precisions (master weights sharded) against one rank with micro-batches
# of a rank's size, in f16 with a loss scale that overflows for two steps
# (every rank skips them alike).
compare("adafactor np1 stage 1", adafactor_one,
        train("adafactor-np1-stage1", factored, ["--zero-stage", "1"]))
f16 = os.path.join(work, "factored-f16.mlir")
with open(f16, "w") as f:
    f.write(open(factored).read().replace(
        "relative_step = false>", "relative_step = false> precision f16 "
        "loss_scale #gacc.loss_scale<init = 1048576.0>"))
STEPS = 6
for tag, model, flags in [("bf16 stage 3", factored, ["--precision", "bf16", "--zero-stage", "3"]),
                          ("f16 stage 2", f16, ["--zero-stage", "2"])]:
    one = train("adafactor-" + tag.replace(" ", "-") + "-one", model,
                flags[:-2] + ["--micro-batch", "4"])
    two = train("adafactor-" + tag.replace(" ", "-") + "-np2", model,
                flags + ["--ranks", "2"], 2)
    compare("adafactor np2 " + tag, one, two)
skipped = [m["step"] for m in two[0] if m.get("skipped")]
check(skipped == [1, 2], f"adafactor f16 skipped steps {skipped}, not [1, 2]")
STEPS = 5
adafactor_shards = os.path.join(work, "adafactor-sharded")
zero2 = ["--ranks", "2", "--zero-stage", "2"]
subprocess.run(MPIRUN + ["-np", "2", gacc, "run", factored, "--steps", "3",
                         "--save-sharded", adafactor_shards] + zero2,
               check=True, stdout=subprocess.DEVNULL, timeout=300)
straight = train("adafactor-np2-straight", factored, zero2, 2)
resumed = train("adafactor-np2-resumed", factored,
                zero2 + ["--resume", adafactor_shards], 2)
compare("adafactor on 2 ranks, resumed", straight,
        resumed, tolerance=0.0, loss_tolerance=0.0)

# A rank killed mid-run ends the job (no hang).
killer = os.path.join(work, "kill-rank-1.sh")
with open(killer, "w") as f:
    f.write('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 2; kill -9 $$) & fi\n'
            'exec "$@"\n')
try:
    job = subprocess.run(MPIRUN + ["-np", "2", "sh", killer, gacc, "run", mlp,
                                   "--steps", "100000000", "--ranks", "2",
                                   "--zero-stage", "1"],
                         capture_output=True, text=True, timeout=120)
    check(job.returncode != 0, "the job went on after rank 1 was killed")
    print("killed rank: exit", job.returncode)
except subprocess.TimeoutExpired:
    check(False, "the job hung after rank 1 was killed")

if not failures:
    print("ZERO OK")
