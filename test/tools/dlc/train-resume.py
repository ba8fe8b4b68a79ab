# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# `dlc train` stopped and resumed ends bit for bit where one uninterrupted
# run ends: stopped by --max-steps, by Ctrl-C (SIGINT: finish the step,
# checkpoint, exit 130), and killed (SIGKILL) while writing a checkpoint,
# when the previous complete checkpoint is resumed from. Also: the progress
# bar on a terminal. Uses the test-only --fake-step (no compiler needed).
import os
import pty
import signal
import subprocess
import sys
import time

import numpy as np

tmp = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((50, 3)).astype(np.float32)
np.savez(f"{tmp}/small.npz", x=x, y=(x @ np.float32([1, -2, 0.5])).astype(np.float32))
x = rng.standard_normal((20000, 64)).astype(np.float32)
np.savez(f"{tmp}/large.npz", x=x, y=x.sum(1))

SMALL = ["dlc", "train", f"{tmp}/m.dlg", "--fake-step=linear:3", "--data", f"{tmp}/small.npz",
         "--epochs", "3", "--batch-size", "8", "--optimizer", "adamw", "--seed", "5",
         "--lr-schedule", "cosine", "--warmup-steps", "3"]
LARGE = ["dlc", "train", f"{tmp}/m.dlg", "--fake-step=linear:64", "--data", f"{tmp}/large.npz",
         "--epochs", "1000", "--batch-size", "4", "--seed", "9"]


def run(args, expect=0, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    assert p.returncode == expect, (args, p.returncode, p.stdout, p.stderr)
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


def checkpoints(d):
    return sorted(n for n in os.listdir(d) if n.startswith("ckpt-"))


# The uninterrupted run: 7 batches per epoch (the last of 2 samples).
run(SMALL + ["--checkpoint-dir", f"{tmp}/whole"])
expected = read(f"{tmp}/whole/ckpt-21.safetensors")

# 1. --max-steps mid-epoch, then --resume to the end.
run(SMALL + ["--checkpoint-dir", f"{tmp}/steps", "--max-steps", "10"])
assert checkpoints(f"{tmp}/steps") == ["ckpt-10.safetensors", "ckpt-7.safetensors"]
p = run(SMALL + ["--checkpoint-dir", f"{tmp}/steps", "--resume"])
assert "resuming from" in p.stderr and "ckpt-10.safetensors" in p.stderr, p.stderr
assert p.stdout.splitlines()[0].startswith("epoch 2/3: train_loss"), p.stdout
assert read(f"{tmp}/steps/ckpt-21.safetensors") == expected

# 2. SIGINT while training: the step finishes, a checkpoint is written, exit
#    130. Resuming to a later step equals a fresh run to that step.
proc = subprocess.Popen(LARGE + ["--checkpoint-dir", f"{tmp}/int"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
proc.send_signal(signal.SIGINT)
out, err = proc.communicate(timeout=60)
assert proc.returncode == 130, (proc.returncode, out, err)
assert "dlc: note: interrupted: stopped after step" in err, err
step = max(int(n[len("ckpt-"):-len(".safetensors")]) for n in checkpoints(f"{tmp}/int"))
stopped = f"ckpt-{step}.safetensors"
assert f"stopped after step {step}; checkpoint {tmp}/int/{stopped}" in err, err
target = step + 7
run(LARGE + ["--checkpoint-dir", f"{tmp}/int", "--resume", "--max-steps", str(target)])
run(LARGE + ["--checkpoint-dir", f"{tmp}/int-ref", "--max-steps", str(target)])
assert read(f"{tmp}/int/ckpt-{target}.safetensors") == \
    read(f"{tmp}/int-ref/ckpt-{target}.safetensors")

# 3. SIGKILL between writing a checkpoint's temporary file and renaming it
#    (the test hook pauses there): the previous checkpoint is intact, the
#    half-written one is ignored, and resuming still ends where one run ends.
env = dict(os.environ, DLC_TEST_CHECKPOINT_PAUSE_MS="1500")
proc = subprocess.Popen(SMALL + ["--checkpoint-dir", f"{tmp}/kill"], env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while not os.path.exists(f"{tmp}/kill/.ckpt-14.safetensors.tmp"):
    assert time.time() < deadline and proc.poll() is None, "no second checkpoint"
    time.sleep(0.01)
proc.kill()
proc.wait()
assert checkpoints(f"{tmp}/kill") == ["ckpt-7.safetensors"], os.listdir(f"{tmp}/kill")
assert ".ckpt-14.safetensors.tmp" in os.listdir(f"{tmp}/kill")
p = run(SMALL + ["--checkpoint-dir", f"{tmp}/kill", "--resume"])
assert f"resuming from {tmp}/kill/ckpt-7.safetensors" in p.stderr, p.stderr
assert read(f"{tmp}/kill/ckpt-21.safetensors") == expected
assert not any(n.endswith(".tmp") for n in os.listdir(f"{tmp}/kill")), os.listdir(f"{tmp}/kill")

# 4. On a terminal: a progress bar redrawn in place, cleared before the
#    epoch's line.
master, slave = pty.openpty()
p = subprocess.run(SMALL + ["--epochs", "1"], stderr=slave, stdout=subprocess.PIPE, text=True)
os.close(slave)
bar = os.read(master, 65536).decode()
os.close(master)
assert p.returncode == 0, p
assert "\repoch 1/1 [====================] 7/7 loss " in bar and " ETA " in bar, repr(bar)
assert bar.endswith("\r\x1b[K"), repr(bar)
assert p.stdout.startswith("epoch 1/1: train_loss "), p.stdout
