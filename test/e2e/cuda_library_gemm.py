# RUN: %python %s %dlc_src/examples
# Library GEMMs (module format 1.4) without a GPU: each graph's GEMM kernel is
# scheduled `implementation = library` by dlc-tile (passes/LibraryGemm.h) and
# carries the cuBLASLt call the CUDA back end recorded; cuda-emu computes
# that call by its definition under DLC_GEMM_LIBRARY=on (as cuBLASLt would:
# the arguments, transposes, batch strides and epilogue the compiler wrote),
# and the generated fallback under DLC_GEMM_LIBRARY=off. Both agree with the
# float64 oracle; the two differ in their last bits, which shows that the
# library path ran.
import os
import subprocess
import sys
import tempfile

import numpy as np
from dlc_numpy import load_safetensors, model_info, rel_error

EXAMPLES = sys.argv[1]
# Relative Frobenius error against the oracle: f32 results; bf16 ones
# (compared widened to f32).
F32, BF16 = 2e-5, 2e-2

GRAPHS = {
    "bias_gelu": ("""
graph f(x: f32[37, 50], w: f32[50, 70], b: f32[70]) -> (y: f32[37, 70]) {
  y = gelu(x @ w + b, approximate="tanh")
}""", "bias + GELU", F32),
    "transposed_bias_relu": ("""
graph f(a: f32[50, 37], b: f32[70, 50], c: f32[70]) -> (y: f32[37, 70]) {
  y = relu(matmul(a, b, transpose_a=true, transpose_b=true) + c)
}""", "bias + ReLU", F32),
    "batched_residual_relu": ("""
graph f(a: f32[3, 17, 20], b: f32[3, 20, 30], r: f32[3, 17, 30]) -> (y: f32[3, 17, 30]) {
  y = relu(r + a @ b)
}""", "residual + ReLU", F32),
    "rows_folded_bias": ("""
graph f(x: f32[2, 9, 40], w: f32[40, 24], b: f32[24]) -> (y: f32[2, 9, 24]) {
  y = x @ w + b
}""", "bias", F32),
    "bf16_bias_residual": ("""
graph f(a: bf16[16, 32], b: bf16[32, 24], c: bf16[24], r: bf16[16, 24]) -> (y: bf16[16, 24]) {
  y = a @ b + c + r
}""", "bias + residual", BF16),
}


def run(cmd, library=None):
    env = dict(os.environ)
    if library:
        env["DLC_GEMM_LIBRARY"] = library
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    assert result.returncode == 0, f"{' '.join(cmd)} exited with {result.returncode}:\n{result.stderr}"
    return result.stdout


def outputs_on(model, device, tmp, library=None, extra=()):
    names = model_info(model)["outputs"]
    path = os.path.join(tmp, f"{device}_{library}.safetensors")
    cmd = ["dlc", "run", model, "--seed=5", f"--device={device}", *extra]
    for n in names:
        cmd.append(f"--output={n}=@{path}")
    run(cmd, library)
    return load_safetensors(path)


def schedules(model, tmp, extra=()):
    mlir = os.path.join(tmp, "graph.mlir")
    with open(mlir, "w") as f:
        f.write(run(["dlc", "compile", model, "--emit=mlir", *extra]))
    return run(["dlc-opt", "--dlc-compile-cuda", mlir])


def check(name, model, tmp, epilogue, tol, extra=()):
    tiled = schedules(model, tmp, extra)
    if epilogue:
        assert f'reason = "cuBLASLt GEMM ({epilogue}); fallback:' in tiled, \
            f"{name}: no library GEMM with epilogue '{epilogue}':\n{tiled}"
    want = outputs_on(model, "reference", tmp, extra=extra)
    library = outputs_on(model, "cuda-emu", tmp, "on", extra)
    generated = outputs_on(model, "cuda-emu", tmp, "off", extra)
    for out, w in want.items():
        for label, got in (("library", library[out]), ("generated", generated[out])):
            assert got.shape == w.shape, f"{name}.{out}: {label} shape {got.shape}"
            err = rel_error(got, w)
            assert err <= tol, f"{name}.{out}: {label} vs oracle relative error {err:.3g} > {tol}"
        assert not np.array_equal(library[out], generated[out]), \
            f"{name}.{out}: the library and generated paths gave identical bits (did the library run?)"
    print(f"ok {name}: library and generated GEMMs agree with the oracle")


with tempfile.TemporaryDirectory() as tmp:
    for name, (source, epilogue, tol) in GRAPHS.items():
        path = os.path.join(tmp, name + ".dlg")
        with open(path, "w") as f:
            f.write(source.strip() + "\n")
        check(name, path, tmp, epilogue, tol)
    # The GPT-2 block: its output projection and MLP output (bias +
    # residual) and its fc layer (bias + GELU) are library GEMMs.
    gpt2 = os.path.join(EXAMPLES, "gpt2_block.dlg")
    check("gpt2_block", gpt2, tmp, "bias + GELU", F32, ("--dim=B=2", "--dim=T=16"))
print(f"{len(GRAPHS) + 1} graphs: library GEMMs agree with the oracle on cuda-emu")
