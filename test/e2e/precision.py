# RUN: %python %s %dlc_src/examples
# --precision tf32|bf16|f16 (dlc-precision, the tensor-core GEMM) without a
# GPU. For each mode and each graph (GEMM shapes that leave partial tiles,
# batched and transposed operands, a broadcast batch, a layout tail, a
# convolution as an implicit GEMM, and the examples):
#  1. cuda-emu runs the tensor-core kernels (mma.sync emulated lane by lane
#     from the PTX fragment layouts) and agrees with the float64 oracle of
#     the same IR (`--stage fused`: the casts the mode inserts included);
#     under tf32 the oracle's products are exact, so the tolerance is TF32's;
#  2. the CPU agrees with the same oracle (bf16);
#  3. the outputs' error against the f32 graph (as written) is reported and
#     within the mode's stated bound, 16 unit roundoffs normwise;
#  4. tf32 really rounds (its output differs from exact f32's), bf16/f16
#     attention runs on tensor cores with K/V copied by cp.async (the
#     emitted kernel says so), and
#     `dlc verify --precision` reports the same measurement.
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
MODES = ("tf32", "bf16", "f16")
UNIT_ROUNDOFF = {"tf32": 2.0**-11, "bf16": 2.0**-8, "f16": 2.0**-11}
# Kernels against the oracle of the same IR: bf16/f16 results of a matmul
# may round one unit apart (f32 sums in another order); TF32 operands are
# rounded by the kernels only.
AGAINST_ORACLE = {"tf32": 4e-3, "bf16": 1e-2, "f16": 2e-3}

GRAPHS = {
    "gemm_partial_tiles": """
graph f(x: f32[70, 33]) -> (y: f32[70, 45]) {
  param w: f32[33, 45] = normal(std=0.2, seed=1)
  param b: f32[45] = normal(std=0.2, seed=2)
  y = gelu(x @ w + b, approximate="tanh")
}""",
    "gemm_several_tiles": """
graph f(x: f32[200, 160]) -> (y: f32[200, 136]) {
  param w: f32[160, 136] = normal(std=0.1, seed=3)
  y = x @ w
}""",
    "batched_transposed": """
graph f(a: f32[3, 40, 17], b: f32[3, 20, 40]) -> (y: f32[3, 17, 20]) {
  y = matmul(a, b, transpose_a=true, transpose_b=true) * 0.5
}""",
    # Attention with bf16/f16 products runs on tensor cores (D = 16, 32):
    # several query tiles, causal key tiles skipped, a sliding window.
    "attention_causal": """
graph f(q: f32[1, 2, 150, 16], k: f32[1, 2, 150, 16], v: f32[1, 2, 150, 32]) -> (o: f32[1, 150, 64]) {
  row = iota(shape=[150, 150], axis=0, dtype=i32)
  col = iota(shape=[150, 150], axis=1, dtype=i32)
  a = softmax(select(ge(row, col), matmul(q, k, transpose_b=true) * 0.25, -1e9), axis=-1) @ v
  o = reshape(transpose(a, perm=[0, 2, 1, 3]), shape=[1, 150, 64])
}""",
    "attention_window": """
graph f(q: f32[2, 100, 32], k: f32[2, 100, 32], v: f32[2, 100, 16]) -> (o: f32[2, 100, 16]) {
  d = iota(shape=[100, 100], axis=0, dtype=i32) - iota(shape=[100, 100], axis=1, dtype=i32)
  o = softmax(select(ge(d * (29 - d), 0), matmul(q, k, transpose_b=true) * 0.2, -1e9), axis=-1) @ v
}""",
    # A convolution as an implicit GEMM on tensor cores (operands staged
    # through registers: the image is read through each pixel's window).
    "conv_implicit_gemm": """
graph f(x: f32[4, 16, 25, 23]) -> (y: f32[4, 40, 13, 11]) {
  param w: f32[40, 16, 3, 3] = normal(std=0.2, seed=1)
  param b: f32[40] = normal(std=0.2, seed=2)
  y = relu(conv2d(x, w, b, padding=[1, 1, 1, 0], stride=2))
}""",
    "broadcast_batch_layout_tail": """
graph f(x: f32[2, 24, 32], r: f32[2, 4, 24, 8]) -> (q: f32[2, 4, 24, 8]) {
  param w: f32[32, 32] = normal(std=0.2, seed=4)
  q = r + transpose(reshape(x @ w, shape=[2, 24, 4, 8]), perm=[0, 2, 1, 3])
}""",
}


def run(cmd, expect=0):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == expect, (
        f"{' '.join(cmd)} exited with {result.returncode}, not {expect}:\n{result.stderr}")
    return result.stdout


def dim_args(model):
    text = run(["dlc", "check", model])
    names = re.findall(r" (\w+)=\d+", (re.findall(r"^dimensions:.*$", text, re.M) or [""])[0])
    return [f"--dim={n}={DIMS.get(n, 2)}" for n in names]


def outputs(model, tmp, device, precision, extra=()):
    names = model_info(model)["outputs"]
    tag = f"{device}_{precision}_{len(extra)}"
    paths = {n: os.path.join(tmp, f"{tag}_{n}.npy") for n in names}
    cmd = ["dlc", "run", model, "--seed=3", f"--device={device}", f"--precision={precision}"]
    cmd += dim_args(model) + list(extra) + [f"--output={n}=@{p}" for n, p in paths.items()]
    run(cmd)
    return {n: np.load(p).astype(np.float64) for n, p in paths.items()}


def check(name, model, tmp):
    exact = outputs(model, tmp, "reference", "f32")
    f32_emu = outputs(model, tmp, "cuda-emu", "f32")
    for mode in MODES:
        oracle = outputs(model, tmp, "reference", mode, ["--stage=fused"])
        emu = outputs(model, tmp, "cuda-emu", mode)
        # The CPU computes bf16 and f16 alike (float arithmetic on rounded
        # values) and tf32 as f32: one mode covers it.
        cpu = outputs(model, tmp, "cpu", mode) if mode == "bf16" else None
        report = []
        for out, want in oracle.items():
            tol = AGAINST_ORACLE[mode]
            err = rel_error(emu[out], want)
            assert err <= tol, f"{name}.{out} {mode}: cuda-emu vs oracle {err:.3g} > {tol}"
            if cpu:
                err = rel_error(cpu[out], want)
                assert err <= tol, f"{name}.{out} {mode}: cpu vs oracle {err:.3g} > {tol}"
            against_f32 = rel_error(emu[out], exact[out])
            bound = 16 * UNIT_ROUNDOFF[mode]
            assert against_f32 <= bound, (
                f"{name}.{out} {mode}: {against_f32:.3g} from f32, above the stated {bound:.3g}")
            if mode == "tf32" and name.startswith(("gemm", "conv")):
                assert not np.array_equal(emu[out], f32_emu[out]), (
                    f"{name}.{out}: tf32 equals exact f32: the operands were not rounded")
            report.append(f"{out} {against_f32:.2e}")
        print(f"ok {name} {mode}: error against f32 {', '.join(report)}")


with tempfile.TemporaryDirectory() as tmp:
    models = {}
    for example in ("mnist_mlp.dlg", "gpt2_block.dlg"):
        name = os.path.splitext(example.replace("/", "_"))[0]
        path = os.path.join(tmp, name + ".dlg")
        with open(os.path.join(EXAMPLES, example)) as f, open(path, "w") as g:
            g.write(randomise_constant_params(f.read()))
        models[name] = path
    for name, source in GRAPHS.items():
        path = os.path.join(tmp, name + ".dlg")
        with open(path, "w") as f:
            f.write(source.strip() + "\n")
        models[name] = path
    for name, model in models.items():
        if name != "mnist_mlp":  # the GEMM graphs cover it; dlc verify below runs it
            check(name, model, tmp)

    for mode in MODES:
        model = models["conv_implicit_gemm"]
        text = run(["dlc", "compile", model, "--target=cuda:sm_90", f"--precision={mode}",
                    "--emit=cuda"] + dim_args(model))
        assert "on tensor cores (mma.sync.m16n8k" in text and "ih >= 0 && ih < 25" in text, mode

    for name in ("attention_causal", "attention_window", "gpt2_block"):
        model = models[name]
        for mode in ("bf16", "f16"):
            text = run(["dlc", "compile", model, "--target=cuda:sm_90", f"--precision={mode}",
                        "--emit=cuda"] + dim_args(model))
            assert f"flash attention on tensor cores (dlc_mma_{mode}" in text, f"{name} {mode}"
            # K and V are casts' results in kernel arguments: copied by cp.async
            # into two stages, V's fragments by ldmatrix.trans.
            assert "2 stages of K" in text and "dlc_ldmatrix_x4_trans(&b[0][0], sV" in text, name

    # dlc verify reports the error against f32 with the stated bound.
    model = models["mnist_mlp"]
    text = run(["dlc", "verify", model, "--device=cuda-emu", "--precision=bf16"] + dim_args(model))
    assert "--precision bf16: the outputs against the f32 graph's" in text, text
    assert re.search(r"stated at most 0\.0625", text), text
    assert "every kernel is within tolerance" in text, text
    # A compiled module's precision is fixed: --precision with a .dlcm is refused.
    module = os.path.join(tmp, "mlp.dlcm")
    run(["dlc", "compile", model, "--precision=bf16", "-o", module] + dim_args(model))
    err = subprocess.run(["dlc", "run", module, "--precision=bf16", "--random-inputs"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert err.returncode == 2 and "--precision bf16 is chosen when a model is compiled" in err.stderr, err
    err = subprocess.run(["dlc", "run", model, "--precision=fp8", "--random-inputs"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert err.returncode == 2 and "--precision must be f32, tf32, bf16 or f16" in err.stderr, err
print(f"{len(models) - 1} models agree in tf32, bf16 and f16 on cuda-emu and the CPU")
