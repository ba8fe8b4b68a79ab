# RUN: %python %s
# The cp.async-fed tensor-core GEMM (codegen/cuda/MmaPipelined.cpp) on
# cuda-emu, in every operand layout it copies: k-contiguous and
# rows-contiguous lhs and rhs (transpose_a/transpose_b), a broadcast weight,
# partial tiles in m, n and k, for bf16, f16 and tf32. The emulated
# ldmatrix (.trans too), the swizzled stage layout and the stage ring must
# give the float64 product of the operands as the instruction rounds them
# (bf16/f16 casts, TF32's cvt.rna), the bf16/f16 product rounded once to
# its type. The kernel's comment says which template ran; each module also
# compiles with NVRTC for sm_80 and sm_90 (cp.async, ldmatrix are sm_80+).
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

CASES = {
    # name: (signature, expression, operand shapes, numpy form)
    "plain": ("a: f32[2, 100, 40], b: f32[40, 72]", "a @ b",
              [(2, 100, 40), (40, 72)], lambda a, b: a @ b),
    "transpose_b": ("a: f32[2, 96, 64], b: f32[160, 64]", "matmul(a, b, transpose_b=true)",
                    [(2, 96, 64), (160, 64)], lambda a, b: a @ b.T),
    "transpose_a": ("a: f32[2, 64, 96], b: f32[64, 136]", "matmul(a, b, transpose_a=true)",
                    [(2, 64, 96), (64, 136)], lambda a, b: np.swapaxes(a, -1, -2) @ b),
    "both": ("a: f32[3, 48, 80], b: f32[3, 24, 48]",
             "matmul(a, b, transpose_a=true, transpose_b=true)", [(3, 48, 80), (3, 24, 48)],
             lambda a, b: np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2)),
    "large": ("a: f32[256, 512], b: f32[512, 384]", "a @ b",
              [(256, 512), (512, 384)], lambda a, b: a @ b),
}


def bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def f16(x):
    return x.astype(np.float16).astype(np.float64)


def tf32(x):  # cvt.rna: to nearest, ties away from zero
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32).astype(np.float64)


ROUND = {"bf16": bf16, "f16": f16, "tf32": tf32}


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


rng = np.random.default_rng(1)
failures = []
with tempfile.TemporaryDirectory() as tmp:
    model, a_path, b_path, c_path = (os.path.join(tmp, n) for n in
                                     ("g.dlg", "a.npy", "b.npy", "c.npy"))
    for precision, rnd in ROUND.items():
        for name, (signature, expr, shapes, form) in CASES.items():
            out = form(*[np.zeros(s) for s in shapes]).shape
            with open(model, "w") as f:
                f.write(f"graph g({signature}) -> (c: f32[{', '.join(map(str, out))}]) {{\n"
                        f"  c = {expr}\n}}\n")
            a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
            np.save(a_path, a)
            np.save(b_path, b)
            source = run(["dlc", "compile", model, f"--precision={precision}",
                          "--target=cuda:sm_90", "--emit=cuda"])
            assert "cp.async stages" in source, f"{precision} {name}: not the pipelined GEMM"
            ldmatrix = re.search(r"dlc_ldmatrix_x4(_trans)?\(a\[i\], As", source) is not None
            assert ldmatrix == (precision != "tf32"), (precision, name)
            run(["dlc", "compile", model, f"--precision={precision}",
                 "--target=cuda:sm_80,sm_90", "-o", os.path.join(tmp, "g.dlcm")])
            run(["dlc", "run", model, f"--precision={precision}", "--device=cuda-emu",
                 f"--input=a=@{a_path}", f"--input=b=@{b_path}", f"--output=c=@{c_path}"])
            c = np.load(c_path).astype(np.float64)
            ref = form(rnd(a), rnd(b))
            if precision != "tf32":
                ref = rnd(ref)  # a bf16/f16 product is rounded to its type once
            err = float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
            # f32 accumulation; a bf16/f16 result may round one unit apart.
            bound = 1e-5 if precision == "tf32" else 2e-4
            print(f"{precision:5} {name:12} rel. error {err:.2e} (bound {bound:.0e})")
            if not err <= bound:
                failures.append(f"{precision} {name}: {err:.2e}")
assert not failures, failures
print("all layouts agree")
