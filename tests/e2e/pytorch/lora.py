"""gacc.from_torch(..., lora=...) against LoRA written by hand in PyTorch,
as peft applies it: every parameter of a nanoGPT-style GPT frozen, the
attention's c_attn adapted (y = x·Wᵀ + b + (alpha/r)·(x·Aᵀ)·Bᵀ, A from
gacc's initialization, B zeros), AdamW on the adapters; in f64, 8 steps.
The losses and the merged state_dict (W + (alpha/r)·B·A under the
module's names, loaded strictly) must agree within 1e-10 relative; the
frozen parameters must not move."""
import copy
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402
import gacc  # noqa: E402

TOLERANCE = 1e-10
RANK, ALPHA, STEPS = 4, 8.0, 8
TARGETS = r".*attn\.c_attn\.weight"
torch.manual_seed(0)
torch.set_num_threads(2)


class LoraLinear(nn.Module):
    def __init__(self, base, a):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(a.clone())
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, RANK,
                                               dtype=a.dtype))

    def forward(self, x):
        return self.base(x) + (ALPHA / RANK) * (x @ self.lora_A.T) @ \
            self.lora_B.T

    def merged(self):
        return self.base.weight + (ALPHA / RANK) * self.lora_B @ self.lora_A


def compare(tag, ours, reference):
    ours, reference = torch.as_tensor(ours).double(), reference.double()
    error = ((ours - reference).norm() /
             reference.norm().clamp_min(1e-30)).item()
    ok = ours.shape == reference.shape and error <= TOLERANCE
    print(f"{'ok' if ok else 'MISMATCH'} {tag}: relative error {error:.2e}")
    return ok


config = models.GPTConfig(n_layer=2, n_embd=64, block_size=32)
module = models.GPT(config).double()
initial = copy.deepcopy(module.state_dict())
tokens = torch.randint(0, config.vocab_size, (4, config.block_size))
targets = torch.randint(0, config.vocab_size, (4, config.block_size))
opt = torch.optim.AdamW(module.parameters(), lr=1e-2, weight_decay=0.01)
trainer = gacc.from_torch(module, {"idx": tokens}, targets={"targets": targets},
                          optimizer=opt, loss_output=1,
                          lora={"rank": RANK, "alpha": ALPHA,
                                "targets": TARGETS})

# The reference: the same module with hand-written adapters.
reference = models.GPT(config).double()
reference.load_state_dict(initial)
for p in reference.parameters():
    p.requires_grad_(False)
values = trainer.trainer.parameters()
adapters = []
for i, block in enumerate(reference.transformer.h):
    name = f"transformer.h.{i}.attn.c_attn.weight"
    block.attn.c_attn = LoraLinear(block.attn.c_attn,
                                   torch.from_numpy(values[name + ".lora_A"]))
    adapters += [block.attn.c_attn.lora_A, block.attn.c_attn.lora_B]
reference_opt = torch.optim.AdamW(adapters, lr=1e-2, weight_decay=0.01)

ok = True
for step in range(STEPS):
    ours = trainer.step({"idx": tokens, "targets": targets})["loss"]
    reference_opt.zero_grad()
    loss = reference(tokens, targets)[1]
    loss.backward()
    reference_opt.step()
    ok &= compare(f"loss of step {step + 1}", torch.tensor(ours, dtype=torch.float64),
                  loss.detach())

state = trainer.state_dict()
module.load_state_dict(state, strict=True)
expected = reference.state_dict()
for i, block in enumerate(reference.transformer.h):
    prefix = f"transformer.h.{i}.attn.c_attn."
    expected[prefix + "weight"] = block.attn.c_attn.merged().detach()
    expected[prefix + "bias"] = block.attn.c_attn.base.bias
for name, value in state.items():
    if name.endswith(".attn.bias"):
        continue  # the causal mask buffer
    key = name.replace("c_attn.", "c_attn.base.") \
        if name not in expected else name
    ok &= compare(f"state_dict {name}", value, expected[key])
    if "c_attn.weight" not in name:
        same = torch.equal(value, initial[name])
        if not same:
            print(f"MISMATCH {name} moved, but it is frozen")
        ok &= same
print("PARITY OK" if ok else "PARITY MISMATCH")
sys.exit(0 if ok else 1)
