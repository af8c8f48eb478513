#!/usr/bin/python3
"""The static memory plan against the runtime's measurement.

For the MLP and GPT-mini at several global batches B and micro-batches m
(even and uneven splits): `gacc plan --measure --json` compiles the step,
runs it once and reports the predicted and the measured peak. Checks that
they agree within 5%, that the plan placed every temporary (no heap), and
that the activations the backward reads fall as 1/K with K accumulation
steps. Then --memory-budget on GPT-mini: the plan it picks fits, and one
accumulation step fewer would not. Then mixed precision, both sides of the
seed notes' point, predicted as measured: GPT-mini at batch 64 needs less
memory in bf16 and f16 (2-byte activations), a wide MLP at batch 8 does not
(its state is 16 bytes per parameter either way: 16-bit weights and
gradients, f32 master weights and AdamW moments).
Prints one row per configuration, then PLAN OK.

usage: memory_plan.py GACC EXAMPLES_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys


def mlp_with_batch(examples, batch, path):
    text = open(os.path.join(examples, "mlp.mlir")).read()
    with open(path, "w") as f:
        f.write(text.replace("tensor<64x", f"tensor<{batch}x")
                .replace("tensor<64xi32>", f"tensor<{batch}xi32>")
                .replace("batch_size 64", f"batch_size {batch}"))


def gpt_with_batch(examples, batch, path):
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(examples, "make_gpt.py"),
                        "--batch", str(batch)], stdout=f, check=True)


def plan(gacc, model, *flags):
    out = subprocess.run([gacc, "plan", model, "--json"] + list(flags),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def check_budgets(gacc, model):
    """The largest micro-batch that fits: K steps fit, K - 1 do not."""
    failures = 0
    for budget in (22 << 20, 30 << 20, 45 << 20, 1 << 30):
        p = plan(gacc, model, f"--memory-budget={budget}")
        k = p["accumulation_steps"]
        fewer = (plan(gacc, model, f"--accumulation-steps={k - 1}")
                 if k > 1 else None)
        print(f"budget {budget:>10d}: micro-batch {p['micro_batch_size']}, "
              f"K {k}, peak {p['peak']}"
              + (f"; K {k - 1} would need {fewer['peak']}" if fewer else ""))
        if p["peak"] > budget or (fewer and fewer["peak"] <= budget):
            print(f"MISMATCH budget {budget}: not the largest micro-batch "
                  "that fits")
            failures += 1
    return failures


def check_mixed_precision(gacc, examples, work):
    wide = os.path.join(work, "wide_mlp.mlir")
    with open(wide, "w") as f:
        subprocess.run([sys.executable, os.path.join(examples, "make_mlp.py"),
                        "--layers=4", "--width=2048", "--batch=8"],
                       stdout=f, check=True)
    gpt = os.path.join(work, "gpt_b64.mlir")
    gpt_with_batch(examples, 64, gpt)
    failures = 0
    plans = {}
    for name, model, flags in (("gpt b64", gpt, []),
                               ("gpt b64 m16", gpt, ["--micro-batch=16"]),
                               ("wide b8", wide, [])):
        for precision in ("f32", "bf16", "f16"):
            p = plan(gacc, model, "--measure", f"--precision={precision}",
                     *flags)
            plans[name, precision] = p
            error = (p["measured_peak"] - p["peak"]) / p["measured_peak"]
            print(f"{name:11} {precision:4} activations {p['activations']:10d} "
                  f"weight copies {p['weight_copies']:10d} peak {p['peak']:10d} "
                  f"measured {p['measured_peak']:10d} {error:+7.2%}")
            if abs(error) > 0.05 or p["heap"] or p["measured_heap"]:
                print(f"MISMATCH {name} {precision}: plan off the measurement")
                failures += 1
    for precision in ("bf16", "f16"):
        small, base = plans["gpt b64", precision], plans["gpt b64", "f32"]
        if not (small["peak"] < 0.8 * base["peak"] and
                small["activations"] < 0.75 * base["activations"]):
            print(f"MISMATCH gpt b64 {precision}: no saving in 16 bits")
            failures += 1
        large, base = plans["wide b8", precision], plans["wide b8", "f32"]
        n = large["parameter_elements"]
        states = (large["parameters"], large["gradients"],
                  large["optimizer_state"], large["weight_copies"])
        if states != (2 * n, 2 * n, 12 * n, 0) or large["peak"] < base["peak"]:
            print(f"MISMATCH wide b8 {precision}: state {states} is not "
                  f"2 + 2 + 12 bytes per parameter, or the peak fell")
            failures += 1
    print(f"mixed precision: GPT-mini b64 peak x"
          f"{plans['gpt b64', 'bf16']['peak'] / plans['gpt b64', 'f32']['peak']:.2f}"
          f" in bf16, wide MLP b8 x"
          f"{plans['wide b8', 'bf16']['peak'] / plans['wide b8', 'f32']['peak']:.2f}")
    return failures


def main():
    gacc, examples, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    configs = [("mlp", mlp_with_batch, 64, (64, 32, 16, 8, 24)),
               ("mlp", mlp_with_batch, 256, (256, 64)),
               ("gpt", gpt_with_batch, 16, (16, 8, 2, 5)),
               ("gpt", gpt_with_batch, 32, (32, 8))]
    failures = 0
    print(f"{'model':5} {'B':>4} {'m':>4} {'K':>3} {'activations':>12} "
          f"{'workspace':>12} {'predicted':>12} {'measured':>12} {'error':>7}")
    for name, make, batch, micros in configs:
        model = os.path.join(work, f"{name}_b{batch}.mlir")
        make(examples, batch, model)
        full = None
        for micro in micros:
            p = plan(gacc, model, "--measure", f"--micro-batch={micro}")
            full = full or p
            error = (p["measured_peak"] - p["peak"]) / p["measured_peak"]
            print(f"{name:5} {batch:4d} {micro:4d} {p['accumulation_steps']:3d} "
                  f"{p['activations']:12d} {p['workspace']:12d} "
                  f"{p['peak']:12d} {p['measured_peak']:12d} {error:+7.2%}")
            problems = []
            if abs(error) > 0.05:
                problems.append("predicted peak off by more than 5%")
            if p["measured_heap"] or p["heap"]:
                problems.append("temporaries left to the heap")
            if batch % micro == 0:
                k = batch // micro
                expected = full["activations"] / k
                if abs(p["activations"] - expected) > 0.05 * expected:
                    problems.append(f"activations not ~1/{k} of the full batch's")
            for problem in problems:
                print(f"MISMATCH {name} B={batch} m={micro}: {problem}")
                failures += 1
    failures += check_budgets(gacc, os.path.join(examples, "gpt_mini.mlir"))
    failures += check_mixed_precision(gacc, examples, work)
    if failures:
        sys.exit(1)
    print("PLAN OK")


if __name__ == "__main__":
    main()
