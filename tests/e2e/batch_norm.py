"""Batch norm and its running statistics against PyTorch.

A small model (matmul -> batch_norm (N x C) -> relu -> matmul ->
cross_entropy; and one with a 2-D batch norm on N x C x H x W features)
trained 5 SGD steps through the Python module, against the same nn.Module
in PyTorch from the same initial parameters and batches: the losses, the
parameters and the running statistics (running_mean, running_var,
num_batches_tracked) agree within 1e-5 relative (||gacc - torch|| <=
1e-5 * ||torch|| per tensor). Then:

* micro-batches of half the batch against a PyTorch loop that runs two
  forward/backward passes per step (each updates the running statistics,
  as gacc's micro-batches do; each loss is a sum over its half divided by
  the whole batch's count);
* the evaluation loss (running statistics, no update) against
  model.eval();
* a checkpoint saved and loaded into a new trainer gives back every
  parameter, frozen ones included, and set_parameter writes a frozen one;
* with GACC, an artifact of `gacc compile` trains as the JIT does (its
  description keeps which parameters are frozen).

Prints one line per comparison and BATCH NORM OK at the end.

usage: batch_norm.py WORK_DIR [GACC]
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import gacc

TOLERANCE = 1e-5
STEPS = 5
LR = 0.1
torch.manual_seed(0)
torch.set_num_threads(1)

BN_PARAMS = """\
gacc.param @bn.weight : tensor<{c}xf32> = #gacc.init<ones>
gacc.param @bn.bias : tensor<{c}xf32> = #gacc.init<zeros>
gacc.param @bn.running_mean : tensor<{c}xf32> = #gacc.init<zeros> frozen
gacc.param @bn.running_var : tensor<{c}xf32> = #gacc.init<ones> frozen
gacc.param @bn.num_batches_tracked : tensor<f32> = #gacc.init<zeros> frozen
"""

BN_BODY = """\
  %w = gacc.load @bn.weight : tensor<{c}xf32>
  %b = gacc.load @bn.bias : tensor<{c}xf32>
  %rm = gacc.load @bn.running_mean : tensor<{c}xf32>
  %rv = gacc.load @bn.running_var : tensor<{c}xf32>
  %n, %new_rm, %new_rv = gacc.batch_norm %h, %w, %b, %rm, %rv momentum = 1.000000e-01 epsilon = 1.000000e-05
      : {x}, tensor<{c}xf32>
  gacc.assign @bn.running_mean, %new_rm : tensor<{c}xf32>
  gacc.assign @bn.running_var, %new_rv : tensor<{c}xf32>
  %t = gacc.load @bn.num_batches_tracked : tensor<f32>
  %one = gacc.constant dense<1.0> : tensor<f32>
  %t1 = gacc.add %t, %one : tensor<f32>, tensor<f32>
  gacc.assign @bn.num_batches_tracked, %t1 : tensor<f32>
  %r = gacc.relu %n : {x}
"""

# matmul -> batch_norm (N x C) -> relu -> matmul -> cross_entropy
MLP = """\
gacc.param @fc1.weight : tensor<12x10xf32> = #gacc.init<xavier_uniform, seed = 1>
{bn}gacc.param @fc2.weight : tensor<3x12xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.param @fc2.bias : tensor<3xf32> = #gacc.init<zeros>
gacc.input @x : tensor<16x10xf32> features
gacc.input @y : tensor<16xi32> labels
func.func @model() -> tensor<f32> {{
  %x = gacc.load @x : tensor<16x10xf32>
  %y = gacc.load @y : tensor<16xi32>
  %w1 = gacc.load @fc1.weight : tensor<12x10xf32>
  %h = gacc.matmul %x, %w1 transpose_rhs : tensor<16x10xf32>, tensor<12x10xf32> -> tensor<16x12xf32>
{body}  %w2 = gacc.load @fc2.weight : tensor<3x12xf32>
  %b2 = gacc.load @fc2.bias : tensor<3xf32>
  %z = gacc.matmul %r, %w2 transpose_rhs : tensor<16x12xf32>, tensor<3x12xf32> -> tensor<16x3xf32>
  %logits = gacc.add %z, %b2 : tensor<16x3xf32>, tensor<3xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<16x3xf32>, tensor<16xi32>
  return %loss : tensor<f32>
}}
gacc.train_step @train model @model batch_size 16 optimizer #gacc.sgd<lr = {lr}>
""".format(bn=BN_PARAMS.format(c=12), lr=LR,
           body=BN_BODY.format(c=12, x="tensor<16x12xf32>"))

# batch_norm (N x C x H x W) on the features -> relu -> reshape -> matmul
CNN = """\
{bn}gacc.param @fc.weight : tensor<3x32xf32> = #gacc.init<xavier_uniform, seed = 2>
gacc.input @x : tensor<16x2x4x4xf32> features
gacc.input @y : tensor<16xi32> labels
func.func @model() -> tensor<f32> {{
  %h = gacc.load @x : tensor<16x2x4x4xf32>
  %y = gacc.load @y : tensor<16xi32>
{body}  %flat = gacc.reshape %r : tensor<16x2x4x4xf32> -> tensor<16x32xf32>
  %wf = gacc.load @fc.weight : tensor<3x32xf32>
  %logits = gacc.matmul %flat, %wf transpose_rhs : tensor<16x32xf32>, tensor<3x32xf32> -> tensor<16x3xf32>
  %loss = gacc.cross_entropy mean %logits, %y : tensor<16x3xf32>, tensor<16xi32>
  return %loss : tensor<f32>
}}
gacc.train_step @train model @model batch_size 16 optimizer #gacc.sgd<lr = {lr}>
""".format(bn=BN_PARAMS.format(c=2), lr=LR,
           body=BN_BODY.format(c=2, x="tensor<16x2x4x4xf32>"))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 12, bias=False)
        self.bn = nn.BatchNorm1d(12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(32, 3, bias=False)

    def forward(self, x):
        return self.fc(F.relu(self.bn(x)).reshape(x.shape[0], -1))


def batches(shape, count):
    return [(torch.randn(*shape) * 2 + 0.5,
             torch.randint(0, 3, (shape[0],), dtype=torch.int32))
            for _ in range(count)]


def state(module):
    return {k: v.detach().clone().float().numpy()
            for k, v in module.state_dict().items()}


def compare(what, ours, reference):
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference,
                                                              np.float64)
    scale = float(np.linalg.norm(reference)) or 1.0
    error = float(np.linalg.norm(ours - reference)) / scale
    good = error <= TOLERANCE
    print(f"{'ok' if good else 'MISMATCH'} {what}: relative error "
          f"{error:.2e}")
    return good


def torch_train(module, data, micro):
    optimizer = torch.optim.SGD(module.parameters(), lr=LR)
    losses = []
    module.train()
    for x, y in data:
        optimizer.zero_grad()
        total = 0.0
        for start in range(0, len(x), micro):
            part = slice(start, start + micro)
            loss = F.cross_entropy(module(x[part]), y[part].long(),
                                   reduction="sum") / len(x)
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses


def check_model(name, text, make_module, shape, work):
    ok = True
    data = batches(shape, STEPS)
    held_out = batches(shape, 1)[0]
    initial = make_module()
    # Running statistics that are not the defaults, so that a gacc that
    # ignored them would show.
    with torch.no_grad():
        initial.bn.running_mean.uniform_(-0.5, 0.5)
        initial.bn.running_var.uniform_(0.5, 1.5)
        initial.bn.weight.uniform_(0.5, 1.5)
        initial.bn.bias.uniform_(-0.5, 0.5)
    for micro in (shape[0], shape[0] // 2):
        tag = f"{name}" + ("" if micro == shape[0] else
                           f", micro-batches of {micro}")
        reference = make_module()
        reference.load_state_dict(initial.state_dict())
        losses = torch_train(reference, data, micro)
        options = {} if micro == shape[0] else {"micro_batch": micro}
        trainer = gacc.Trainer.compile(text, name=name, **options)
        names = set(trainer.parameters())
        for key, value in state(initial).items():
            assert key in names, f"trainer.parameters() lacks {key}"
            trainer.set_parameter(key, value)
        ours = [trainer.step({"x": x.numpy(), "y": y.numpy()})["loss"]
                for x, y in data]
        ok &= compare(f"{tag}: losses of steps 1-{STEPS}", ours, losses)
        params = trainer.parameters()
        for key, value in state(reference).items():
            ok &= compare(f"{tag}: {key} after {STEPS} steps", params[key],
                          value)
        # Evaluation: running statistics, and nothing updated.
        reference.eval()
        with torch.no_grad():
            eval_loss = F.cross_entropy(reference(held_out[0]),
                                        held_out[1].long()).item()
        before = trainer.parameters()
        ours_eval = trainer.evaluate({"x": held_out[0].numpy(),
                                      "y": held_out[1].numpy()})["loss"]
        ok &= compare(f"{tag}: evaluation loss (model.eval())", ours_eval,
                      eval_loss)
        after = trainer.parameters()
        same = all(np.array_equal(before[k], after[k]) for k in before)
        print(f"{'ok' if same else 'MISMATCH'} {tag}: evaluation updates "
              "nothing")
        ok &= same
    # Checkpoints keep the frozen parameters.
    path = os.path.join(work, f"{name}.safetensors")
    trainer.save_checkpoint(path)
    restored = gacc.Trainer.compile(text, name=name)
    restored.load_checkpoint(path)
    saved, loaded = trainer.parameters(), restored.parameters()
    same = sorted(saved) == sorted(loaded) and all(
        np.array_equal(saved[k], loaded[k]) for k in saved)
    print(f"{'ok' if same else 'MISMATCH'} {name}: checkpoint round trip of "
          f"{', '.join(k for k in sorted(saved) if k.startswith('bn.'))}")
    ok &= same
    return ok


def check_artifact(gacc_path, work):
    source = os.path.join(work, "bn-mlp.mlir")
    artifact = os.path.join(work, "bn-mlp.gacc")
    with open(source, "w") as f:
        f.write(MLP)
    subprocess.run([gacc_path, "compile", source, "--micro-batch=8", "-o",
                    artifact], check=True, stderr=subprocess.DEVNULL)
    jit = gacc.Trainer.compile(MLP, micro_batch=8)
    aot = gacc.Trainer.open(artifact)
    for key, value in jit.parameters().items():
        aot.set_parameter(key, value)
    for x, y in batches((16, 10), STEPS):
        for trainer in (jit, aot):
            trainer.step({"x": x.numpy(), "y": y.numpy()})
    ours, reference = aot.parameters(), jit.parameters()
    same = sorted(ours) == sorted(reference) and all(
        np.array_equal(ours[k], reference[k]) for k in ours)
    print(f"{'ok' if same else 'MISMATCH'} bn-mlp: the artifact trains as "
          "the JIT does, running statistics included")
    return same


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    ok = check_model("bn-mlp", MLP, Mlp, (16, 10), work)
    ok &= check_model("bn-cnn", CNN, Cnn, (16, 2, 4, 4), work)
    if len(sys.argv) > 2:
        ok &= check_artifact(sys.argv[2], work)
    print("BATCH NORM OK" if ok else "BATCH NORM FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
