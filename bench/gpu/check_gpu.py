#!/usr/bin/env python3
"""Correctness and a per-kernel profile of dlc's prebuilt modules on a GPU.

Runs in the folder bench/gpu/prepare.sh made, beside bench_gpu.py (which
times); needs PyTorch with CUDA and nothing of dlc but its runtime library,
loaded here through ctypes, so dlc's kernels and PyTorch's run in one
process on one context (test/e2e_lib/dlc_runtime_ctypes.py):

1. Correctness of every GEMM module (f32, and the tensor-core tf32, bf16,
   f16 ones): two fresh random draws each, the output poisoned with NaN
   before the run, the result against a float64 product of the same
   (rounded) operands, as ||c - ref|| / ||ref||, against the bound dlc
   verify states for the mode (16 unit roundoffs of its operand type).
2. The GPT-2 block (B=8, T=512) in f32 and every --precision module against
   PyTorch's float32 block in float64 on the same weights and input;
   and the convolution and memory-bound modules (1b) against float64.
3. A per-kernel profile (torch.profiler, CUPTI: it records every kernel of
   the process, dlc's launched through the driver API included) of dlc's
   GPT-2 block modules and of PyTorch eager's block at the same precision:
   each kernel's time a run, so the gap to PyTorch is located by kernel.

   python3 check_gpu.py --dir DIR [--runs 10]

Exit 1 when a check fails.
"""
import argparse
import os
import sys

import numpy as np
import torch
from dlc_runtime_ctypes import KDL_CUDA, Runtime, Session
from torch_gpt2 import torch_block

p = argparse.ArgumentParser()
p.add_argument("--dir", required=True)
p.add_argument("--runs", type=int, default=10)
args = p.parse_args()
D = args.dir


runtime = Runtime(os.path.join(D, "lib", "libdlc_runtime.so"))
# Which GEMMs cuBLASLt runs and why others run their generated code, as the
# CUDA device logs it when it loads each module.
library_log, loading = [], [""]
runtime.on_log(lambda level, message: library_log.append(f"{loading[0]}: {message}")
               if "cuBLASLt" in message or "generated GEMM" in message else None)
TORCH_DTYPE = {(2, 32): torch.float32, (2, 16): torch.float16, (4, 16): torch.bfloat16,
               (0, 32): torch.int32, (0, 64): torch.int64}


class Module:
    """A .dlcm on cuda:0, run on torch tensors in device memory; inputs and
    outputs as (name, shape, torch dtype)."""

    def __init__(self, name):
        self.name = name
        loading[0] = name
        self.session = Session(runtime, os.path.join(D, "modules", name + ".dlcm"), "cuda:0")
        self.inputs = [(n, shape, TORCH_DTYPE[(d.code, d.bits)])
                       for n, shape, d in self.session.inputs]
        self.outputs = [(n, shape, TORCH_DTYPE[(d.code, d.bits)])
                        for n, shape, d in self.session.outputs]

    def empty_outputs(self):
        return [torch.full(shape, float("nan"), dtype=dt, device="cuda")
                for _, shape, dt in self.outputs]

    def run(self, inputs, outputs):
        inputs = [t.contiguous() for t in inputs]
        torch.cuda.synchronize()
        self.session.run([t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs],
                         KDL_CUDA)


def rel(y, ref):
    y, ref = y.double(), ref.double()
    return float(torch.linalg.norm(y - ref) / torch.linalg.norm(ref))


# Stated error bounds: 16 unit roundoffs of the products' operand type
# (dlc verify --precision); f32 products: far under 1e-3 (METHOD.md).
BOUND = {"f32": 1e-4, "tf32": 16 * 2.0**-11, "bf16": 16 * 2.0**-8, "f16": 16 * 2.0**-11}
failures = []
lines = []


def record(label, err, bound, nan):
    ok = err <= bound and nan == 0
    if not ok:
        failures.append(label)
    lines.append(f"| {label:34} | {err:9.2e} | {bound:8.1e} | {nan:6d} | {'ok' if ok else 'FAIL'}")


# 1. GEMMs, two fresh draws each.
for precision, module in (("f32", "gemm_4096"), ("tf32", "gemm_4096_tf32"),
                          ("bf16", "gemm_4096_bf16"), ("f16", "gemm_4096_f16")):
    m = Module(module)
    dt = m.inputs[0][2]
    for draw in range(2):
        g = torch.Generator(device="cuda").manual_seed(100 * draw + len(module))
        a, b = (torch.randn(s, generator=g, device="cuda").to(dt) for s in
                (m.inputs[0][1], m.inputs[1][1]))
        (c,) = out = m.empty_outputs()
        m.run([a, b], out)
        record(f"gemm 4096^3 {precision} draw {draw}", rel(c, a.double() @ b.double()),
               BOUND[precision], int(torch.isnan(c).sum()))
    m.session.close()  # its device memory, before the GPT-2 modules'

# 1b. The forms dlc-tile picks for these shapes: convolutions as implicit
#     GEMMs (f32, and on tensor cores in tf32/bf16), warp rows (softmax,
#     layer_norm), a split reduction (column sum), an element-wise kernel.
#     Inputs drawn fresh, outputs poisoned, reference in float64.
F = torch.nn.functional


def conv_relu(x, w, b):
    return torch.relu(F.conv2d(x, w, b, padding=1))


KERNELS = (
    ("conv 3x3 256ch f32", "conv_f32", "f32", conv_relu),
    ("conv 3x3 256ch tf32", "conv_tf32", "tf32", conv_relu),
    ("conv 3x3 256ch bf16", "conv_bf16", "bf16", conv_relu),
    ("softmax 49152x512", "softmax", "f32", lambda x: torch.softmax(x, -1)),
    ("layer_norm 16384x768", "layer_norm", "f32",
     lambda x, g, b: F.layer_norm(x, (768,), g, b, 1e-5)),
    ("column_sum 4096x3072", "column_sum", "f32", lambda x: x.sum(0)),
    ("bias_gelu 8192x3072", "bias_gelu", "f32",
     lambda x, b: F.gelu(x + b, approximate="tanh")),
    # Library GEMMs (cuBLASLt unless DLC_GEMM_LIBRARY=off): the row-major to
    # column-major mapping of each form dlc records.
    ("lib gemm + bias + gelu", "lib_fc", "f32",
     lambda x, w, b: F.gelu(x @ w + b, approximate="tanh")),
    ("lib gemm^T^T + bias + relu", "lib_transposed", "f32",
     lambda a, b, c: torch.relu(a.T @ b.T + c)),
    ("lib batched bf16 + residual", "lib_batched", "bf16",
     lambda a, b, r: a @ b + r),
    ("lib bf16 gemm + bias + gelu", "lib_fc_bf16", "bf16",
     lambda x, w, b: F.gelu(x @ w + b, approximate="tanh")),
    ("lib --precision bf16 mlp", "lib_mlp_bf16", "bf16",
     lambda x, w, b, w2: F.gelu(x @ w + b, approximate="tanh") @ w2),
)
for label, module, precision, reference in KERNELS:
    if not os.path.exists(os.path.join(D, "modules", module + ".dlcm")):
        continue
    m = Module(module)
    g = torch.Generator(device="cuda").manual_seed(len(label))
    ins = [torch.randn(shape, generator=g, device="cuda").to(dt) for _, shape, dt in m.inputs]
    (y,) = out = m.empty_outputs()
    m.run(ins, out)
    record(label, rel(y, reference(*[t.double() for t in ins])), BOUND[precision],
           int(torch.isnan(y).sum()))
    m.session.close()

# 2. The GPT-2 block against PyTorch f32 (float64 of the same weights).
weights = {f[:-4]: torch.from_numpy(np.load(os.path.join(D, "weights", f))).cuda()
           for f in os.listdir(os.path.join(D, "weights")) if f.endswith(".npy")}
blocks = {}
g = torch.Generator(device="cuda").manual_seed(7)
x = torch.randn(8, 512, 768, generator=g, device="cuda")
with torch.no_grad():
    ref = torch_block({k: v.double() for k, v in weights.items()}, x.double())
for precision in ("f32", "tf32", "bf16", "f16"):
    name = "gpt2_b8_t512" + ("" if precision == "f32" else "_" + precision)
    if not os.path.exists(os.path.join(D, "modules", name + ".dlcm")):
        continue
    m = Module(name)
    ins = [x if n == "x" else weights[n] for n, _, _ in m.inputs]
    out = m.empty_outputs()
    m.run(ins, out)
    record(f"GPT-2 block B=8 T=512 {precision}", rel(out[0], ref), BOUND[precision],
           int(torch.isnan(out[0]).sum()))
    blocks[precision] = (m, ins, out)

table = [f"\ndlc correctness on {torch.cuda.get_device_name(0)}: ||y - ref|| / ||ref||, ref in float64"
         f" (DLC_GEMM_LIBRARY={os.environ.get('DLC_GEMM_LIBRARY', 'auto')})",
         f"| {'module':34} | {'rel err':>9} | {'bound':>8} | {'NaNs':>6} | ",
         f"|{'-' * 36}|{'-' * 11}|{'-' * 10}|{'-' * 8}|-----"] + lines
print("\n".join(table))  # again at the end, after the profiles

# 3. Per-kernel profiles: dlc's modules and PyTorch eager at the same precision.
from torch.profiler import ProfilerActivity, profile  # noqa: E402


def kernel_table(label, fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(args.runs):
            fn()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.key_averages():
        us = next((getattr(e, a) for a in ("device_time_total", "cuda_time_total")
                   if hasattr(e, a)), 0.0)
        if us > 0:  # kernels, copies and fills (host-side events have none)
            totals[e.key] = [e.count, us]
    all_us = sum(t[1] for t in totals.values()) / args.runs
    print(f"\n{label}: {all_us / 1000:.3f} ms of kernels a run")
    print(f"| {'kernel':60} | {'calls':>5} | {'us/run':>8} | share")
    for name, (calls, us) in sorted(totals.items(), key=lambda kv: -kv[1][1])[:14]:
        print(f"| {name[:60]:60} | {calls // args.runs:5d} | {us / args.runs:8.1f} | "
              f"{us / args.runs / all_us:5.1%}")


for precision, (m, ins, out) in blocks.items():
    try:
        kernel_table(f"dlc GPT-2 block B=8 T=512 {precision}", lambda: m.run(ins, out))
        autocast = {"bf16": torch.bfloat16, "f16": torch.float16}.get(precision)
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        with torch.no_grad(), torch.autocast("cuda", dtype=autocast or torch.float32,
                                             enabled=autocast is not None):
            kernel_table(f"torch eager GPT-2 block B=8 T=512 {precision}",
                         lambda: torch_block(weights, x))
    except Exception as e:  # noqa: BLE001 - a profile is extra; the checks stand
        print(f"profile {precision} failed: {e}")
    torch.backends.cuda.matmul.allow_tf32 = False

print("\n".join(table))
print("\nlibrary GEMMs as loaded:\n" + "\n".join(dict.fromkeys(library_log)))
if failures:
    print("\nFAILED: " + ", ".join(failures))
sys.exit(1 if failures else 0)
