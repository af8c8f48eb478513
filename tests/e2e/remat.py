#!/usr/bin/python3
"""Rematerialization changes memory, never results.

For the MLP, GPT-mini with dropout and a 16-layer MLP with dropout, every
policy (blocks where the model marks blocks, sqrt, matmuls, and budget at
sqrt's peak on the 16-layer MLP), with and
without gradient accumulation: the first step's gradients and the
parameters after 3 steps are bitwise those of `--remat none` (dropout
recomputes the same bits), and the activations the backward keeps shrink.
The `budget` policy on GPT-mini meets a sweep of budgets (planned and
measured), recomputes no more than `sqrt` at `sqrt`'s peak, keeps the
gradients, and names the least feasible budget when given less. Then
`sqrt` on MLPs of 4, 16 and 64 layers: its kept activations grow as about
√n while `none`'s grow as n. Prints one line per check and REMAT OK.

usage: remat.py GACC EXAMPLES_DIR WORK_DIR
"""
import filecmp
import json
import os
import subprocess
import sys


def generate(examples, script, flags, path):
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(examples, script)] + flags,
                       stdout=f, check=True)
    return path


def run(gacc, model, work, tag, flags):
    grads = os.path.join(work, f"{tag}.grads.safetensors")
    params = os.path.join(work, f"{tag}.params.safetensors")
    subprocess.run([gacc, "run", model, "--steps=3", f"--dump-grads={grads}",
                    f"--save={params}"] + flags, check=True,
                   stdout=subprocess.DEVNULL)
    return grads, params


def plan(gacc, model, flags):
    out = subprocess.run([gacc, "plan", model, "--json"] + flags, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    gacc, examples, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    models = {
        "mlp": (os.path.join(examples, "mlp.mlir"), ["sqrt", "matmuls"]),
        "gpt-dropout": (generate(examples, "make_gpt.py", ["--dropout", "0.1"],
                                 os.path.join(work, "gpt_dropout.mlir")),
                        ["blocks", "sqrt", "matmuls"]),
        "deep-mlp": (generate(examples, "make_mlp.py",
                              ["--layers", "16", "--dropout", "0.1",
                               "--batch", "256"],
                              os.path.join(work, "deep_mlp.mlir")),
                     ["blocks", "sqrt", "matmuls", "budget"]),
    }
    failures = 0
    for name, (model, policies) in models.items():
        for accumulation in ([], ["--accumulation-steps=2"]):
            suffix = "-k2" if accumulation else ""
            reference = run(gacc, model, work, f"{name}{suffix}-none",
                            ["--remat=none"] + accumulation)
            kept = plan(gacc, model, ["--remat=none"] + accumulation)
            for policy in policies:
                flags = [f"--remat={policy}"] + accumulation
                if policy == "budget":  # at sqrt's planned peak
                    sqrt_peak = plan(gacc, model, ["--remat=sqrt"]
                                     + accumulation)["peak"]
                    flags.append(f"--remat-budget={sqrt_peak}")
                ours = run(gacc, model, work, f"{name}{suffix}-{policy}", flags)
                p = plan(gacc, model, flags)
                same = all(filecmp.cmp(a, b, shallow=False)
                           for a, b in zip(ours, reference))
                # The 2-layer MLP is too small for sqrt to cut anything; a
                # budget that keeping everything meets recomputes nothing.
                if policy == "budget":
                    smaller = p["peak"] <= sqrt_peak
                elif name == "mlp":
                    smaller = p["activations"] <= kept["activations"]
                else:
                    smaller = p["activations"] < kept["activations"]
                status = "ok" if same and smaller else "MISMATCH"
                failures += status != "ok"
                print(f"{status} {name}{suffix} {policy}: gradients and "
                      f"parameters {'bitwise equal' if same else 'DIFFER'}; "
                      f"activations {p['activations']} of "
                      f"{kept['activations']}, peak {p['peak']} of "
                      f"{kept['peak']}, recompute "
                      f"{p['recompute_cost'] / p['forward_cost']:.2f} of "
                      "the forward")

    # The budget policy on GPT-mini: a sweep of peak budgets, each met as
    # planned and as measured; at sqrt's peak it recomputes no more than
    # sqrt; the same gradients; an impossible budget names the least.
    gpt = os.path.join(examples, "gpt_mini.mlir")
    sqrt = plan(gacc, gpt, ["--remat=sqrt"])
    for budget in (34 << 20, sqrt["peak"], 44 << 20):
        p = plan(gacc, gpt, ["--remat=budget", f"--remat-budget={budget}",
                             "--measure"])
        ok = p["peak"] <= budget and p["measured_peak"] <= budget
        if budget == sqrt["peak"]:
            ok &= p["recompute_cost"] <= sqrt["recompute_cost"]
        failures += not ok
        print(f"{'ok' if ok else 'MISMATCH'} budget {budget}: planned peak "
              f"{p['peak']}, measured {p['measured_peak']}, recompute "
              f"{p['recompute_cost'] / p['forward_cost']:.3f} of the "
              f"forward (sqrt: {sqrt['recompute_cost'] / sqrt['forward_cost']:.3f}"
              f" at {sqrt['peak']})")
    ours = run(gacc, gpt, work, "gpt-budget",
               ["--remat=budget", f"--remat-budget={36 << 20}"])
    reference = run(gacc, gpt, work, "gpt-none", ["--remat=none"])
    same = all(filecmp.cmp(a, b, shallow=False)
               for a, b in zip(ours, reference))
    failures += not same
    print(f"{'ok' if same else 'MISMATCH'} budget gradients and parameters "
          f"{'bitwise equal' if same else 'DIFFER'}")
    error = subprocess.run([gacc, "plan", gpt, "--remat=budget",
                            "--remat-budget=20MiB"], capture_output=True,
                           text=True)
    ok = (error.returncode != 0 and "no rematerialization schedule fits in "
          "20.0 MiB: the least memory any needs is" in error.stderr)
    failures += not ok
    print(f"{'ok' if ok else 'MISMATCH'} impossible budget: "
          f"{error.stderr.strip().splitlines()[0]}")

    # Kept activations against depth.
    kept = {}
    for layers in (4, 16, 64):
        model = generate(examples, "make_mlp.py",
                         ["--layers", str(layers), "--batch", "256"],
                         os.path.join(work, f"mlp{layers}.mlir"))
        kept[layers] = {policy: plan(gacc, model, [f"--remat={policy}"])
                        ["activations"] for policy in ("none", "sqrt")}
        print(f"depth {layers}: activations none {kept[layers]['none']}, "
              f"sqrt {kept[layers]['sqrt']}")
    for policy, low, high in (("none", 3.5, 4.5), ("sqrt", 1.5, 2.7)):
        growth = kept[64][policy] / kept[16][policy]
        status = "ok" if low <= growth <= high else "MISMATCH"
        failures += status != "ok"
        print(f"{status} {policy}: 16 -> 64 layers multiplies activations by "
              f"{growth:.2f} (expected {low}-{high})")
    if failures:
        sys.exit(1)
    print("REMAT OK")


if __name__ == "__main__":
    main()
