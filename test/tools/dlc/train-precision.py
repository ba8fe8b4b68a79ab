# REQUIRES: fashion-mnist
# RUN: rm -rf %t && mkdir -p %t && %python %s %t %dlc_src/examples/fashion_mnist/mlp.dlg
# Mixed-precision training (--precision): the forward and backward GEMMs in
# bf16 or f16, the parameters, gradients and Adam's moments in f32.
#  1. The Fashion-MNIST MLP trained for one epoch of 2048 real images ends
#     within 5% of f32's training loss in bf16 and f16.
#  2. f16 scales the loss dynamically: a linear model whose gradients
#     overflow f16 at the initial scale 2^16 skips those steps (no parameter,
#     moment or step change) and halves the scale until they fit (9000-ish
#     gradients: 2^16 -> 4, 14 skipped steps of 32), then trains; bf16 needs
#     no scale (f32's exponent range) and has no such state.
import gzip
import json
import os
import subprocess
import sys

import numpy as np
from dlc_numpy import load_safetensors

tmp, mlp = sys.argv[1], sys.argv[2]
DATA = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)


def train(model, data, precision, *args):
    log = os.path.join(tmp, f"{precision}.jsonl")
    ckpt = os.path.join(tmp, f"ckpt-{os.path.basename(model)}-{precision}")
    cmd = ["dlc", "train", model, "--data", data, f"--precision={precision}",
           "--log-json", log, "--checkpoint-dir", ckpt] + list(args)
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)}: {result.stderr}"
    last = [json.loads(line) for line in open(log)][-1]
    newest = max(os.listdir(ckpt), key=lambda f: int(f.split("-")[1].split(".")[0]))
    return last, load_safetensors(os.path.join(ckpt, newest))


# 1. Real data: 2048 training images, one epoch of 32 steps.
images = [n for n in os.listdir(DATA) if n.startswith("train-images")][0]
labels = [n for n in os.listdir(DATA) if n.startswith("train-labels")][0]
np.savez(os.path.join(tmp, "fashion.npz"), image=idx(images)[:2048],
         label=idx(labels)[:2048].astype(np.int32))
args = ["--epochs", "1", "--batch-size", "64"]
f32, _ = train(mlp, os.path.join(tmp, "fashion.npz"), "f32", *args)
for precision in ("bf16", "f16"):
    low, state = train(mlp, os.path.join(tmp, "fashion.npz"), precision, *args)
    gap = abs(low["train_loss"] - f32["train_loss"]) / f32["train_loss"]
    assert gap <= 0.05, f"{precision}: train loss {low['train_loss']} vs f32 {f32['train_loss']}"
    assert all(state[n].dtype == np.float32 for n in ("w1", "b1", "w1.m", "w1.v")), state.keys()
    assert ("loss_scale" in state) == (precision == "f16"), state.keys()
    print(f"ok mlp {precision}: train loss {low['train_loss']:.4f} (f32 {f32['train_loss']:.4f})")

# 2. Dynamic loss scaling: gradients of about 9000 overflow f16 at 2^16.
with open(os.path.join(tmp, "lin.dlg"), "w") as f:
    f.write("""graph lin(x: f32[N, 4]) -> (y: f32[N, 1]) {
  param w: f32[4, 1] = normal(std=0.1, seed=1)
  y = x @ w
}

train lin(t: f32[N, 1]) {
  loss      = mse(y, t)
  optimizer = sgd(lr=1e-4)
}
""")
rng = np.random.default_rng(0)
x = (rng.standard_normal((256, 4)) * 30).astype(np.float32)
np.savez(os.path.join(tmp, "lin.npz"), x=x, t=x @ np.float32([[1], [2], [3], [4]]))
log, state = train(os.path.join(tmp, "lin.dlg"), os.path.join(tmp, "lin.npz"), "f16",
                   "--epochs", "4", "--batch-size", "32")
assert log["global_step"] == 32, log
assert float(state["loss_scale"]) == 4.0, state["loss_scale"]
assert int(state["step"]) == 18 and int(state["loss_scale.clean_steps"]) == 18, state
assert np.allclose(state["w"].ravel(), [1, 2, 3, 4], rtol=0.05), state["w"]
print(f"ok linear f16: 14 overflowed steps skipped, loss scale 2^16 -> 4, w = {state['w'].ravel()}")
