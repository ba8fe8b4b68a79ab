# RUN: %python %s %dlc_src/examples
# The CUDA code generator, verified without a GPU: every example (its zero/one
# parameters drawn at random so that biases and norm scales count) and one
# graph per fusion pattern and kernel family run on --device cuda-emu (the
# generated CUDA C++ compiled by the host compiler with dlc_cuda_emu.h) and
# on --device reference (the float64 oracle) from the same seed; the outputs
# agree within the dtype's tolerance (relative Frobenius error).
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from dlc_numpy import model_info, randomise_constant_params, rel_error

EXAMPLES = sys.argv[1]
DIMS = {"N": 3, "B": 2, "T": 16}
TOLERANCE = {"float64": 1e-12, "float32": 2e-5, "float16": 2e-3, "bfloat16": 2e-2}

# One graph per fusion pattern (dlc-fuse) and kernel family (codegen/cuda).
PATTERNS = {
    "elementwise_chain": """
graph f(x: f32[37, 50], y: f32[50]) -> (z: f32[37, 50], w: f32[37, 50]) {
  z = tanh(x * 2.0 + y) - sigmoid(x)
  w = gelu(z, approximate="tanh") + relu(x) / (abs(y) + 1.0)
}""",
    "elementwise_vectorised": """
graph f(x: f32[1024, 600], b: f32[600]) -> (y: f32[1024, 600]) {
  y = relu(x + b) * 0.5
}""",
    "broadcast_transpose_slice": """
graph f(x: f32[4, 6, 8]) -> (y: f32[8, 4, 3]) {
  t = transpose(x, perm=[2, 0, 1])
  y = exp(slice(t, starts=[0, 0, 1], ends=[8, 4, 4]))
}""",
    "contraction_bias_gelu": """
graph f(x: f32[70, 33]) -> (y: f32[70, 45]) {
  param w: f32[33, 45] = normal(std=0.2, seed=1)
  param b: f32[45] = normal(std=0.2, seed=2)
  y = gelu(x @ w + b, approximate="tanh")
}""",
    "contraction_residual": """
graph f(x: f32[2, 9, 40], r: f32[2, 9, 24]) -> (y: f32[2, 9, 24]) {
  param w: f32[40, 24] = normal(std=0.2, seed=3)
  y = r + x @ w
}""",
    "contraction_transposed_operands": """
graph f(a: f32[3, 17, 12], b: f32[3, 20, 17]) -> (y: f32[3, 12, 20]) {
  y = matmul(a, b, transpose_a=true, transpose_b=true) * 0.5
}""",
    "contraction_layout_tail": """
graph f(x: f32[2, 5, 32]) -> (q: f32[2, 4, 5, 8]) {
  param w: f32[32, 32] = normal(std=0.2, seed=4)
  q = transpose(reshape(x @ w, shape=[2, 5, 4, 8]), perm=[0, 2, 1, 3])
}""",
    # Few tiles and a long K (a weight gradient): split-K, each slice's
    # block storing its partial tile, the tile's last block summing them in
    # slice order before the epilogue; a convolution likewise.
    "contraction_split_k": """
graph f(a: f32[5000, 70], b: f32[5000, 90], r: f32[70, 90]) -> (y: f32[70, 90]) {
  y = relu(matmul(a, b, transpose_a=true) * 0.1 + r)
}""",
    "conv_implicit_gemm_split_k": """
graph f(x: f32[9, 256, 8, 8]) -> (y: f32[9, 64, 8, 8]) {
  param w: f32[64, 256, 3, 3] = normal(std=0.05, seed=1)
  param b: f32[64] = normal(std=0.1, seed=2)
  y = relu(conv2d(x, w, b, padding=1))
}""",
    "softmax_rows": """
graph f(x: f32[6, 300]) -> (a: f32[6, 300], b: f32[6, 300]) {
  a = softmax(x * 3.0)
  b = log_softmax(x, axis=-1)
}""",
    "softmax_inner_axis": """
graph f(x: f32[3, 7, 5]) -> (a: f32[3, 7, 5]) {
  a = softmax(x, axis=1)
}""",
    "layer_norm": """
graph f(x: f32[4, 10, 96]) -> (y: f32[4, 10, 96]) {
  param g: f32[96] = uniform(low=0.5, high=1.5, seed=5)
  param b: f32[96] = normal(std=0.1, seed=6)
  y = layer_norm(x + 1.0, g, b, axis=-1, epsilon=1e-5)
}""",
    "rms_norm_two_axes": """
graph f(x: f32[3, 6, 20]) -> (y: f32[3, 6, 20]) {
  param g: f32[6, 20] = uniform(low=0.5, high=1.5, seed=7)
  y = rms_norm(x, g, axis=-2, epsilon=1e-6)
}""",
    # Rows enough for every warp of 4 on each SM 4 times over (2112 on
    # sm_90), none longer than 1024: a warp per row (warp_rows), shuffles
    # only; a two-stage row (softmax of a norm) and reductions among them.
    "warp_rows": """
graph f(x: f32[2200, 100], y: f32[40, 60, 96]) -> (a: f32[2200, 100], b: f32[2200, 100],
    c: f32[40, 60, 96], d: f32[40, 60, 96], m: f32[40, 60, 1], n: f32[40, 60]) {
  param g: f32[96] = uniform(low=0.5, high=1.5, seed=5)
  param bb: f32[96] = normal(std=0.1, seed=6)
  a = softmax(x * 3.0)
  b = log_softmax(x, axis=-1) + 1.0
  c = softmax(layer_norm(y + 1.0, g, bb, axis=-1, epsilon=1e-5) * 2.0)
  d = rms_norm(y, g, axis=-1, epsilon=1e-6)
  m = reduce_max(y, axes=[2], keepdims=true)
  n = reduce_mean(y * y, axes=[-1])
}""",
    "reductions": """
graph f(x: f32[5, 6, 70]) -> (s: f32[5, 6], m: f32[5, 1, 70], mx: f32[6], mn: f32[5, 6, 1]) {
  s = reduce_sum(x, axes=[-1])
  m = reduce_mean(x, axes=[1], keepdims=true)
  mx = reduce_max(x, axes=[0, 2])
  mn = reduce_min(x, axes=[2], keepdims=true)
}""",
    # Reductions to a vector (a bias gradient and its update fused after
    # it) have one row: spread over blocks by chunks of outputs and slices
    # of the reduced elements, the last block of a chunk combining the
    # slices (SplitReduction.cpp); column and row sums, max/min, a mean, a
    # total and keepdims.
    "split_reductions": """
graph f(x: f32[64, 48, 300], y: f32[5000, 70], z: f32[3, 4000]) -> (b: f32[300], s: f32[5000],
    m: f32[1, 1, 300], t: f32[], u: f32[300], w: f32[3]) {
  param p: f32[300] = normal(std=0.1, seed=1)
  b = p - 0.1 * reduce_sum(x * 2.0, axes=[0, 1])
  s = reduce_mean(y, axes=[1])
  m = reduce_max(x, axes=[0, 1], keepdims=true)
  t = reduce_sum(z, axes=[0, 1])
  u = reduce_min(x, axes=[0, 1])
  w = reduce_sum(z, axes=[1])
}""",
    "conv_pool": """
graph f(x: f32[2, 3, 12, 11]) -> (a: f32[2, 4, 6, 5], b: f32[2, 4, 5, 5]) {
  param w: f32[4, 3, 3, 3] = normal(std=0.3, seed=8)
  param bias: f32[4] = normal(std=0.1, seed=9)
  c = relu(conv2d(x, w, bias, padding=1))
  a = max_pool2d(c, kernel=2, stride=2)
  b = avg_pool2d(c, kernel=3, stride=2, padding=0)
}""",
    # Convolutions with 16 or more output channels a group and enough tiles
    # run as an implicit GEMM (the matmul template reading each output
    # pixel's window as k): stride 2, padding on three sides only, bias,
    # ReLU and a residual in the epilogue, partial tiles in m and n.
    "conv_implicit_gemm": """
graph f(x: f32[4, 16, 25, 23], r: f32[4, 40, 13, 11]) -> (y: f32[4, 40, 13, 11]) {
  param w: f32[40, 16, 3, 3] = normal(std=0.2, seed=1)
  param b: f32[40] = normal(std=0.2, seed=2)
  y = relu(conv2d(x, w, b, padding=[1, 1, 1, 0], stride=2)) + r
}""",
    # Two groups (a batch each), dilation 2, the result transposed on store.
    "conv_implicit_gemm_groups_tail": """
graph f(x: f32[4, 32, 20, 18]) -> (y: f32[4, 16, 18, 40]) {
  param w: f32[40, 16, 3, 3] = normal(std=0.2, seed=13)
  y = transpose(conv2d(relu(x - 0.2), w, groups=2, dilation=2, padding=1), perm=[0, 3, 2, 1])
}""",
    "losses": """
graph f(x: f32[8, 10], t: f32[8, 10], l: i32[8]) -> (ce: f32[], ms: f32[], each: f32[8]) {
  ce = cross_entropy(x, l)
  ms = mse(x, t, reduction="sum")
  each = cross_entropy(x, l, reduction="none")
}""",
    # The labels drawn for --seed=3 are l = [4, 3, 1, 4, 1, 3, 5, 3] and
    # k = [[4, 8, 4], [4, 4, 3]]: every ignore_index below occurs.
    "losses_smoothing_ignore": """
graph f(x: f32[8, 10], l: i32[8], y: f32[2, 3, 10], k: i64[2, 3]) -> (
    s: f32[], n: f32[8], sm: f32[], ig: f32[], each: f32[2, 3], none: f32[]) {
  s = cross_entropy(x, l, label_smoothing=0.1, ignore_index=3)
  n = cross_entropy(x, l, reduction="none", label_smoothing=0.2, ignore_index=5)
  sm = cross_entropy(x, l, reduction="sum", ignore_index=1)
  ig = cross_entropy(y, k, ignore_index=4, label_smoothing=0.3)
  each = cross_entropy(y, k, reduction="none", ignore_index=4)
  none = cross_entropy(x, l * 0 + 7, ignore_index=7)
}""",
    "data_only_dtypes": """
graph f(x: f32[4, 6], u: u8[4, 6], s: i8[6], m: i1[4, 6], i: i32[3]) -> (
    to_u8: u8[4, 6], to_i8: i8[4, 6], from_u8: f32[6, 4], from_i8: f16[4, 6],
    moved: u8[4, 7], picked: i8[4, 3], chosen: u8[4, 6], padded: i8[9], same: i1[4, 6]) {
  to_u8 = cast(x * 300, to=u8)
  to_i8 = cast(x * 300, to=i8)
  from_u8 = transpose(cast(u, to=f32), perm=[1, 0]) / 255
  from_i8 = cast(to_i8, to=f16)
  moved = concat(to_u8, slice(u, starts=[0], ends=[1], axes=[1]), axis=1)
  picked = gather(to_i8, i / 2, axis=1)
  chosen = select(m, u, cast(x * 1000, to=u8))
  padded = pad(s, low=[1], high=[2], value=-7)
  same = eq(cast(to_i8, to=u8), to_u8)
}""",
    "attention": """
graph f(x: f32[2, 24, 32]) -> (y: f32[2, 24, 32]) {
  param wq: f32[32, 32] = normal(std=0.3, seed=10)
  param wk: f32[32, 32] = normal(std=0.3, seed=11)
  param wv: f32[32, 32] = normal(std=0.3, seed=12)
  q = transpose(reshape(x @ wq, shape=[2, 24, 4, 8]), perm=[0, 2, 1, 3])
  k = transpose(reshape(x @ wk, shape=[2, 24, 4, 8]), perm=[0, 2, 1, 3])
  v = transpose(reshape(x @ wv, shape=[2, 24, 4, 8]), perm=[0, 2, 1, 3])
  s = matmul(q, k, transpose_b=true) * 0.35
  row = iota(shape=[24, 24], axis=0, dtype=i32)
  col = iota(shape=[24, 24], axis=1, dtype=i32)
  p = softmax(select(ge(row, col), s, -1e9), axis=-1)
  y = reshape(transpose(p @ v, perm=[0, 2, 1, 3]), shape=[2, 24, 32])
}""",
    # Two query tiles of 64 and more: the flash kernel skips the key tiles
    # the constant mask leaves out (causal; a sliding window of 40 keys).
    "attention_causal_skips": """
graph f(q: f32[1, 2, 150, 16], k: f32[1, 2, 150, 16], v: f32[1, 2, 150, 16]) -> (o: f32[1, 2, 150, 16]) {
  row = iota(shape=[150, 150], axis=0, dtype=i32)
  col = iota(shape=[150, 150], axis=1, dtype=i32)
  o = softmax(select(ge(row, col), matmul(q, k, transpose_b=true) * 0.25, -1e9), axis=-1) @ v
}""",
    "attention_sliding_window": """
graph f(q: f32[1, 2, 150, 16], k: f32[1, 2, 150, 16], v: f32[1, 2, 150, 16]) -> (o: f32[1, 2, 150, 16]) {
  d = iota(shape=[150, 150], axis=0, dtype=i32) - iota(shape=[150, 150], axis=1, dtype=i32)
  o = softmax(select(ge(d * (39 - d), 0), matmul(q, k, transpose_b=true) * 0.25, -1e9), axis=-1) @ v
}""",
    "f16_and_casts": """
graph f(x: f16[16, 40], y: f32[40, 8]) -> (h: f16[16, 8], i: i32[16, 40]) {
  z = cast(x, to=f32) @ y
  h = cast(z, to=f16)
  i = cast(x * 3.0, to=i32)
}""",
}


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} exited with {result.returncode}:\n{result.stderr}"
    return result.stdout


def dim_args(model):
    text = run(["dlc", "check", model])
    names = re.findall(r" (\w+)=\d+", (re.findall(r"^dimensions:.*$", text, re.M) or [""])[0])
    return [f"--dim={n}={DIMS.get(n, 2)}" for n in names]


def outputs_on(model, device, tmp):
    names = model_info(model)["outputs"]
    paths = {n: os.path.join(tmp, f"{device}_{n}.npy") for n in names}
    cmd = ["dlc", "run", model, "--seed=3", f"--device={device}"] + dim_args(model)
    for n, p in paths.items():
        cmd.append(f"--output={n}=@{p}")
    run(cmd)
    return {n: np.load(p) for n, p in paths.items()}


def check(name, model, tmp):
    got = outputs_on(model, "cuda-emu", tmp)
    want = outputs_on(model, "reference", tmp)
    for out, w in want.items():
        g = got[out]
        assert g.dtype == w.dtype and g.shape == w.shape, f"{name}.{out}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        if w.dtype.kind in "iub":
            assert np.array_equal(g, w), f"{name}.{out}: integers differ"
            continue
        tol = TOLERANCE.get(str(w.dtype), 2e-2)
        nan = np.isnan(w)  # NaN where the oracle has NaN, and only there
        assert np.array_equal(np.isnan(g), nan), f"{name}.{out}: NaN differs"
        err = rel_error(np.where(nan, 0, g), np.where(nan, 0, w))
        assert err <= tol, f"{name}.{out}: cuda-emu vs oracle relative error {err:.3g} > {tol}"
    print(f"ok {name}: {', '.join(want)}")


checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for example in sorted(glob.glob(os.path.join(EXAMPLES, "*.dlg")) +
                          glob.glob(os.path.join(EXAMPLES, "fashion_mnist", "*.dlg"))):
        name = os.path.splitext(os.path.basename(example))[0]
        randomised = os.path.join(tmp, name + ".dlg")
        with open(example) as f, open(randomised, "w") as g:
            g.write(randomise_constant_params(f.read()))
        check(name, randomised, tmp)
        checked += 1
    for name, source in PATTERNS.items():
        path = os.path.join(tmp, name + ".dlg")
        with open(path, "w") as f:
            f.write(source.strip() + "\n")
        check(name, path, tmp)
        checked += 1
print(f"{checked} models agree on cuda-emu and the oracle")
