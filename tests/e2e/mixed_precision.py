#!/usr/bin/python3
"""Mixed precision trains like f32 and loss scaling behaves like GradScaler.

1. The MLP and GPT-mini train in bf16 and f16 (fp32 master weights) with a
   loss within CURVE_TOLERANCE (relative) of f32 at every step.
2. Composition, on GPT-mini in f16: accumulation (K = 2, 4 and an uneven
   split) gives the first step's gradients within ACCUMULATION_TOLERANCE of
   the full batch (f16 rounds each micro-batch's products, so they differ by
   about one f16 ulp, ~1e-3) and the same loss-scale decisions; remat is
   bitwise equal to no remat, with and without accumulation.
3. Overflow injection, on the MLP in f16 with growth_interval 4 (resuming
   a checkpoint continues bitwise, scale and count included): a
   checkpoint's loss scale is set to 2^40, so the scaled gradients overflow
   f16. The resumed step is skipped: parameters and optimizer state are
   bitwise unchanged, the scale halves, Adam's step count stays. Over the
   next steps the scale follows GradScaler's rule exactly (halve and skip on
   overflow, double after 4 good steps), comes down to where gradients fit
   and grows back; skipped steps are exactly those with a non-finite
   gradient norm; the first update after the skips matches an update
   without them (Adam's bias correction did not count skipped steps).
4. Collapse: inputs that overflow f16 in the forward pass make every step
   overflow; the run stops with a clear error once the scale falls below 1,
   and writes no checkpoint.
5. bf16 uses no loss scaling.
6. Parity with torch.autocast("cpu", bfloat16) on the MLP (written with
   F.linear, as nn.Linear): the first step's loss within 1e-3 and gradients
   within 2e-2 of PyTorch's autocast, and four times closer to them than to
   f32's (bf16 rounding moves gradients ~4% from f32; the two autocasts
   agree to ~0.5%): the cast policy is autocast's.
Prints one line per check and MIXED PRECISION OK.

usage: mixed_precision.py GACC EXAMPLES_DIR PARITY_DIR WORK_DIR
  PARITY_DIR: the data and initial parameters parity.py wrote.
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

CURVE_TOLERANCE = 0.03
ACCUMULATION_TOLERANCE = 5e-3
CHECKPOINT = {"format": "gacc-checkpoint", "version": "1"}

ok = True


def check(good, message):
    global ok
    ok &= bool(good)
    print(f"{'ok' if good else 'MISMATCH'} {message}")


def run(gacc, model, work, tag, flags, expect_failure=False):
    paths = {k: os.path.join(work, f"{tag}.{k}")
             for k in ("grads", "ckpt", "metrics")}
    result = subprocess.run(
        [gacc, "run", model, f"--dump-grads={paths['grads']}",
         f"--save={paths['ckpt']}", f"--metrics={paths['metrics']}"] + flags,
        capture_output=True, text=True)
    if expect_failure:
        return result, paths
    if result.returncode != 0:
        sys.exit(f"gacc run {tag} failed:\n{result.stderr}")
    metrics = [json.loads(line) for line in open(paths["metrics"])]
    return metrics, tensorfiles.load(paths["grads"]), tensorfiles.load(
        paths["ckpt"])


def relative(ours, reference):
    keys = sorted(reference)
    a = np.concatenate([np.ravel(ours[k]) for k in keys]).astype(np.float64)
    b = np.concatenate([np.ravel(reference[k]) for k in keys]).astype(
        np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def same(a, b, keys):
    return all(np.array_equal(a[k], b[k]) for k in keys)


def with_step_attributes(source, path, attributes):
    """The model at `source` with `attributes` appended to its train_step."""
    text = open(source).read()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.lstrip().startswith("gacc.train_step"))
    end = start
    while end + 1 < len(lines) and lines[end + 1].startswith(" " * 6):
        end += 1
    lines[end] += " " + attributes
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def curves(gacc, examples, parity, work):
    for name, model, steps in (("mlp", "mlp.mlir", 40),
                               ("gpt", "gpt_mini.mlir", 30)):
        data = [f"--data={parity}/{name}_batch.safetensors",
                f"--init={parity}/{name}_init.safetensors", f"--steps={steps}"]
        model = os.path.join(examples, model)
        f32 = np.array([m["loss"] for m in
                        run(gacc, model, work, f"{name}-f32", data)[0]])
        for precision in ("bf16", "f16"):
            metrics = run(gacc, model, work, f"{name}-{precision}",
                          data + [f"--precision={precision}"])[0]
            losses = np.array([m["loss"] for m in metrics])
            error = float(np.max(np.abs(losses - f32) / f32))
            check(error <= CURVE_TOLERANCE and losses[-1] < 0.5 * losses[0],
                  f"{name} {precision}: loss within {error:.2e} of f32 over "
                  f"{steps} steps (tolerance {CURVE_TOLERANCE}), "
                  f"{losses[0]:.4f} -> {losses[-1]:.4f}")
            if precision == "bf16":
                check("loss_scale" not in metrics[0],
                      f"{name} bf16: no loss scaling")


def composition(gacc, examples, parity, work):
    model = os.path.join(examples, "gpt_mini.mlir")
    base = ["--precision=f16", "--steps=3",
            f"--data={parity}/gpt_batch.safetensors",
            f"--init={parity}/gpt_init.safetensors"]
    full = run(gacc, model, work, "f16-full", base)
    for split in (["--accumulation-steps=2"], ["--accumulation-steps=4"],
                  ["--micro-batch=5"]):
        metrics, grads, _ = run(gacc, model, work, "f16" + split[0], base + split)
        error = relative(grads, full[1])
        check(error <= ACCUMULATION_TOLERANCE and
              [m["skipped"] for m in metrics] == [m["skipped"] for m in full[0]],
              f"f16 {split[0]}: gradients within {error:.2e} of the full "
              f"batch (tolerance {ACCUMULATION_TOLERANCE}), same skips")
    for remat, split in (("sqrt", []), ("blocks", ["--accumulation-steps=2"])):
        reference = full if not split else run(
            gacc, model, work, "f16-k2", base + split)
        _, grads, ckpt = run(gacc, model, work, f"f16-{remat}",
                             base + split + [f"--remat={remat}"])
        check(same(grads, reference[1], grads) and
              same(ckpt, reference[2], ckpt),
              f"f16 --remat={remat} {' '.join(split)}: gradients and "
              f"checkpoint bitwise equal to no remat")


def grad_scaler(scale, skipped, interval):
    """The scales torch.amp.GradScaler uses, given which steps overflowed."""
    scales, tracker = [], 0
    for overflow in skipped:
        scales.append(scale)
        if overflow:
            scale, tracker = scale * 0.5, 0
        else:
            tracker += 1
            if tracker == interval:
                scale, tracker = scale * 2.0, 0
    return scales


def overflow(gacc, examples, parity, work):
    model = with_step_attributes(
        os.path.join(examples, "mlp.mlir"), os.path.join(work, "mlp_f16.mlir"),
        "precision f16 loss_scale #gacc.loss_scale<growth_interval = 4>")
    data = [f"--data={parity}/mlp_batch.safetensors"]
    _, _, before = run(gacc, model, work, "ovf-4", data + [
        f"--init={parity}/mlp_init.safetensors", "--steps=4"])
    check(int(before["optimizer_step"]) == 4 and
          float(before["loss_scale"]) == 2.0 ** 17,
          "4 good steps: scale grew once to 2^17, 4 optimizer steps")
    # The scale and its count of good steps are state: resuming continues
    # exactly (the scale grows again at step 8).
    _, _, resumed = run(gacc, model, work, "ovf-4+4", data + [
        f"--resume={os.path.join(work, 'ovf-4.ckpt')}", "--steps=8"])
    _, _, straight = run(gacc, model, work, "ovf-8", data + [
        f"--init={parity}/mlp_init.safetensors", "--steps=8"])
    check(same(resumed, straight, straight) and
          float(straight["loss_scale"]) == 2.0 ** 18,
          "4 steps, save, resume 4 steps: checkpoint bitwise equal to 8 "
          "steps (scale 2^18)")
    injected = dict(before)
    injected["loss_scale"] = np.array(2.0 ** 40, dtype=np.float32)
    injected_path = os.path.join(work, "injected.ckpt")
    tensorfiles.save(injected_path, injected, CHECKPOINT)

    metrics, _, after = run(gacc, model, work, "ovf-5", data + [
        f"--resume={injected_path}", "--steps=5"])
    kept = [k for k in before if k not in
            ("step", "optimizer_step", "loss_scale", "loss_scale.growth_tracker")]
    check(metrics[0]["skipped"] and metrics[0]["grad_norm"] is None and
          same(after, before, kept),
          "injected overflow: step skipped, parameters and optimizer state "
          "bitwise unchanged")
    check(float(after["loss_scale"]) == 2.0 ** 39 and
          int(after["optimizer_step"]) == 4 and int(after["step"]) == 5,
          "injected overflow: scale halved to 2^39, optimizer step stays 4, "
          "step 5")

    metrics, _, _ = run(gacc, model, work, "ovf-40", data + [
        f"--resume={injected_path}", "--steps=44"])
    skipped = [m["skipped"] for m in metrics]
    scales = [m["loss_scale"] for m in metrics]
    first_good = skipped.index(False)
    check(scales == grad_scaler(2.0 ** 40, skipped, 4),
          f"scales follow GradScaler's rule: {first_good} skipped steps down "
          f"to {scales[first_good]:g}, then {sorted(set(scales[first_good:]))}")
    check(max(scales[first_good:]) > scales[first_good],
          "the scale grows back after the overflow")
    check(all(s == (m["grad_norm"] is None) for s, m in zip(skipped, metrics)),
          "skipped exactly the steps with a non-finite gradient norm")

    # The first update after the skips is Adam's 5th, as without them.
    _, _, direct = run(gacc, model, work, "ovf-direct", data + [
        f"--resume={os.path.join(work, 'ovf-4.ckpt')}", "--steps=5"])
    _, _, skipped_then = run(gacc, model, work, "ovf-first", data + [
        f"--resume={injected_path}", f"--steps={4 + first_good + 1}"])
    params = [k for k in before if k.endswith(("weight", "bias"))]
    update = {k: direct[k] - before[k] for k in params}
    error = relative({k: skipped_then[k] - before[k] for k in params}, update)
    check(error <= 1e-2,
          f"first update after {first_good} skips within {error:.2e} of an "
          f"update without them (Adam's step count excludes skips)")


def collapse(gacc, examples, parity, work):
    batch = tensorfiles.load(f"{parity}/mlp_batch.safetensors")
    batch = dict(batch, image=batch["image"] * np.float32(1e6))
    huge = os.path.join(work, "huge_batch.safetensors")
    tensorfiles.save(huge, batch)
    model = with_step_attributes(
        os.path.join(examples, "mlp.mlir"),
        os.path.join(work, "mlp_f16_small.mlir"),
        "precision f16 loss_scale #gacc.loss_scale<init = 4.0>")
    result, paths = run(gacc, model, work, "collapse",
                        [f"--data={huge}", "--steps=10"], expect_failure=True)
    check(result.returncode != 0 and
          "the loss scale collapsed at step 3" in result.stderr and
          "nothing was saved" in result.stderr and
          not os.path.exists(paths["ckpt"]),
          "inputs that overflow f16: 'the loss scale collapsed at step 3', "
          "no checkpoint")


def autocast_parity(gacc, examples, parity, work):
    import torch
    import torch.nn.functional as F
    params = {k: torch.tensor(v).requires_grad_(True) for k, v in
              tensorfiles.load(f"{parity}/mlp_init.safetensors").items()}
    batch = {k: torch.tensor(v) for k, v in
             tensorfiles.load(f"{parity}/mlp_batch.safetensors").items()}

    def torch_step(autocast):
        for p in params.values():
            p.grad = None
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            h = F.relu(F.linear(batch["image"], params["fc1.weight"],
                                params["fc1.bias"]))
            logits = F.linear(h, params["fc2.weight"], params["fc2.bias"])
            loss = F.cross_entropy(logits, batch["label"].long())
        loss.backward()
        return loss.item(), {k: p.grad.numpy().copy()
                             for k, p in params.items()}

    _, f32_grads = torch_step(False)
    torch_loss, torch_grads = torch_step(True)
    metrics, grads, _ = run(gacc, os.path.join(examples, "mlp.mlir"), work,
                            "autocast", [
                                f"--data={parity}/mlp_batch.safetensors",
                                f"--init={parity}/mlp_init.safetensors",
                                "--steps=1", "--precision=bf16"])
    loss_error = abs(metrics[0]["loss"] - torch_loss) / torch_loss
    to_torch, to_f32 = relative(grads, torch_grads), relative(grads, f32_grads)
    check(loss_error <= 1e-3 and to_torch <= 2e-2 and to_torch < to_f32 / 4,
          f"MLP bf16 against torch.autocast: loss within {loss_error:.1e}, "
          f"gradients within {to_torch:.2e} (f32's: {to_f32:.2e})")


def main():
    gacc, examples, parity, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    curves(gacc, examples, parity, work)
    autocast_parity(gacc, examples, parity, work)
    composition(gacc, examples, parity, work)
    overflow(gacc, examples, parity, work)
    collapse(gacc, examples, parity, work)
    if not ok:
        sys.exit(1)
    print("MIXED PRECISION OK")


if __name__ == "__main__":
    main()
