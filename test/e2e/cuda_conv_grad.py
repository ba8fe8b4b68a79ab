# RUN: %python %s %dlc_src/examples/fashion_mnist/cnn.dlg %t
# A convolution's weight gradient is a convolution whose window is the
# batch times the image (tens of thousands of products per output): its
# rows kernel gives a warp each output element, the lanes splitting the
# window and summing by shuffles (codegen/cuda/Windows.cpp); and since its
# result is transposed (one row for the kernel's own split), its rows are
# the convolution's (Rows.cpp: layoutTailSplit), a block each. The
# Fashion-MNIST CNN's gradients on cuda-emu, with both weight gradients in
# that form, agree with the float64 oracle's.
# Wider convolutions run as implicit GEMMs (codegen/cuda/Gemm.cpp): in a
# net of a 3x3 and a 1x1 convolution of 32 channels, both forward
# convolutions and the 1x1's input gradient do, the weight gradients keep the
# warp per output, and the gradients agree with the oracle's too.
import os
import subprocess
import sys

import numpy as np

MODEL, TMP = sys.argv[1], sys.argv[2]
os.makedirs(TMP, exist_ok=True)
ARGS = ["--dim=N=8", "--seed=3"]


def run(*cmd):
    r = subprocess.run(["dlc", *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"dlc {' '.join(cmd)}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


source = run("compile", MODEL, "--train", "--target=cuda:sm_90", "--emit=cuda", ARGS[0])
windows = source.count("a warp per output element, its lanes splitting the window")
assert windows == 2, f"{windows} convolutions take a warp per output, not the 2 weight gradients"
split = source.count("rows of the convolution: results through their layout")
assert split == 2, f"{split} convolutions split by their own rows, not the 2 weight gradients"


def gradients_agree(model, tag, args):
    paths = {d: os.path.join(TMP, f"{tag}_{d}.npz") for d in ("cuda-emu", "reference")}
    for device, path in paths.items():
        run("run", model, f"--device={device}", f"--gradients={path}", *args)
    emu, ref = (np.load(p) for p in paths.values())
    for name in ref.files:
        x, y = emu[name].astype(np.float64), ref[name].astype(np.float64)
        err = float(np.linalg.norm(x - y) / max(np.linalg.norm(y), 1e-30))
        print(f"{tag} {name:10} {err:.1e}")
        assert err < 2e-5, (tag, name, err)


gradients_agree(MODEL, "cnn", ARGS)

WIDE = os.path.join(TMP, "wide.dlg")
with open(WIDE, "w") as f:
    f.write("""
graph f(x: f32[8, 16, 16, 16]) -> (y: f32[8, 32, 16, 16]) {
  param w: f32[32, 16, 3, 3] = normal(std=0.2, seed=1)
  param b: f32[32] = normal(std=0.2, seed=2)
  param w2: f32[32, 32, 1, 1] = normal(std=0.2, seed=3)
  y = conv2d(relu(conv2d(x, w, b, padding=1)), w2)
}

train f(t: f32[8, 32, 16, 16]) {
  loss = mse(y, t)
  optimizer = sgd(lr=0.1)
}
""")
source = run("compile", WIDE, "--train", "--target=cuda:sm_90", "--emit=cuda")
gemms = source.count("matmul schedule (convolution as an implicit GEMM")
assert gemms == 3, f"{gemms} convolutions as implicit GEMMs, not 3 (two forward, one input gradient)"
windows = source.count("a warp per output element, its lanes splitting the window")
assert windows == 2, f"{windows} convolutions take a warp per output, not the 2 weight gradients"
gradients_agree(WIDE, "wide", ["--seed=3"])
print("gradients agree")
