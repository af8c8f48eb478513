"""The `gacc run` loop of issue 26: token files, prefetch, epochs, evaluation
over every example, periodic checkpoints, resuming after kill -9 or a
signal, the progress bar on a terminal and log lines elsewhere.

Prints one line per check, MISMATCH on a failure, and RUN LOOP OK at the
end.

usage: run_loop.py GACC SOURCE_ROOT WORK_DIR
"""
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensorfiles  # noqa: E402

gacc, root, work = sys.argv[1:4]
gpt = os.path.join(root, "examples", "gpt_mini.mlir")  # vocab 96, T 64, B 16
tiny = os.path.join(root, "tests", "tools", "Inputs", "tiny.mlir")  # B 32
failed = False


def check(ok, what):
    global failed
    print(("ok: " if ok else "MISMATCH: ") + what)
    failed |= not ok


def run(model, *flags, cwd=work, timeout=300):
    return subprocess.run([gacc, "run", model, *flags], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def metrics(path):
    return [json.loads(line) for line in open(path)]


def losses(path):
    return [(r["step"], r.get("loss"), r.get("eval_loss"))
            for r in metrics(path)]


def tokens(path, ids, dtype=np.uint16):
    np.asarray(ids, dtype=dtype).tofile(os.path.join(work, path))
    return os.path.join(work, path)


rng = np.random.default_rng(0)
train = tokens("train.bin", rng.integers(0, 96, 40000))  # 624 windows
val = tokens("val.bin", rng.integers(0, 96, 3000))  # 46: 2 batches + 14

# Bad token files: a clear error before the first step.
for name, ids, flags, message in [
        ("odd.bin", None, [], "bytes are not a whole number of uint16 tokens"),
        ("short.bin", rng.integers(0, 96, 64), [],
         "holds 64 tokens; one example needs 65"),
        ("vocab.bin", np.r_[rng.integers(0, 96, 1500), 96, np.zeros(500)],
         [], "token 1500 is 96, outside the vocabulary [0, 96)"),
        ("wide.bin", rng.integers(1, 96, 4000), ["--token-dtype", "uint32"],
         "outside the vocabulary [0, 96)"),
        ("absent.bin", None, [], "absent.bin: cannot open"),
        ("uint32.bin", None, [], "every other uint16 token is 0")]:
    path = os.path.join(work, name)
    if name == "odd.bin":
        open(path, "wb").write(b"\0" * 1001)
    elif name == "uint32.bin":
        tokens(name, rng.integers(1, 96, 2000), np.uint32)
    elif ids is not None:
        tokens(name, ids)
    result = run(gpt, "--tokens", path, "--steps", "1", *flags)
    check(result.returncode == 1 and message in result.stderr and
          "step 1" not in result.stdout,
          f"{name}: '{message}' ({result.stderr.strip()})")
result = run(tiny, "--tokens", train, "--steps", "1")
check(result.returncode == 1 and "a token file feeds a model with a tokens "
      "input; this one has none" in result.stderr, "features model: " +
      result.stderr.strip())
for flags, message in [(["--epochs", "1"], "--epochs needs data"),
                       (["--epochs", "1", "--steps", "3", "--tokens", train],
                        "give --steps or --epochs, not both"),
                       (["--keep-last", "2"], "--keep-last needs --save-every"),
                       (["--eval-every", "2"], "--eval-every needs"),
                       (["--token-sampling", "random"],
                        "--token-sampling need --tokens"),
                       (["--init", "a", "--resume", "b"],
                        "give --init or --resume, not both")]:
    result = run(gpt, *flags)
    check(result.returncode == 1 and message in result.stderr,
          f"{' '.join(flags)}: {result.stderr.strip()}")

# Prefetching changes nothing but the waiting: the same losses bit for bit.
for depth in ("0", "4"):
    run(gpt, "--tokens", train, "--steps", "12", "--prefetch", depth,
        "--metrics", os.path.join(work, f"prefetch{depth}.jsonl"))
check(losses(os.path.join(work, "prefetch0.jsonl")) ==
      losses(os.path.join(work, "prefetch4.jsonl")),
      "--prefetch 0 and 4 give the same losses")

# Epochs: 624 windows are 39 batches; the schedule ends with the run.
result = run(gpt, "--tokens", train, "--epochs", "2", "--lr-schedule",
             "cosine,warmup=5,min_lr=0", "--metrics", "epochs.jsonl")
rows = [r for r in metrics(os.path.join(work, "epochs.jsonl")) if "loss" in r]
check(result.returncode == 0 and len(rows) == 78 and
      rows[-1]["epoch"] == 2.0 and rows[-1]["lr"] < 1e-6 and
      "epoch 2/2" in result.stdout,
      f"--epochs 2: {len(rows)} steps, last epoch {rows[-1]['epoch']}, "
      f"last lr {rows[-1]['lr']:.2e}")
result = run(gpt, "--tokens", train, "--steps", "6", "--token-sampling",
             "random", "--metrics", "random.jsonl")
check(result.returncode == 0 and
      losses(os.path.join(work, "random.jsonl")) !=
      losses(os.path.join(work, "prefetch0.jsonl"))[:6],
      "--token-sampling random draws other windows")

# Evaluation covers every example. Token files (the labels' ignore index
# drops a padded batch's extra rows): a text repeating one window has that
# window's loss whether 3 windows fill a padded batch or 16 a whole one.
window = rng.integers(0, 96, 64)
three = tokens("three.bin", np.r_[np.tile(window, 3), window[0]])
sixteen = tokens("sixteen.bin", np.r_[np.tile(window, 16), window[0]])
result = run(gpt, "--tokens", train, "--steps", "5", "--save", "gpt5.ckpt")
evals = []
for path in (three, sixteen, val):
    out = run(gpt, "--tokens", train, "--steps", "5", "--resume", "gpt5.ckpt",
              "--eval-tokens", path, "--metrics", "eval.jsonl")
    evals.append(metrics(os.path.join(work, "eval.jsonl"))[-1])
check(abs(evals[0]["eval_loss"] - evals[1]["eval_loss"]) <=
      1e-6 * evals[1]["eval_loss"] and evals[0]["eval_examples"] == 3 and
      evals[1]["eval_examples"] == 16,
      f"tokens: 3 padded windows {evals[0]['eval_loss']:.9f} = 16 "
      f"{evals[1]['eval_loss']:.9f}")
check(evals[2]["eval_examples"] == 46, "val.bin: all 46 windows evaluated")
# Examples without an ignore index (the loss of a batch of the first row
# separates the padding): 4 examples equal themselves repeated 8 times, to
# the f32 rounding of that subtraction (32 rows' loss less 28 rows').
x = rng.standard_normal((4, 8)).astype(np.float32)
y = np.array([0, 1, 2, 3], dtype=np.int32)
tensorfiles.save(os.path.join(work, "four.safetensors"), {"x": x, "y": y})
tensorfiles.save(os.path.join(work, "thirty-two.safetensors"),
                 {"x": np.tile(x, (8, 1)), "y": np.tile(y, 8)})
for name in ("four", "thirty-two"):
    run(tiny, "--steps", "20", "--eval-data", f"{name}.safetensors",
        "--metrics", f"{name}.jsonl")
four, full = (metrics(os.path.join(work, f"{n}.jsonl"))[-1]
              for n in ("four", "thirty-two"))
check(abs(four["eval_loss"] - full["eval_loss"]) <= 1e-5 * full["eval_loss"]
      and four["eval_accuracy"] == full["eval_accuracy"] and
      four["eval_examples"] == 4,
      f"examples: 4 in a padded batch {four['eval_loss']:.9f} = 32 "
      f"{full['eval_loss']:.9f}, accuracy {four['eval_accuracy']}")

# kill -9 in the middle, then --resume latest: the losses (and evaluations)
# after the resume equal the uninterrupted run's bit for bit.
common = ["--tokens", train, "--steps", "60", "--seed", "3", "--eval-tokens",
          val, "--eval-every", "20", "--lr-schedule", "cosine,warmup=5"]
run(gpt, *common, "--metrics", "straight.jsonl")
killed = subprocess.Popen([gacc, "run", gpt, *common, "--metrics",
                           "killed.jsonl", "--save-every", "8"], cwd=work,
                          stdout=subprocess.DEVNULL)
deadline = time.time() + 120
while time.time() < deadline and not os.path.exists(
        os.path.join(work, "checkpoints", "step-16.safetensors")):
    time.sleep(0.01)
killed.send_signal(signal.SIGKILL)
killed.wait()
saved = sorted(os.listdir(os.path.join(work, "checkpoints")))
result = run(gpt, *common, "--metrics", "killed.jsonl", "--save-every", "8",
             "--resume", "latest")
check(result.returncode == 0 and "resumed from checkpoints/step-" in
      result.stdout and losses(os.path.join(work, "straight.jsonl")) ==
      losses(os.path.join(work, "killed.jsonl")),
      f"kill -9 (checkpoints {saved}), --resume latest: every loss and "
      "evaluation bitwise equal to the uninterrupted run")
result = run(gpt, *common, "--seed", "4", "--resume", "latest")
check(result.returncode == 1 and "was trained with seed 3" in result.stderr,
      "resuming with another --seed: " + result.stderr.strip())

# SIGINT finishes the step, saves, and exits 0; --keep-last keeps 2.
stopped = subprocess.Popen(
    [gacc, "run", gpt, "--tokens", train, "--steps", "100000",
     "--checkpoint-dir", "signal", "--save-every", "5", "--keep-last", "2"],
    cwd=work, stdout=subprocess.PIPE, text=True)
while not os.path.exists(os.path.join(work, "signal", "step-15.safetensors")):
    time.sleep(0.01)
stopped.send_signal(signal.SIGINT)
out, _ = stopped.communicate(timeout=120)
kept = sorted(os.listdir(os.path.join(work, "signal")))
step = int(out.split("after step ")[1].split(":")[0]) if "after step " in \
    out else -1
check(stopped.returncode == 0 and f"step-{step}.safetensors" in kept and
      len(kept) == 2 and "go on with --resume latest" in out,
      f"SIGINT: exit {stopped.returncode}, stopped after step {step}, "
      f"kept {kept}")

# Without --save-every a signal still saves (the directory made on demand,
# nested); a new run refuses a directory holding another run's checkpoints.
stopped = subprocess.Popen(
    [gacc, "run", gpt, "--tokens", train, "--steps", "100000",
     "--checkpoint-dir", "nested/dir"], cwd=work, stdout=subprocess.PIPE,
    text=True)
time.sleep(3)
stopped.send_signal(signal.SIGTERM)
out, _ = stopped.communicate(timeout=120)
check(stopped.returncode == 0 and "stopped by signal 15" in out and
      len(os.listdir(os.path.join(work, "nested", "dir"))) == 1,
      "SIGTERM without --save-every saves into a new nested directory")
result = run(gpt, "--tokens", train, "--steps", "20", "--save-every", "5",
             "--checkpoint-dir", "signal")
check(result.returncode == 1 and "holds the checkpoints of another run" in
      result.stderr, "a fresh run refuses another run's checkpoints: " +
      result.stderr.strip())
result = run(gpt, "--tokens", train, "--steps", "20", "--save-every", "5",
             "--checkpoint-dir", "signal", "--resume",
             os.path.join("checkpoints", "step-8.safetensors"))
check(result.returncode == 1 and "holds checkpoints past step 8" in
      result.stderr, "resuming behind a directory's newest checkpoint is "
      "refused: " + result.stderr.strip())

# On a terminal: a progress bar with epoch, loss, samples/s and ETA.
leader, follower = pty.openpty()
bar = subprocess.Popen([gacc, "run", gpt, "--tokens", train, "--steps", "50"],
                       cwd=work, stdout=follower, stderr=follower)
os.close(follower)
screen = b""
while True:
    ready, _, _ = select.select([leader], [], [], 120)
    try:
        chunk = os.read(leader, 4096) if ready else b""
    except OSError:  # the terminal's other end closed
        chunk = b""
    if not chunk:
        break
    screen += chunk
bar.wait()
text = screen.decode(errors="replace")
check(bar.returncode == 0 and "\r[" in text and "50/50  epoch 2/2" in text and
      "samples/s  ETA" in text and "\nstep " not in text,
      "terminal: " + [line for line in text.split("\r") if "ETA" in line][-1]
      .strip())
# In a log: a plain line every --log-every steps (and the first and last).
result = run(gpt, "--tokens", train, "--steps", "12", "--log-every", "5")
steps = [line.split()[1] for line in result.stdout.splitlines()
         if line.startswith("step ")]
check(steps == ["1/12", "5/12", "10/12", "12/12"] and "\r" not in
      result.stdout, f"log lines at {steps}")

print("RUN LOOP FAILED" if failed else "RUN LOOP OK")
