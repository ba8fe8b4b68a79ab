# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# Accuracy of a sequence model: one prediction per position, positions whose
# label is the ignore index left out of both counts. The logged
# eval_accuracy equals NumPy's over the logits `dlc run --params` computes
# with the checkpoint of the same step.
import json
import os
import subprocess
import sys

import numpy as np

tmp = sys.argv[1]
model = os.path.join(tmp, "seq.dlg")
with open(model, "w") as f:
    f.write("""
graph seq(tokens: i32[N, 6]) -> (logits: f32[N, 6, 5]) {
  param emb: f32[5, 8] = normal(std=0.5, seed=1)
  param w: f32[8, 5] = normal(std=0.5, seed=2)
  logits = embedding(emb, tokens) @ w
}
train seq(targets: i32[N, 6]) {
  loss      = cross_entropy(logits, targets, ignore_index=-100)
  optimizer = adam(lr=0.05)
}
""")
rng = np.random.default_rng(0)
tokens = rng.integers(0, 5, (40, 6)).astype(np.int32)
targets = ((tokens + 1) % 5).astype(np.int32)  # learnable: the next code
targets[:, 0] = -100                             # the first position is ignored
targets[rng.random(targets.shape) < 0.3] = -100  # and about 30% of the rest
np.savez(f"{tmp}/d.npz", tokens=tokens, targets=targets)
subprocess.run(["dlc", "train", model, "--data", f"{tmp}/d.npz", "--eval", f"{tmp}/d.npz",
                "--batch-size", "10", "--epochs", "3", "--checkpoint-dir", f"{tmp}/ck",
                "--log-json", f"{tmp}/log.json"], check=True, capture_output=True)
logged = [json.loads(line) for line in open(f"{tmp}/log.json")][-1]["eval_accuracy"]
np.save(f"{tmp}/tokens.npy", tokens)
subprocess.run(["dlc", "run", model, "--dim", "N=40", "--params", f"{tmp}/ck/ckpt-12.safetensors",
                "--input", f"tokens=@{tmp}/tokens.npy", "--output", f"logits=@{tmp}/logits.npy"],
               check=True, capture_output=True)
logits = np.load(f"{tmp}/logits.npy")
labelled = targets != -100
correct = (logits.argmax(-1) == targets) & labelled
expected = correct.sum() / labelled.sum()
print(f"logged {logged:.6f}, NumPy {expected:.6f} ({correct.sum()} of {labelled.sum()})")
assert 0 <= logged <= 1 and abs(logged - expected) < 1e-9, (logged, expected)
