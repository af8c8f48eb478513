#!/usr/bin/python3
"""PyTorch modules trained through gacc.from_torch against PyTorch eager, in
one run: samples/s of a full step (forward, backward, optimizer) for the
same module, batch, optimizer and thread count, and their ratio. The two
take turns in blocks of five steps, so that both medians come from the
same minutes of a machine whose speed drifts.

Models (tests/e2e/pytorch/models.py): torchvision's resnet18 (10 classes,
32x32 images, SGD with momentum) and the nanoGPT-style GPT (AdamW with two
parameter groups, clipping) at GPT-mini width (vocab 96, context 64, width
128, 4 heads, 2 layers, batch 16) and at GPT-2-small width (vocab 50257,
context 256, width 768, 12 heads, --gpt2-layers layers, batch 4).

With --precisions f32,bf16, each model also trains in bf16 mixed precision
(gacc's `precision="bf16"`) against PyTorch's CPU autocast
(`torch.autocast("cpu", dtype=torch.bfloat16)`), and the bf16 rows give
gacc's rate against PyTorch's f32 step too.

usage: PYTHONPATH=build/python bench/torch_bench.py [--threads 2]
           [--steps 10] [--models resnet18,gpt-mini,gpt2-small]
           [--gpt2-layers 12] [--precisions f32]
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "e2e", "pytorch"))
import models  # noqa: E402
import gacc  # noqa: E402


def timed_alternately(steps, *step_functions, block=5, warmup=2):
    """The median seconds of each function's call, the functions taking
    turns in blocks of `block` calls: this VM's speed drifts by up to 1.7x
    within minutes, and a ratio of medians taken minutes apart moved with
    it. Each block starts with an untimed call, so that the other side's
    idle threads (gacc's pool, PyTorch's OpenMP team), still spinning on
    the cores, cost neither side; the timed calls follow one another as a
    training loop's do."""
    for _ in range(warmup):
        for step in step_functions:
            step()
    times = [[] for _ in step_functions]
    for _ in range(max(1, -(-steps // block))):
        for step, spent in zip(step_functions, times):
            step()
            for _ in range(block):
                start = time.perf_counter()
                step()
                spent.append(time.perf_counter() - start)
    return [statistics.median(spent) for spent in times]


def resnet18(batch):
    module = models.resnet18()
    g = torch.Generator().manual_seed(0)
    data = {"x": torch.randn(batch, 3, 32, 32, generator=g),
            "y": torch.randint(0, 10, (batch,), generator=g)}
    make_optimizer = lambda m: torch.optim.SGD(  # noqa: E731
        m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    keywords = dict(loss="cross_entropy", targets={"y": data["y"]})
    loss = lambda m: F.cross_entropy(m(data["x"]), data["y"])  # noqa: E731
    return module, data, {"x": data["x"]}, make_optimizer, keywords, loss


def gpt(batch, **config):
    config = models.GPTConfig(**config)
    module = models.GPT(config)
    g = torch.Generator().manual_seed(0)
    shape = (batch, config.block_size)
    data = {"idx": torch.randint(0, config.vocab_size, shape, generator=g),
            "targets": torch.randint(0, config.vocab_size, shape,
                                     generator=g)}
    make_optimizer = lambda m: m.configure_optimizers(  # noqa: E731
        0.1, 6e-4, (0.9, 0.95), 1e-8)
    keywords = dict(loss_output=1, max_grad_norm=1.0)

    def loss(m):
        return m(**data)[1]
    return module, data, data, make_optimizer, keywords, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--models", default="resnet18,gpt-mini,gpt2-small")
    parser.add_argument("--gpt2-layers", type=int, default=12)
    parser.add_argument("--precisions", default="f32",
                        help="f32, bf16 or both (f32 first: the bf16 rows "
                        "compare with its PyTorch step too)")
    args = parser.parse_args()
    precisions = sorted(set(args.precisions.split(",")), reverse=True)
    if not set(precisions) <= {"f32", "bf16"}:
        parser.error("--precisions takes f32 and bf16")
    torch.set_num_threads(args.threads)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    cases = {
        "resnet18": (32, lambda: resnet18(32)),
        "gpt-mini": (16, lambda: gpt(16)),
        "gpt2-small": (4, lambda: gpt(
            4, vocab_size=50257, block_size=256, n_embd=768, n_head=12,
            n_layer=args.gpt2_layers)),
    }
    print(f"{'model':12} {'prec':>4} {'batch':>5} {'compile s':>9} "
          f"{'pytorch/s':>10} {'gacc/s':>8} {'ratio':>6} {'vs f32':>6}")
    for name in args.models.split(","):
        batch, make = cases[name]
        torch_f32_s = None
        for precision in precisions:
            torch.manual_seed(0)
            module, data, inputs, make_optimizer, keywords, loss = make()
            module.train()
            start = time.perf_counter()
            trainer = gacc.from_torch(
                module, inputs, optimizer=make_optimizer(module),
                precision=precision,
                **keywords)
            compile_s = time.perf_counter() - start

            optimizer = make_optimizer(module)
            autocast = (contextlib.nullcontext() if precision == "f32" else
                        torch.autocast("cpu", dtype=torch.bfloat16))

            def torch_step():
                optimizer.zero_grad(set_to_none=True)
                with autocast:
                    value = loss(module)
                value.backward()
                if keywords.get("max_grad_norm"):
                    torch.nn.utils.clip_grad_norm_(
                        module.parameters(), keywords["max_grad_norm"])
                optimizer.step()
            gacc_s, torch_s = timed_alternately(
                args.steps, lambda: trainer.step(data), torch_step)
            del trainer
            if precision == "f32":
                torch_f32_s = torch_s
            against_f32 = (f"{torch_f32_s / gacc_s:6.2f}" if torch_f32_s
                           else f"{'-':>6}")
            print(f"{name:12} {precision:>4} {batch:5d} {compile_s:9.1f} "
                  f"{batch / torch_s:10.1f} {batch / gacc_s:8.1f} "
                  f"{torch_s / gacc_s:6.2f} {against_f32}", flush=True)


if __name__ == "__main__":
    main()
