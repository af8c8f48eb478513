"""PyTorch's samples/s for the examples on the GPU, the peer of
gacc-train-artifact in bench/gpu/gpu_bench.sh: the same model (the
definitions of tests/e2e/parity.py), batch and AdamW, in f32 or with bf16
autocast, timed after 3 warm-up steps (CUDA synchronized). Like
gacc-train-artifact's steps, each uploads the batch from host memory and
reads the loss back.

    torch_peer.py {mlp,gpt,gpt2,resnet18} {f32,bf16} STEPS

`gpt2` is GPT-mini's definition at GPT-2-small's shapes (vocab 50257,
context 1024, width 768, 12 heads, 12 layers, batch 8), as
bench/gpu/peer_bench.sh gpt2 compiles it, with attention through
scaled_dot_product_attention (flash attention where PyTorch picks it).
`resnet18` is torchvision's (10 classes, 32x32 images, batch 256, SGD with
momentum 0.9 and weight decay 5e-4), as bench/gpu/make_resnet.py exports
it; channels-first, as gacc runs it.
"""
import functools
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import parity  # noqa: E402


model, precision, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if model == "gpt2":
    parity.V, parity.T, parity.C, parity.H, parity.L, parity.B = (
        50257, 1024, 768, 12, 12, 8)
    _, make_params, make_batch, _, adamw, clip = parity.MODELS["gpt"]
    loss_fn = functools.partial(parity.gpt_loss, sdpa=True)
elif model != "resnet18":
    _, make_params, make_batch, loss_fn, adamw, clip = parity.MODELS[model]
device = torch.device("cuda")
if model == "resnet18":
    import torch.nn.functional as F
    import torchvision
    torch.manual_seed(0)
    module = torchvision.models.resnet18(num_classes=10).to(device)
    params = dict(module.named_parameters())
    host_batch = {"x": torch.randn(256, 3, 32, 32),
                  "y": torch.randint(0, 10, (256,))}
    optimizer = torch.optim.SGD(module.parameters(), lr=0.05, momentum=0.9,
                                weight_decay=5e-4)
    clip = None

    def loss_fn(params, batch):
        return F.cross_entropy(module(batch["x"]), batch["y"])
else:
    params = {k: v.to(device).requires_grad_(True)
              for k, v in make_params().items()}
    host_batch = make_batch()
    optimizer = torch.optim.AdamW(params.values(), **adamw)
samples = next(iter(host_batch.values())).shape[0]
for step in range(steps):
    if step == 3:
        torch.cuda.synchronize()
        start = time.perf_counter()
    batch = {k: v.to(device) for k, v in host_batch.items()}
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16,
                        enabled=precision == "bf16"):
        loss = loss_fn(params, batch)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(params.values(), clip)
    optimizer.step()
    loss.item()
torch.cuda.synchronize()
print(f"samples_per_s {samples * (steps - 3) / (time.perf_counter() - start):.1f}")
print(f"memory_mib peak {torch.cuda.max_memory_allocated() / 2**20:.1f}")
