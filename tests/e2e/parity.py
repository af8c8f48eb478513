"""PyTorch parity of examples/mlp.mlir and examples/gpt_mini.mlir.

`gpt-padded` is GPT-mini with variable-length sequences: make_gpt.py
--padding-mask adds a mask input that hides padded keys from attention, and
padded positions have ignored targets.

With the same initial parameters and batch (exchanged as safetensors), gacc
and PyTorch must agree on the loss and every gradient of step 1 and on the
parameters after 5 AdamW steps, within 1e-5 relative: ||gacc - torch|| <=
1e-5 * ||torch|| for each tensor.

Parameters are compared where Adam is well conditioned: elements whose
gradient stayed above 100 * eps in every step. Adam turns a gradient g near
its eps (1e-8) into an update lr * g / (|g| + eps), so a rounding-level
difference in g (the attention key bias, whose true gradient is 0, is all
such noise) moves that element by up to lr. Those elements are counted and
reported, not compared; PyTorch against itself with another thread count
shows the same.


usage: parity.py GACC EXAMPLES_DIR WORK_DIR {mlp,gpt,gpt-padded}
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

TOLERANCE = 1e-5
torch.manual_seed(0)
torch.set_num_threads(2)


def mlp_params():
    def linear(o, i):
        bound = 1 / math.sqrt(i)
        return (torch.empty(o, i).uniform_(-bound, bound),
                torch.empty(o).uniform_(-bound, bound))
    w1, b1 = linear(256, 784)
    w2, b2 = linear(10, 256)
    return {"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2,
            "fc2.bias": b2}


def mlp_batch():
    return {"image": torch.randn(64, 784),
            "label": torch.randint(0, 10, (64,), dtype=torch.int32)}


def mlp_loss(p, batch):
    h = F.relu(batch["image"] @ p["fc1.weight"].T + p["fc1.bias"])
    logits = h @ p["fc2.weight"].T + p["fc2.bias"]
    return F.cross_entropy(logits, batch["label"].long())


V, T, C, H, L, B = 96, 64, 128, 4, 2, 16


def gpt_params():
    p = {"wte.weight": torch.randn(V, C) * 0.02,
         "wpe.weight": torch.randn(T, C) * 0.02,
         "ln_f.weight": 1 + 0.1 * torch.randn(C),
         "ln_f.bias": 0.1 * torch.randn(C),
         "lm_head.weight": torch.randn(V, C) * 0.02}
    for i in range(L):
        h = f"h.{i}"
        for ln in ("ln_1", "ln_2"):
            p[f"{h}.{ln}.weight"] = 1 + 0.1 * torch.randn(C)
            p[f"{h}.{ln}.bias"] = 0.1 * torch.randn(C)
        for name, (o, i_) in {"attn.c_attn": (3 * C, C),
                              "attn.c_proj": (C, C),
                              "mlp.c_fc": (4 * C, C),
                              "mlp.c_proj": (C, 4 * C)}.items():
            p[f"{h}.{name}.weight"] = torch.randn(o, i_) * 0.02
            p[f"{h}.{name}.bias"] = torch.randn(o) * 0.02
    return p


def gpt_batch():
    tokens = torch.randint(0, V, (B, T), dtype=torch.int32)
    targets = torch.randint(0, V, (B, T), dtype=torch.int32)
    # Padding: the tail of some sequences is ignored by the loss.
    targets[0, 40:] = -100
    targets[5, 10:] = -100
    return {"tokens": tokens, "targets": targets}


def gpt_padded_batch():
    """Sequences of lengths from 1 to T, padded with token 0."""
    tokens = torch.randint(0, V, (B, T), dtype=torch.int32)
    targets = torch.randint(0, V, (B, T), dtype=torch.int32)
    mask = torch.ones(B, T)
    for b, length in enumerate(torch.randint(1, T + 1, (B,)).tolist()):
        tokens[b, length:] = 0
        targets[b, length:] = -100
        mask[b, length:] = 0
    return {"tokens": tokens, "targets": targets, "mask": mask}


def gpt_loss(p, batch, sdpa=False):
    """With `sdpa` (PyTorch 2, bench/gpu/torch_peer.py), causal attention by
    scaled_dot_product_attention instead of the explicit softmax."""
    B = batch["tokens"].shape[0]  # any batch (a rank's share, too)
    x = p["wte.weight"][batch["tokens"].long()] + p["wpe.weight"]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
    key_bias = 0.0
    if "mask" in batch:
        key_bias = (batch["mask"] - 1).reshape(B, 1, 1, T) * 1e9
    for i in range(L):
        h = f"h.{i}"
        n = F.layer_norm(x, (C,), p[f"{h}.ln_1.weight"], p[f"{h}.ln_1.bias"])
        qkv = n @ p[f"{h}.attn.c_attn.weight"].T + p[f"{h}.attn.c_attn.bias"]
        q, k, v = (t.reshape(B, T, H, C // H).transpose(1, 2)
                   for t in qkv.split(C, dim=2))
        if sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(C // H)) + key_bias
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=3)
            y = att @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + y @ p[f"{h}.attn.c_proj.weight"].T + p[f"{h}.attn.c_proj.bias"]
        n = F.layer_norm(x, (C,), p[f"{h}.ln_2.weight"], p[f"{h}.ln_2.bias"])
        m = F.gelu(n @ p[f"{h}.mlp.c_fc.weight"].T + p[f"{h}.mlp.c_fc.bias"],
                   approximate="tanh")
        x = x + m @ p[f"{h}.mlp.c_proj.weight"].T + p[f"{h}.mlp.c_proj.bias"]
    x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"])
    logits = x @ p["lm_head.weight"].T
    return F.cross_entropy(logits.reshape(-1, V),
                           batch["targets"].long().reshape(-1),
                           ignore_index=-100)


MODELS = {
    "mlp": ("mlp.mlir", mlp_params, mlp_batch, mlp_loss,
            dict(lr=1e-3, weight_decay=0.0), None),
    "gpt": ("gpt_mini.mlir", gpt_params, gpt_batch, gpt_loss,
            dict(lr=1e-3, weight_decay=0.1), 1.0),
    "gpt-padded": (["--padding-mask"], gpt_params, gpt_padded_batch, gpt_loss,
                   dict(lr=1e-3, weight_decay=0.1), 1.0),
}


def compare(what, ours, reference, mask=None):
    note = ""
    if mask is not None:
        note = f" ({int((~mask).sum())} of {mask.size} ill-conditioned " \
               "elements skipped)"
        ours, reference = ours[mask], reference[mask]
    scale = float(np.linalg.norm(reference)) or 1.0
    error = float(np.linalg.norm(ours - reference)) / scale
    status = "ok" if error <= TOLERANCE else "MISMATCH"
    print(f"{status} {what}: relative error {error:.2e}{note}")
    return error <= TOLERANCE


def main():
    gacc, examples, work, name = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    model, make_params, make_batch, loss_fn, adamw, clip = MODELS[name]
    if isinstance(model, list):
        # Generated by make_gpt.py with these flags.
        path = os.path.join(work, f"{name}.mlir")
        with open(path, "w") as f:
            subprocess.run([sys.executable,
                            os.path.join(examples, "make_gpt.py")] + model,
                           stdout=f, check=True)
        model = path
    params = {k: v.contiguous() for k, v in make_params().items()}
    batch = make_batch()
    init = os.path.join(work, f"{name}_init.safetensors")
    data = os.path.join(work, f"{name}_batch.safetensors")
    tensorfiles.save(init, {k: v.numpy() for k, v in params.items()})
    tensorfiles.save(data, {k: v.numpy() for k, v in batch.items()})

    # PyTorch: step-1 loss and gradients, then 5 AdamW steps.
    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    optimizer = torch.optim.AdamW(list(leaves.values()), foreach=False,
                                  **adamw)
    adamw_eps = optimizer.defaults["eps"]
    losses = []
    smallest = {k: np.full(v.shape, np.inf) for k, v in params.items()}
    for step in range(5):
        optimizer.zero_grad()
        loss = loss_fn(leaves, batch)
        loss.backward()
        if step == 0:
            grads = {k: v.grad.detach().clone() for k, v in leaves.items()}
        for k, v in leaves.items():
            smallest[k] = np.minimum(smallest[k], v.grad.abs().numpy())
        if clip:
            torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip)
        optimizer.step()
        losses.append(loss.item())

    # gacc: the same, from the same files.
    grads_file = os.path.join(work, f"{name}_grads.safetensors")
    metrics = os.path.join(work, f"{name}_metrics.jsonl")
    checkpoint = os.path.join(work, f"{name}_ckpt.safetensors")
    subprocess.run([gacc, "run", os.path.join(examples, model), "--steps=5",
                    f"--init={init}", f"--data={data}",
                    f"--dump-grads={grads_file}", f"--metrics={metrics}",
                    f"--save={checkpoint}"], check=True,
                   stdout=subprocess.DEVNULL)
    ours_losses = [json.loads(line)["loss"] for line in open(metrics)]
    ours_grads = tensorfiles.load(grads_file)
    ours_params = tensorfiles.load(checkpoint)

    ok = compare("loss of step 1", np.array(ours_losses[0]),
                 np.array(losses[0]))
    ok &= compare("losses of steps 1-5", np.array(ours_losses),
                  np.array(losses))
    for k in params:
        ok &= compare(f"gradient {k}", ours_grads[k], grads[k].numpy())
    for k in params:
        ok &= compare(f"parameter {k} after 5 steps", ours_params[k],
                      leaves[k].detach().numpy(),
                      mask=smallest[k] > 100 * adamw_eps)
    print("PARITY OK" if ok else "PARITY FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
