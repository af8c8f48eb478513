#!/usr/bin/env python3
"""Compile time and start time at depth: GPT-mini width and GPT-2-small width.

For each width (GPT-mini: vocab 96, context 64, width 128, 4 heads, batch 16;
GPT-2-small: vocab 50257, context 256, width 768, 12 heads, batch 4) and
depth (2, 6, 12 layers), writes the model with examples/make_gpt.py and
times `gacc compile` cold (an empty compile cache; the median of --repeats
compiles, the depths taking turns) and from the cache, then
the start of the artifact: `gacc run MODEL.gacc --steps 1`'s wall time less
the step it reports. Prints a table and the ratio of 12 to 2 layers.

    python3 bench/compile_bench.py [--gacc build/bin/gacc] [--depths 2,6,12]
                                   [--repeats 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WIDTHS = {
    "GPT-mini": ["--vocab", "96", "--context", "64", "--width", "128",
                 "--heads", "4", "--batch", "16"],
    "GPT-2-small": ["--vocab", "50257", "--context", "256", "--width", "768",
                    "--heads", "12", "--batch", "4"],
}


def timed(command, env):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    return elapsed, result.stdout + result.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gacc", default=os.path.join(ROOT, "build/bin/gacc"))
    parser.add_argument("--depths", default="2,6,12")
    parser.add_argument("--widths", default=",".join(WIDTHS))
    parser.add_argument("--repeats", type=int, default=5,
                        help="cold compiles of each depth (the median counts)")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    print(f"{'model':<12} {'layers':>6} {'cold s':>8} {'cached s':>9} "
          f"{'start s':>8}")
    with tempfile.TemporaryDirectory() as work:
        for name in args.widths.split(","):
            models = {}
            for layers in depths:
                models[layers] = os.path.join(work, f"{name}-{layers}.mlir")
                with open(models[layers], "w") as out:
                    subprocess.run(
                        [sys.executable, os.path.join(ROOT, "examples/make_gpt.py"),
                         "--layers", str(layers)] + WIDTHS[name],
                        stdout=out, check=True)

            def compile_in(layers, cache):
                env = dict(os.environ, GACC_CACHE_DIR=os.path.join(work, cache))
                env.pop("GACC_DISABLE_CACHE", None)
                artifact = os.path.join(work, f"{name}-{layers}.gacc")
                command = [args.gacc, "compile", models[layers], "-o", artifact]
                return command, env, artifact

            # Cold compiles into empty caches, the depths taking turns so
            # that a busy moment of the machine slows them alike.
            cold = {layers: [] for layers in depths}
            for repeat in range(args.repeats):
                for layers in depths:
                    command, env, _ = compile_in(
                        layers, f"cache-{name}-{layers}-{repeat}")
                    cold[layers].append(timed(command, env)[0])
            median = {layers: statistics.median(cold[layers])
                      for layers in depths}
            for layers in depths:
                command, env, artifact = compile_in(
                    layers, f"cache-{name}-{layers}-0")
                cached, _ = timed(command, env)
                wall, output = timed(
                    [args.gacc, "run", artifact, "--steps", "1"], env)
                step = re.search(r"trained 1 steps in ([0-9.]+) s", output)
                start = wall - float(step.group(1)) if step else float("nan")
                print(f"{name:<12} {layers:>6} {median[layers]:>8.2f} "
                      f"{cached:>9.2f} {start:>8.2f}", flush=True)
            if 2 in median and 12 in median:
                print(f"{name}: 12 layers / 2 layers = "
                      f"{median[12] / median[2]:.2f}x (medians of "
                      f"{args.repeats} cold compiles)", flush=True)


if __name__ == "__main__":
    main()
