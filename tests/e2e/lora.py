"""LoRA (gacc-lora) against the dense model it stands for.

A two-layer model (one weight stored [out, in], one [in, out]) with
`lora="rank=3,alpha=6,targets=.*weight"`:
1. the adapters' gradients, gradchecked in f64: central differences of the
   compiled loss against the gradient the compiled step applies (one SGD
   step with lr 1 moves each adapter by minus its gradient);
2. 5 steps (SGD with momentum) equal PyTorch's on the dense model with W
   frozen and W + (alpha/r)·B·A folded in, in f64, within 1e-6 relative;
3. `gacc export --merge-lora` and `parameters(merge_lora=True)` give
   W + (alpha/r)·B·A under W's name, and a model without adapters reading
   those weights has the adapted model's loss.

usage: lora.py GACC WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402
import gacc  # noqa: E402

TOLERANCE = 1e-6
RANK, ALPHA = 3, 6.0
SCALE = ALPHA / RANK
LORA = f"rank={RANK},alpha={ALPHA},targets=.*weight"

MODEL = """\
gacc.param @fc.weight : tensor<6x4x{t}> = #gacc.init<normal, seed = 1>
gacc.param @fc.bias : tensor<6x{t}> = #gacc.init<normal, scale = 0.1, seed = 2>
gacc.param @out.weight : tensor<6x3x{t}> = #gacc.init<normal, seed = 3>
gacc.input @x : tensor<8x4x{t}> features
gacc.input @y : tensor<8xi32> labels
func.func @m() -> tensor<{t}> {{
  %x = gacc.load @x : tensor<8x4x{t}>
  %y = gacc.load @y : tensor<8xi32>
  %w = gacc.load @fc.weight : tensor<6x4x{t}>
  %b = gacc.load @fc.bias : tensor<6x{t}>
  %h = gacc.matmul %x, %w transpose_rhs : tensor<8x4x{t}>, tensor<6x4x{t}> -> tensor<8x6x{t}>
  %hb = gacc.add %h, %b : tensor<8x6x{t}>, tensor<6x{t}>
  %r = gacc.tanh %hb : tensor<8x6x{t}>
  %o = gacc.load @out.weight : tensor<6x3x{t}>
  %l = gacc.matmul %r, %o : tensor<8x6x{t}>, tensor<6x3x{t}> -> tensor<8x3x{t}>
  %loss = gacc.cross_entropy mean %l, %y : tensor<8x3x{t}>, tensor<8xi32>
  return %loss : tensor<{t}>
}}
gacc.train_step @train model @m batch_size 8 optimizer {optimizer}
"""
SGD = "#gacc.sgd<lr = 0.5, momentum = 0.9>"
ADAPTED = {"fc.weight": False, "out.weight": True}  # name -> stored [in, out]


def compare(tag, ours, reference, tolerance=TOLERANCE):
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference)
    error = np.linalg.norm(ours - reference) / max(
        np.linalg.norm(reference), 1e-30)
    ok = ours.shape == reference.shape and error <= tolerance
    print(f"{'ok' if ok else 'MISMATCH'} {tag}: relative error {error:.2e}")
    return ok


def trainer(dtype, optimizer=SGD, **options):
    return gacc.Trainer.compile(MODEL.format(t=dtype, optimizer=optimizer),
                                name=f"lora-{dtype}", lora=LORA, **options)


def batch(rng, dtype):
    return {"x": rng.standard_normal((8, 4)).astype(dtype),
            "y": rng.integers(0, 3, 8).astype(np.int32)}


def randomize_adapters(t, rng):
    """B starts at zero (as peft's); nonzero B tests every path."""
    for name in ADAPTED:
        for suffix in (".lora_A", ".lora_B"):
            shape = t.parameters()[name + suffix].shape
            value = rng.standard_normal(shape) * 0.5
            t.set_parameter(name + suffix,
                            value.astype(t.parameters()[name].dtype))


def folded(params):
    """The dense weights: W + scale·B·A in W's layout."""
    out = {}
    for name, transposed in ADAPTED.items():
        delta = SCALE * params[name + ".lora_B"] @ params[name + ".lora_A"]
        out[name] = params[name] + (delta.T if transposed else delta)
    return out


def gradcheck():
    rng = np.random.default_rng(1)
    t = trainer("f64", optimizer="#gacc.sgd<lr = 1.0>")
    randomize_adapters(t, rng)
    data = batch(rng, np.float64)
    before = t.parameters()
    t.evaluate(data)
    h, ok = 1e-6, True
    probe = gacc.Trainer.compile(MODEL.format(t="f64", optimizer=SGD),
                                 name="probe", lora=LORA)
    for name, value in before.items():
        probe.set_parameter(name, value)
    numeric = {}
    for name in ADAPTED:
        for suffix in (".lora_A", ".lora_B"):
            key = name + suffix
            grad = np.zeros_like(before[key])
            for index in np.ndindex(grad.shape):
                losses = []
                for sign in (1, -1):
                    value = before[key].copy()
                    value[index] += sign * h
                    probe.set_parameter(key, value)
                    losses.append(probe.evaluate(data)["loss"])
                grad[index] = (losses[0] - losses[1]) / (2 * h)
            probe.set_parameter(key, before[key])
            numeric[key] = grad
    t.step(data)
    after = t.parameters()
    for key, grad in numeric.items():
        ok &= compare(f"gradcheck f64: d loss / d {key}",
                      before[key] - after[key], grad)
    for name in list(ADAPTED) + ["fc.bias"]:
        same = np.array_equal(before[name], after[name])
        print(f"{'ok' if same else 'MISMATCH'} {name} is frozen")
        ok &= same
    return ok


def dense_steps():
    rng = np.random.default_rng(2)
    t = trainer("f64")
    randomize_adapters(t, rng)
    params = {k: torch.tensor(v) for k, v in t.parameters().items()}
    adapters = [params[k].requires_grad_() for k in params if "lora" in k]
    torch_opt = torch.optim.SGD(adapters, lr=0.5, momentum=0.9)
    ok = True
    for step in range(5):
        data = batch(rng, np.float64)
        loss = t.step(data)["loss"]
        dense = {}
        for name, transposed in ADAPTED.items():
            delta = SCALE * params[name + ".lora_B"] @ params[name + ".lora_A"]
            dense[name] = params[name] + (delta.T if transposed else delta)
        x = torch.tensor(data["x"])
        h = torch.tanh(x @ dense["fc.weight"].T + params["fc.bias"])
        logits = h @ dense["out.weight"]
        reference = torch.nn.functional.cross_entropy(
            logits, torch.tensor(data["y"]).long())
        torch_opt.zero_grad()
        reference.backward()
        torch_opt.step()
        ok &= compare(f"dense f64: loss of step {step + 1}", loss,
                      reference.item())
    ours = t.parameters()
    for key in ours:
        ok &= compare(f"dense f64: {key} after 5 steps", ours[key],
                      params[key].detach().numpy())
    return ok


def export(gacc_path, work):
    rng = np.random.default_rng(3)
    t = trainer("f32")
    data = batch(rng, np.float32)
    for _ in range(3):
        t.step(data)
    params = {k: v.astype(np.float64) for k, v in t.parameters().items()}
    expected = folded(params)
    checkpoint = os.path.join(work, "lora.safetensors")
    merged_path = os.path.join(work, "merged.safetensors")
    t.save_checkpoint(checkpoint)
    subprocess.run([gacc_path, "export", checkpoint, "--merge-lora", "-o",
                    merged_path], check=True, stdout=subprocess.DEVNULL)
    merged = tensorfiles.load(merged_path)
    ok = sorted(merged) == ["fc.bias", "fc.weight", "out.weight"]
    print(f"{'ok' if ok else 'MISMATCH'} export: {sorted(merged)}")
    in_memory = t.parameters(merge_lora=True)
    for name, value in expected.items():
        ok &= compare(f"export --merge-lora: {name}", merged[name], value)
        ok &= compare(f"parameters(merge_lora=True): {name}",
                      in_memory[name], value)
    dense = gacc.Trainer.compile(MODEL.format(t="f32", optimizer=SGD),
                                 name="dense")
    for name, value in merged.items():
        dense.set_parameter(name, value)
    ok &= compare("the merged weights' loss without adapters",
                  dense.evaluate(data)["loss"], t.evaluate(data)["loss"])
    return ok


def main():
    gacc_path, work = sys.argv[1], sys.argv[2]
    ok = gradcheck()
    ok &= dense_steps()
    ok &= export(gacc_path, work)
    print("LORA OK" if ok else "LORA MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
