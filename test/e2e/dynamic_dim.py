# RUN: %python %s
# One module for a range of batch sizes (issue 14 item 4): `dlc compile
# --dim N=1..64` writes one .dlcm that runs N = 1, 7, 64 with outputs bit
# for bit those of modules compiled for each N (the CPU), within 1e-6 on
# cuda-emu; N outside the range, and models whose rows of N mix, are clear
# errors (exit 2).
import os
import subprocess
import sys
import tempfile

import numpy as np
from dlc_numpy import example

tmp = tempfile.mkdtemp(prefix="dlc-dynamic-")


def dlc(*args, expect=0):
    r = subprocess.run(["dlc", *map(str, args)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != expect:
        sys.exit(f"dlc {' '.join(map(str, args))}: exit {r.returncode}, expected {expect}\n"
                 f"{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def compile_module(model, name, dims, target="cpu"):
    out = os.path.join(tmp, name + ".dlcm")
    dlc("compile", model, *[f"--dim={d}" for d in dims], f"--target={target}", "-o", out)
    return out


def random_input(name, shape):
    if name == "tokens":  # char_lm's byte ids: an embedding's checked indices
        return rng.integers(0, 128, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def run(module, inputs, output, device="cpu", dims=()):
    args = ["run", module, f"--device={device}", *[f"--dim={d}" for d in dims]]
    for name, array in inputs.items():
        path = os.path.join(tmp, f"in_{name}.npy")
        np.save(path, array)
        args.append(f"--input={name}=@{path}")
    out = os.path.join(tmp, "out.npy")
    dlc(*args, f"--output={output}=@{out}")
    return np.load(out)


rng = np.random.default_rng(7)


def onnx_mlp(path):
    """An ONNX MLP whose batch is the symbolic dimension 'batch' (dim_param)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1, name="softmax")]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


# (model, the dimension, other dims, input name -> shape at n, output, sizes)
cases = [
    (example("mnist_mlp"), "N", [], lambda n: {"x": (n, 784)}, "logits", 64, [1, 7, 64]),
    (example("lenet"), "N", [], lambda n: {"x": (n, 1, 28, 28)}, "logits", 16, [1, 7, 16]),
    (example("gpt2_block"), "B", ["T=16"], lambda n: {"x": (n, 16, 768)}, "y", 4, [1, 3, 4]),
    (onnx_mlp(os.path.join(tmp, "mlp.onnx")), "batch", [], lambda n: {"x": (n, 16)}, "y", 32,
     [1, 5, 32]),
    # Embeddings (data checks), and heads laid out [1, N, heads, T, 16].
    (os.path.join(os.path.dirname(example("lenet")), "char_lm", "char_lm.dlg"), "N", [],
     lambda n: {"tokens": (n, 64)}, "logits", 8, [1, 3, 8]),
]
for model, dim, others, shapes, output, top, sizes in cases:
    label = os.path.basename(model)
    dynamic = compile_module(model, label + "-dyn", [f"{dim}=1..{top}", *others])
    info = dlc("check", dynamic)
    assert f"dynamic dimension: {dim} in 1..{top}" in info, info
    for n in sizes:
        inputs = {k: random_input(k, s) for k, s in shapes(n).items()}
        fixed = compile_module(model, f"{label}-{n}", [f"{dim}={n}", *others])
        want = run(fixed, inputs, output)
        got = run(dynamic, inputs, output)
        assert got.shape == want.shape, (label, n, got.shape, want.shape)
        if not np.array_equal(got, want):
            diff = np.max(np.abs(got.astype(np.float64) - want))
            sys.exit(f"{label} at {dim}={n}: the range module differs from the one for "
                     f"{dim}={n} (max |diff| {diff})")
        # --dim names the size too; with the inputs it must agree.
        again = run(dynamic, inputs, output, dims=[f"{dim}={n}"])
        assert np.array_equal(again, want), (label, n)
    print(f"{label}: {dim}=1..{top} equals the modules for {sizes} bit for bit")

# cuda-emu: the CUDA kernels run whole over inputs padded with valid rows.
model, dim, others, shapes, output, top, sizes = cases[0]
dynamic = compile_module(model, "mlp-cuda-dyn", [f"{dim}=1..{top}"], target="cuda")
for n in [1, 7, 64]:
    inputs = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes(n).items()}
    fixed = compile_module(model, f"mlp-cuda-{n}", [f"{dim}={n}"], target="cuda")
    want = run(fixed, inputs, output, device="cuda-emu")
    got = run(dynamic, inputs, output, device="cuda-emu")
    err = np.max(np.abs(got.astype(np.float64) - want)) if got.size else 0.0
    assert got.shape == want.shape and err <= 1e-6, (n, got.shape, err)
print("mnist_mlp on cuda-emu: N=1..64 within 1e-6 of the modules for 1, 7, 64")

# Sizes outside the range, and other dims, are refused by name.
dynamic = os.path.join(tmp, "mnist_mlp.dlg-dyn.dlcm")
msg = dlc("run", dynamic, "--dim=N=65", "--random-inputs", expect=2)
assert "was compiled for N in 1..64" in msg, msg
msg = dlc("run", dynamic, "--dim=M=3", "--random-inputs", expect=2)
assert "its one dimension chosen at run time is N (1..64)" in msg, msg
x = np.zeros((3, 783), np.float32)
np.save(os.path.join(tmp, "bad.npy"), x)
msg = dlc("run", dynamic, f"--input=x=@{os.path.join(tmp, 'bad.npy')}", expect=2)
assert "x" in msg, msg
msg = dlc("run", example("mnist_mlp"), "--dim=N=1..4", "--random-inputs", expect=2)
assert "is for dlc compile" in msg, msg

# An index out of range at N=3 is the same located data error as in a
# module compiled for 3 (the rows beyond N, padding or not, check nothing).
char_lm = os.path.join(tmp, "char_lm.dlg-dyn.dlcm")
bad = np.zeros((3, 64), np.int32)
bad[2, 5] = 200
np.save(os.path.join(tmp, "tokens.npy"), bad)
msg = dlc("run", char_lm, f"--input=tokens=@{os.path.join(tmp, 'tokens.npy')}", expect=3)
assert "char_lm.dlg:" in msg and "200" in msg, msg

# A model whose rows of N mix cannot serve a range: the op is named.
mixed = os.path.join(tmp, "mixed.dlg")
with open(mixed, "w") as f:
    f.write("graph mixed(x: f32[N, 4]) -> (y: f32[N, 4]) {\n"
            "  y = softmax(x, axis=0)\n"
            "}\n")
msg = dlc("compile", mixed, "--dim=N=1..8", "-o", os.path.join(tmp, "mixed.dlcm"), expect=2)
assert "mixed.dlg:2:" in msg and "--dim N=1..8" in msg and "softmax" in msg, msg
print("errors: out of range, unknown dim, wrong shape, mixed rows")
