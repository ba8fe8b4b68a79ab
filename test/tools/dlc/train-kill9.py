# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# `dlc train` killed with SIGKILL at 100 random moments (startup, steps,
# mid-checkpoint: wherever the signal lands) always leaves a checkpoint
# directory whose newest checkpoint loads and resumes to the same state an
# uninterrupted run has at that step; every complete checkpoint parses, and
# at most one half-written temporary is left, which the next run removes.
# A checkpoint is written every epoch of 2 steps, so the fsyncs take most of
# a run and many kills land inside one. Uses the test-only --fake-step.
import json
import os
import random
import struct
import subprocess
import sys
import time

import numpy as np

tmp = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 3)).astype(np.float32)
np.savez(f"{tmp}/d.npz", x=x, y=(x @ np.float32([1, -2, 0.5])).astype(np.float32))
open(f"{tmp}/m.dlg", "w").close()
EPOCHS = 40
TRAIN = ["dlc", "train", f"{tmp}/m.dlg", "--fake-step=linear:3", "--data", f"{tmp}/d.npz",
         "--batch-size", "8", "--optimizer", "adamw", "--seed", "5"]


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, (args, p.returncode, p.stdout, p.stderr)
    return p


def tensors(path):
    """A safetensors file's tensors as raw bytes by name; asserts it is whole."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    body = blob[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        assert end <= len(body), (path, name, entry, len(body))
        out[name] = body[begin:end]
    assert out, path
    return out


def steps(d):
    return sorted(int(n[len("ckpt-"):-len(".safetensors")])
                  for n in os.listdir(d) if n.startswith("ckpt-") and n.endswith(".safetensors"))


# The uninterrupted run, every checkpoint kept: the state at each step.
run(TRAIN + ["--epochs", str(EPOCHS), "--checkpoint-dir", f"{tmp}/ref",
             "--keep-checkpoints", "1000"])
reference = {s: tensors(f"{tmp}/ref/ckpt-{s}.safetensors") for s in steps(f"{tmp}/ref")}
assert sorted(reference) == list(range(2, 2 * EPOCHS + 1, 2)), sorted(reference)
start = time.time()
run(TRAIN + ["--epochs", str(EPOCHS), "--checkpoint-dir", f"{tmp}/timing"])
duration = time.time() - start

moments = random.Random(2026)
outcomes = {"before the first checkpoint": 0, "after a checkpoint": 0,
            "finished before the kill": 0, "with a half-written temporary": 0}
for i in range(100):
    d = f"{tmp}/k{i}"
    proc = subprocess.Popen(TRAIN + ["--epochs", str(EPOCHS), "--checkpoint-dir", d],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(moments.uniform(0, duration))
    proc.kill()
    proc.wait()
    if proc.returncode == 0:
        outcomes["finished before the kill"] += 1
    names = os.listdir(d) if os.path.isdir(d) else []
    temporaries = [n for n in names if n.endswith(".tmp")]
    assert len(temporaries) <= 1, names
    outcomes["with a half-written temporary"] += bool(temporaries)
    assert all(n.endswith(".tmp") or n.startswith("ckpt-") for n in names), names
    for s in steps(d) if names else []:
        assert tensors(f"{d}/ckpt-{s}.safetensors") == reference[s], (d, s)
    latest = max(steps(d)) if names and steps(d) else 0
    outcomes["after a checkpoint" if latest else "before the first checkpoint"] += 1
    if latest == 2 * EPOCHS:
        continue
    # Resume for one more epoch: the newest checkpoint loads, and the state
    # after it equals the uninterrupted run's.
    p = run(TRAIN + ["--epochs", str(EPOCHS), "--checkpoint-dir", d, "--resume",
                     "--max-steps", str(latest + 2)])
    if latest:
        assert f"resuming from {d}/ckpt-{latest}.safetensors" in p.stderr, p.stderr
    assert tensors(f"{d}/ckpt-{latest + 2}.safetensors") == reference[latest + 2], (d, latest)
    assert not any(n.endswith(".tmp") for n in os.listdir(d)), os.listdir(d)

print("100 kills:", ", ".join(f"{v} {k}" for k, v in outcomes.items()))
# The kills must have landed at different phases, or the test proves little
# (loosely: on a loaded machine start-up takes a larger share of a run).
assert outcomes["after a checkpoint"] >= 20, outcomes
assert outcomes["before the first checkpoint"] >= 1, outcomes
