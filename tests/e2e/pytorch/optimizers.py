"""torch.optim's optimizers through gacc.from_torch, in f64, 20 steps each
against PyTorch's own: Adam with its L2 weight decay, AdamW, SGD with
nesterov momentum, each with two parameter groups (the biases without
weight decay, as nanoGPT and HF group them). The final state_dict must
agree within 1e-12 relative."""
import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import gacc

torch.manual_seed(0)
torch.set_num_threads(2)
module = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)).double()
x = torch.randn(32, 8, dtype=torch.float64)
y = torch.randint(0, 3, (32,))


def groups(m):
    return [{"params": [m[0].weight, m[2].weight]},
            {"params": [m[0].bias, m[2].bias], "weight_decay": 0.0}]


ok = True
for kind, options in [
        ("Adam", dict(lr=1e-2, weight_decay=0.05)),
        ("AdamW", dict(lr=1e-2, weight_decay=0.1, betas=(0.8, 0.95))),
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True,
                     weight_decay=1e-3))]:
    ours, theirs = copy.deepcopy(module), copy.deepcopy(module)
    make = getattr(torch.optim, kind)
    trainer = gacc.from_torch(ours, {"input": x}, loss="cross_entropy",
                              targets={"y": y},
                              optimizer=make(groups(ours), **options))
    optimizer = make(groups(theirs), **options)
    for _ in range(20):
        trainer.step({"input": x, "y": y})
        optimizer.zero_grad()
        F.cross_entropy(theirs(x), y).backward()
        optimizer.step()
    state = trainer.state_dict()
    worst = max(((state[k] - v).norm() / v.norm()).item()
                for k, v in theirs.state_dict().items())
    good = worst <= 1e-12
    ok &= good
    print(f"{'ok' if good else 'MISMATCH'}: {kind} with two groups, 20 "
          f"steps: worst relative difference {worst:.1e}")
print("PARITY OK" if ok else "PARITY FAILED")
sys.exit(0 if ok else 1)
