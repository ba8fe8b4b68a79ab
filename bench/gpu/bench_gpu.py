#!/usr/bin/env python3
"""The GPU benchmark (bench/gpu/run.sh runs this in prepare.sh's folder).

dlc's prebuilt modules run through the runtime's timing program on cuda:0
(inputs and outputs in device memory, 5 warm-up runs, the median of
--iterations synchronised runs); the baselines are measured in the same
run with PyTorch: the device-to-device copy bandwidth, cuBLAS for the GEMM
(FP32, TF32 off, as dlc's SIMT kernel; TF32 also shown), cuBLAS at TF32,
BF16 and F16 for dlc's tensor-core GEMMs, and the same GPT-2 block (the
weights dlc drew, loaded from weights/*.npy; the same input) in eager mode
and under torch.compile, in f32 and with bf16 autocast against dlc's
--precision bf16, timed with CUDA events; then GPT-2 small whole (B=8,
T=1024), dlc's weights drawn when its module loads and PyTorch's of the same
distributions (times only). Prints one
table with the device and the ratios (dlc time / baseline time: below 1 is
faster than the baseline), and checks dlc's GPT-2 output against PyTorch's.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--dir", required=True)
p.add_argument("--iterations", type=int, default=50)
p.add_argument("--device", default="cuda:0")
SECTIONS = ("memory", "gemm", "conv", "gpt2_block", "gpt2_small")
p.add_argument("--only", default="memory,gemm,conv,gpt2_block",
               help=f"the sections to run, of {','.join(SECTIONS)} (GPT-2 small, whose "
               "torch.compile takes minutes, only when named)")
args = p.parse_args()
ONLY = set(args.only.split(","))
if ONLY - set(SECTIONS):
    p.error(f"--only: unknown sections {sorted(ONLY - set(SECTIONS))}")
D = args.dir
RUNNER = os.path.join(D, "dlc-bench-gpu")

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except Exception as e:  # noqa: BLE001
    torch, HAVE_TORCH = None, False
    print(f"(no PyTorch with CUDA here: {e}; dlc timings only)")


def dlc_time(module, inputs_dir=None, library=True):
    """Median ms of `module`; library=False runs every kernel's generated
    code (DLC_GEMM_LIBRARY=off), else GEMMs go to cuBLASLt where recorded."""
    cmd = [RUNNER, os.path.join(D, "modules", module + ".dlcm"), args.device, str(args.iterations)]
    if inputs_dir:
        cmd.append(inputs_dir)
    env = dict(os.environ, DLC_GEMM_LIBRARY="auto" if library else "off")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return float(r.stdout.split()[0]), ""


def cuda_time(fn, iterations=None):
    iterations = iterations or args.iterations
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return float(np.median(times))


rows = []  # (name, dlc ms, baseline name, baseline ms, note)


def device_name():
    if HAVE_TORCH:
        return torch.cuda.get_device_name(0)
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        return "unknown GPU"


# 1. Copy bandwidth (the memory-bound kernels' roofline).
copy_gbs = None
if HAVE_TORCH and "memory" in ONLY:
    src = torch.empty(256 * 2**20, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = cuda_time(lambda: dst.copy_(src), 20)
    copy_gbs = 2 * src.numel() * 4 / ms / 1e6
    del src, dst

# 2. Memory-bound fused kernels: achieved GB/s against the copy bandwidth.
MEMORY_BOUND = {
    "bias_gelu": (8192 * 3072 * 2 + 3072) * 4,
    "layer_norm": (16384 * 768 * 2 + 2 * 768) * 4,
    "softmax": 49152 * 512 * 2 * 4,
    "column_sum": (4096 * 3072 + 3072) * 4,
}
for name, nbytes in (MEMORY_BOUND.items() if "memory" in ONLY else ()):
    ms, err = dlc_time(name)
    if ms is None:
        rows.append((name, None, "", None, err))
        continue
    gbs = nbytes / ms / 1e6
    base, base_ms = "", None
    if HAVE_TORCH:
        x = torch.randn(*{"bias_gelu": (8192, 3072), "layer_norm": (16384, 768),
                          "softmax": (49152, 512), "column_sum": (4096, 3072)}[name], device="cuda")
        if name == "bias_gelu":
            b = torch.randn(3072, device="cuda")
            fn = lambda: torch.nn.functional.gelu(x + b, approximate="tanh")  # noqa: E731
        elif name == "layer_norm":
            g, b = torch.randn(768, device="cuda"), torch.randn(768, device="cuda")
            fn = lambda: torch.nn.functional.layer_norm(x, (768,), g, b, 1e-5)  # noqa: E731
        elif name == "column_sum":
            fn = lambda: x.sum(0)  # noqa: E731
        else:
            fn = lambda: torch.softmax(x, -1)  # noqa: E731
        base, base_ms = "torch eager", cuda_time(fn)
    note = f"{gbs:.0f} GB/s" + (f" = {gbs / copy_gbs:.0%} of copy" if copy_gbs else "")
    rows.append((name, ms, base, base_ms, note))


def compute_bound(label, module, flops, library=True):
    """dlc's time of `module` and its TFLOP/s note for a baseline row; None,
    with the row recorded alone, when dlc failed or no PyTorch can follow."""
    ms, err = dlc_time(module, library=library)
    if ms is None:
        rows.append((label, None, "", None, err))
        return None
    note = f"{flops / ms / 1e9:.1f} TFLOP/s"
    if not HAVE_TORCH:
        rows.append((label, ms, "", None, note))
        return None
    return ms, note


# 3. GEMMs against cuBLAS at the same precision: the module as dispatched
#    (its GEMM a cuBLASLt call: the goal, dlc/base <= 1.05) and its
#    generated kernel (DLC_GEMM_LIBRARY=off: the goal, at least 0.7x
#    cuBLAS's throughput, dlc/base <= 1.43).
flop = 2 * 4096**3
for precision, module in ((("f32", "gemm_4096"), ("tf32", "gemm_4096_tf32"),
                           ("bf16", "gemm_4096_bf16"), ("f16", "gemm_4096_f16"))
                          if "gemm" in ONLY else ()):
    for library in (True, False):
        label = f"gemm 4096^3 {precision} {'cuBLASLt' if library else 'generated'}"
        timed = compute_bound(label, module, flop, library)
        if not timed:
            continue
        ms, note = timed
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(precision, torch.float32)
        a = torch.randn(4096, 4096, device="cuda", dtype=dtype)
        b = torch.randn(4096, 4096, device="cuda", dtype=dtype)
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        rows.append((label, ms, f"cuBLAS {precision.upper()}", cuda_time(lambda: a @ b), note))
        torch.backends.cuda.matmul.allow_tf32 = False

# 3c. A convolution as an implicit GEMM (3x3, 256 -> 256, 14x14, N=32, bias
#     and ReLU fused) against cuDNN through torch at the same precision.
conv_flop = 2 * 32 * 256 * 196 * 2304
for precision in (("f32", "tf32", "bf16") if "conv" in ONLY else ()):
    label = f"conv 3x3 256ch 14x14 N=32 {precision}"
    timed = compute_bound(label, f"conv_{precision}", conv_flop)
    if not timed:
        continue
    ms, note = timed
    x = torch.randn(32, 256, 14, 14, device="cuda")
    w = torch.randn(256, 256, 3, 3, device="cuda") * 0.02
    b = torch.randn(256, device="cuda")
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")

    def conv():
        with autocast:
            return torch.relu(torch.nn.functional.conv2d(x, w, b, padding=1))
    with torch.no_grad():
        rows.append((label, ms, f"cuDNN {precision}", cuda_time(conv), note))
    torch.backends.cudnn.allow_tf32 = False

def torch_rows(label, ms, model, x, autocast, note, iterations=None):
    """Rows of PyTorch running model(x) under `autocast`, eager and under
    torch.compile (its first call, which compiles, untimed)."""
    def eager():
        with autocast:
            return model(x)
    rows.append((label, ms, "torch eager", cuda_time(eager, iterations), note))
    try:
        compiled = torch.compile(model)

        def run_compiled():
            with autocast:
                return compiled(x)
        run_compiled()
        rows.append((label, ms, "torch.compile", cuda_time(run_compiled, iterations), note))
    except Exception as e:  # noqa: BLE001
        rows.append((label, ms, "torch.compile", None, f"failed: {str(e).splitlines()[0][:60]}"))


# 4. The GPT-2 block: same weights, same input, eager and torch.compile.
if HAVE_TORCH:
    from torch_gpt2 import torch_block
weights = {f[:-4]: np.load(os.path.join(D, "weights", f))
           for f in os.listdir(os.path.join(D, "weights")) if f.endswith(".npy")}


for B, T, precision in (((1, 128, "f32"), (8, 512, "f32"), (8, 512, "bf16"))
                        if "gpt2_block" in ONLY else ()):
    name = f"gpt2_b{B}_t{T}" + ("" if precision == "f32" else f"_{precision}")
    rng = np.random.default_rng(B * 1000 + T)
    x = rng.standard_normal((B, T, 768), dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        for n in weights:
            os.symlink(os.path.join(D, "weights", n + ".npy"), os.path.join(tmp, n + ".npy"))
        np.save(os.path.join(tmp, "x.npy"), x)
        ms, err = dlc_time(name, tmp)
        y_dlc = np.load(os.path.join(tmp, "y.out.npy")) if ms is not None else None
        generated_ms, _ = dlc_time(name, tmp, library=False)
    label = f"GPT-2 block B={B} T={T} {precision}"
    if ms is None:
        rows.append((label, None, "", None, err))
        continue
    if generated_ms is not None:
        rows.append((label + " gen.", generated_ms, "dlc cuBLASLt", ms,
                     "every GEMM generated (DLC_GEMM_LIBRARY=off)"))
    if not HAVE_TORCH:
        rows.append((label, ms, "", None, ""))
        continue
    torch.backends.cuda.matmul.allow_tf32 = False
    w = {k: torch.from_numpy(v).cuda() for k, v in weights.items()}
    xt = torch.from_numpy(x).cuda()
    # bf16: PyTorch's autocast (its products in bf16, softmax and norms in
    # f32), against dlc's --precision bf16; the error is against f32 torch.
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")
    with torch.no_grad():
        y_ref = torch_block(w, xt)
        err = float(np.linalg.norm(y_dlc - y_ref.cpu().numpy()) / np.linalg.norm(y_ref.cpu().numpy()))
        check = f"rel. error vs torch f32 {err:.1e}"
        torch_rows(label, ms, lambda a: torch_block(w, a), xt, autocast, check)

# 5. GPT-2 small whole (B=8, T=1024): dlc's weights drawn when its module
#    loads (--draw-params), PyTorch's drawn by torch from the same
#    distributions, token ids 0 for both: times only (the block's rows
#    above check values).
for precision in (("f32", "bf16") if "gpt2_small" in ONLY else ()):
    name = "gpt2_small_b8" + ("" if precision == "f32" else f"_{precision}")
    label = f"GPT-2 small B=8 T=1024 {precision}"
    ms, err = dlc_time(name)
    if ms is None or not HAVE_TORCH:
        rows.append((label, ms, "", None, err))
        continue
    from torch_gpt2 import random_params, torch_gpt2_small
    torch.backends.cuda.matmul.allow_tf32 = False
    w = random_params(os.path.join(D, "src", "gpt2_small.dlg"))
    ids = torch.zeros(8, 1024, dtype=torch.long, device="cuda")
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")
    with torch.no_grad():
        torch_rows(label, ms, lambda a: torch_gpt2_small(w, a), ids, autocast,
                   "weights drawn at load", 10)
    del w

print()
print(f"dlc GPU benchmark on {device_name()} ({platform.node()}), median of {args.iterations} runs")
if copy_gbs:
    print(f"device copy bandwidth (torch, 1 GiB d2d): {copy_gbs:.0f} GB/s")
print()
print(f"| {'kernel / model':28} | {'dlc ms':>9} | {'baseline':14} | {'base ms':>9} | {'dlc/base':>8} | note")
print(f"|{'-' * 30}|{'-' * 11}|{'-' * 16}|{'-' * 11}|{'-' * 10}|------")
for name, ms, base, base_ms, note in rows:
    ratio = f"{ms / base_ms:.2f}x" if ms and base_ms else ""
    print(f"| {name:28} | {ms if ms is not None else float('nan'):9.3f} | {base:14} | "
          f"{base_ms if base_ms is not None else float('nan'):9.3f} | {ratio:>8} | {note}")
