# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# The partitioned MLP, LeNet and GPT-2 block — data parallel on data=2 and
# data=4, Megatron tensor parallel on model=2, both on data=2 x model=2 —
# run on every rank by the oracle's SPMD simulation, equal the
# unpartitioned graph (relative 1e-6; the errors are printed). So do their
# loss and parameter gradients (`--gradients`: the train block's loss graph
# differentiated, then partitioned): data parallelism's gradient
# all-reduces and the global count of a mean loss come out of the
# partitioner, as DDP's bucketed all-reduce computes them.
import os
import subprocess
import sys

import numpy as np

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
models = {
    "mlp": (os.path.join(root, "examples", "mnist_mlp.dlg"), ["--dim", "N=8"], "logits"),
    "lenet": (os.path.join(root, "examples", "lenet.dlg"), ["--dim", "N=4"], "logits"),
    "gpt2": (os.path.join(root, "examples", "gpt2_block.dlg"), ["--dim", "B=4", "--dim", "T=8"], "y"),
}
configs = [("data=2", "data"), ("data=4", "data"), ("model=2", "tensor"),
           ("data=2,model=2", "data,tensor")]


def run(path, dims, output, extra):
    out = os.path.join(tmp, "out.npy")
    subprocess.run(["dlc", "run", path, "--device", "reference", "--seed", "3"] + dims + extra +
                   ["--output", f"{output}=@{out}"], check=True, capture_output=True, text=True)
    return np.load(out).astype(np.float64)


worst_all = 0.0
for name, (path, dims, output) in models.items():
    expected = run(path, dims, output, [])
    for mesh, preset in configs:
        got = run(path, dims, output, ["--mesh", mesh, "--parallel", preset])
        err = float(np.max(np.abs(got - expected)) / max(np.max(np.abs(expected)), 1e-30))
        print(f"{name} --mesh {mesh} --parallel {preset}: max rel error {err:.2e}")
        assert got.shape == expected.shape and err <= 1e-6, (name, mesh, preset, err)
        worst_all = max(worst_all, err)

def gradients(path, dims, extra):
    out = os.path.join(tmp, "grads.npz")
    subprocess.run(["dlc", "run", path, "--device", "reference", "--seed", "3"] + dims + extra +
                   ["--gradients", out], check=True, capture_output=True, text=True)
    return {k: v.astype(np.float64) for k, v in np.load(out).items()}


gpt2_train = os.path.join(tmp, "gpt2_train.dlg")
with open(gpt2_train, "w") as f:
    f.write(open(models["gpt2"][0]).read() + """
train gpt2_block(target: f32[B, T, 768]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.0001)
}
""")
trained = {"mlp": models["mlp"][:2], "lenet": models["lenet"][:2],
           "gpt2": (gpt2_train, models["gpt2"][1])}
for name, (path, dims) in trained.items():
    expected = gradients(path, dims, [])
    for mesh, preset in configs:
        got = gradients(path, dims, ["--mesh", mesh, "--parallel", preset])
        # Relative to each gradient's size, or to 1e-6 of the largest where
        # a gradient is zero in exact arithmetic (the key bias's: softmax
        # ignores a shift of every score) and holds rounding noise only.
        largest = max(float(np.max(np.abs(v))) for v in expected.values())
        err = max(float(np.max(np.abs(got[k] - v)) /
                        max(float(np.max(np.abs(v))), 1e-6 * largest))
                  for k, v in expected.items())
        print(f"{name} gradients --mesh {mesh} --parallel {preset}: max rel error {err:.2e}")
        assert sorted(got) == sorted(expected) and err <= 1e-5, (name, mesh, preset, err)
        worst_all = max(worst_all, err)
print(f"all equal to the unpartitioned graph; worst {worst_all:.2e}")
