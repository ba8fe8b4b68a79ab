# RUN: %python %s %dlc_obj/lib/libdlc_runtime.so %t
# The cp.async-fed tensor-core kernels copy an operand whose address is not
# 16-byte aligned (a caller's view into a larger buffer, passed in place)
# by ordinary loads instead (the same kernel, a uniform branch): the GEMM
# (MmaPipelined.cpp) and flash attention's K and V (AttentionMma.cpp).
# Through the C API on cuda-emu, which runs kernels on the caller's memory:
# bf16 operands at 2 bytes past an aligned address must give the same
# result as aligned copies of the same values, and that is the float64
# result of the bf16 operands (rounded as the graph says).
import os
import subprocess
import sys

import numpy as np
from dlc_runtime_ctypes import Runtime, Session

LIB, TMP = sys.argv[1], sys.argv[2]
os.makedirs(TMP, exist_ok=True)


def compile_graph(name, text, marker):
    model, module = os.path.join(TMP, name + ".dlg"), os.path.join(TMP, name + ".dlcm")
    with open(model, "w") as f:
        f.write(text)
    source = subprocess.run(["dlc", "compile", model, "--target=cuda:sm_90", "--emit=cuda"],
                            stdout=subprocess.PIPE, text=True, check=True).stdout
    assert marker in source, f"{name}: not the cp.async kernel"
    subprocess.run(["dlc", "compile", model, "--target=cuda:sm_90", "-o", module], check=True)
    return module


runtime = Runtime(LIB)


def session_of(module):
    return Session(runtime, module, "cuda-emu")


def run(session, inputs, out_shape):
    out = np.zeros(out_shape, np.uint16)
    session.run([x.ctypes.data for x in inputs], [out.ctypes.data])
    return out


def bf16_bits(x):  # round to nearest even
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def misaligned(bits):
    """The same values in a view 2 bytes past a 64-byte aligned address."""
    raw = np.zeros(bits.size + 64, np.uint16)
    start = (-raw.ctypes.data % 64) // 2 + 1
    view = raw[start:start + bits.size].reshape(bits.shape)
    view[...] = bits
    assert view.ctypes.data % 16 == 2
    return view


def rel(x, ref):
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


rng = np.random.default_rng(5)

# The GEMM.
M, K, N = 96, 64, 80
gemm = session_of(compile_graph(
    "gemm", f"graph g(a: bf16[{M}, {K}], b: bf16[{K}, {N}]) -> (c: bf16[{M}, {N}]) {{\n"
    "  c = a @ b\n}\n", "if (aligned) dlc_cp_async16"))
a, b = bf16_bits(rng.standard_normal((M, K))), bf16_bits(rng.standard_normal((K, N)))
aligned = run(gemm, [a, b], (M, N))
shifted = run(gemm, [misaligned(a), misaligned(b)], (M, N))
assert np.array_equal(aligned, shifted), "misaligned operands changed the product"
err = rel(value(aligned), value(bf16_bits(value(a) @ value(b))))
assert err < 2e-4, err  # f32 accumulation: a result may round one unit apart
print(f"GEMM: aligned and misaligned operands agree; rel. error against float64 {err:.1e}")

# Flash attention with K and V read in place.
shape = (1, 2, 64, 16)
attention = session_of(compile_graph(
    "attention", "graph g(q: bf16[1, 2, 64, 16], k: bf16[1, 2, 64, 16], v: bf16[1, 2, 64, 16]) "
    "-> (o: bf16[1, 2, 64, 16]) {\n"
    "  x = cast(matmul(q, k, transpose_b=true), to=f32) * 0.25\n"
    "  o = cast(softmax(x, axis=-1), to=bf16) @ v\n}\n", "if (kv_aligned) dlc_cp_async16"))
q, k, v = (bf16_bits(rng.standard_normal(shape)) for _ in range(3))
aligned = run(attention, [q, k, v], shape)
shifted = run(attention, [q, misaligned(k), misaligned(v)], shape)
assert np.array_equal(aligned, shifted), "misaligned K/V changed the attention"
s_ = value(bf16_bits(value(q) @ np.swapaxes(value(k), -1, -2))) * 0.25
p_ = np.exp(s_ - s_.max(-1, keepdims=True))
p_ /= p_.sum(-1, keepdims=True)
err = rel(value(aligned), value(bf16_bits(value(bf16_bits(p_)) @ value(v))))
assert err < 1e-2, err  # bf16 probabilities: a unit apart where the rounding differs
print(f"attention: aligned and misaligned K/V agree; rel. error against float64 {err:.1e}")
gemm.close()
attention.close()
