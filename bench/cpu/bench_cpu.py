#!/usr/bin/env python3
"""dlc on the CPU against ONNX Runtime on the MLP (N=1 and 64), LeNet and the GPT-2 block.

Each model is compiled by `dlc compile -o` and timed by `dlc-bench-cpu run`
(the runtime's C++ API); the same model is built as an ONNX graph here, with
the parameters `dlc run --save-params` wrote, checked against dlc's output on
the same input, and timed in ONNX Runtime with the same number of threads.
Latency is the median of many runs after warm-up; the whole dlc/ORT
measurement is repeated --repeat times, interleaved (the machine is shared, so
single measurements swing): the table gives the median of the repeats and the
range of the dlc/ORT ratio over them. Throughput is samples per second at the
median latency. Then GEMM GFLOP/s of OpenBLAS and oneDNN (each with its own
threads, and each single-threaded on threads splitting M, as dlc kernels run
it) against the machine's peak: a tight loop of independent AVX-512 FMAs on
the same number of threads (`dlc-bench-cpu peak`). Last, the cost of
dispatching a kernel: a chain of tiny matmul kernels, per kernel.

    bench/cpu/bench_cpu.py [--build build] [--threads 2] [--runs 100] [--repeat 5] [--out bench/results/cpu.md]
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = [("mnist_mlp", {"N": 1}, "x", (1, 784), "logits", 1),
          ("mnist_mlp", {"N": 64}, "x", (64, 784), "logits", 64),
          ("lenet", {"N": 64}, "x", (64, 1, 28, 28), "logits", 64),
          ("gpt2_block", {"B": 1, "T": 128}, "x", (1, 128, 768), "y", 1)]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


#--- the models as ONNX graphs ------------------------------------------------


def linear(nodes, x, w, b, out):
    nodes += [helper.make_node("MatMul", [x, w], [out + "_mm"]),
              helper.make_node("Add", [out + "_mm", b], [out])]


def mlp_graph(p, shape):
    nodes = []
    linear(nodes, "x", "w1", "b1", "h0")
    nodes.append(helper.make_node("Relu", ["h0"], ["h"]))
    linear(nodes, "h", "w2", "b2", "logits")
    return nodes, []


def lenet_graph(p, shape):
    n = shape[0]
    nodes = [
        helper.make_node("Conv", ["x", "conv1_w", "conv1_b"], ["c1"], pads=[2, 2, 2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p2", "flat_shape"], ["flat"])]
    linear(nodes, "flat", "fc1_w", "fc1_b", "f1a")
    nodes.append(helper.make_node("Relu", ["f1a"], ["f1"]))
    linear(nodes, "f1", "fc2_w", "fc2_b", "f2a")
    nodes.append(helper.make_node("Relu", ["f2a"], ["f2"]))
    linear(nodes, "f2", "fc3_w", "fc3_b", "logits")
    return nodes, [numpy_helper.from_array(np.array([n, 400], np.int64), "flat_shape")]


def gpt2_graph(p, shape):
    b, t, d = shape
    consts = [numpy_helper.from_array(np.array([b, t, 12, 64], np.int64), "heads_shape"),
              numpy_helper.from_array(np.array([b, t, 768], np.int64), "merged_shape"),
              numpy_helper.from_array(np.tril(np.ones((t, t), bool)), "mask"),
              numpy_helper.from_array(np.array(0.125, np.float32), "scale"),
              numpy_helper.from_array(np.array(-1e9, np.float32), "neg"),
              numpy_helper.from_array(np.array(0.5, np.float32), "half"),
              numpy_helper.from_array(np.array(1.0, np.float32), "one"),
              numpy_helper.from_array(np.array(0.044715, np.float32), "cubic"),
              numpy_helper.from_array(np.array(np.sqrt(2 / np.pi), np.float32), "c")]
    mk = helper.make_node
    nodes = [mk("LayerNormalization", ["x", "ln_1_g", "ln_1_b"], ["h"], axis=-1, epsilon=1e-5)]
    for name in "qkv":
        linear(nodes, "h", f"w_{name}", f"b_{name}", f"{name}_lin")
        nodes += [mk("Reshape", [f"{name}_lin", "heads_shape"], [f"{name}_r"]),
                  mk("Transpose", [f"{name}_r"], [name], perm=[0, 2, 1, 3])]
    nodes += [mk("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
              mk("MatMul", ["q", "kt"], ["s0"]), mk("Mul", ["s0", "scale"], ["s"]),
              mk("Where", ["mask", "s", "neg"], ["masked"]),
              mk("Softmax", ["masked"], ["probs"], axis=-1),
              mk("MatMul", ["probs", "v"], ["heads"]),
              mk("Transpose", ["heads"], ["ht"], perm=[0, 2, 1, 3]),
              mk("Reshape", ["ht", "merged_shape"], ["merged"])]
    linear(nodes, "merged", "w_o", "b_o", "attn")
    nodes += [mk("Add", ["x", "attn"], ["r"]),
              mk("LayerNormalization", ["r", "ln_2_g", "ln_2_b"], ["h2"], axis=-1, epsilon=1e-5)]
    linear(nodes, "h2", "w_fc", "b_fc", "f")
    # GELU, tanh approximation: 0.5 f (1 + tanh(c (f + 0.044715 f^3)))
    nodes += [mk("Mul", ["f", "f"], ["f2"]), mk("Mul", ["f2", "f"], ["f3"]),
              mk("Mul", ["f3", "cubic"], ["f3c"]), mk("Add", ["f", "f3c"], ["inner0"]),
              mk("Mul", ["inner0", "c"], ["inner"]), mk("Tanh", ["inner"], ["th"]),
              mk("Add", ["th", "one"], ["th1"]), mk("Mul", ["f", "th1"], ["g0"]),
              mk("Mul", ["g0", "half"], ["g"])]
    linear(nodes, "g", "w_proj", "b_proj", "m")
    nodes.append(mk("Add", ["r", "m"], ["y"]))
    return nodes, consts


GRAPHS = {"mnist_mlp": mlp_graph, "lenet": lenet_graph, "gpt2_block": gpt2_graph}


def onnx_model(name, params, in_name, shape, out_name):
    nodes, consts = GRAPHS[name](params, shape)
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(in_name, TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)], inits + consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    # (output shapes are left to inference; ONNX Runtime checks the graph)
    return model


#--- timing --------------------------------------------------------------------


def time_ort(model, feeds, threads, runs):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    for _ in range(10):
        out = session.run(None, feeds)
    times = []
    for _ in range(runs):
        a = time.perf_counter()
        session.run(None, feeds)
        times.append(1e3 * (time.perf_counter() - a))
    return float(np.median(times)), out[0]


DISPATCH_CHAIN = 32


def measure_dispatch(dlc, bench, tmp, thread_counts):
    """µs per kernel of a chain of tiny matmul kernels, per row count and
    thread count: [(rows, [(threads, us), ...]), ...]."""
    out = []
    for rows in (1, 64):
        lines = [f"  param w{i}: f32[8, 8] = normal(mean=0, std=0.3, seed={i + 1})"
                 for i in range(DISPATCH_CHAIN)]
        h = "x"
        for i in range(DISPATCH_CHAIN):
            lines.append(f"  h{i} = {h} @ w{i}")
            h = f"h{i}"
        lines.append(f"  y = {h}")
        src = os.path.join(tmp, f"chain{rows}.dlg")
        with open(src, "w") as f:
            f.write(f"graph chain(x: f32[{rows}, 8]) -> (y: f32[{rows}, 8]) {{\n" +
                    "\n".join(lines) + "\n}\n")
        module = os.path.join(tmp, f"chain{rows}.dlcm")
        run([dlc, "compile", src, "-o", module])
        per = []
        for t in thread_counts:
            med = float(run([bench, "run", module, str(t), "3000"]).split()[0])
            per.append((t, med * 1e3 / DISPATCH_CHAIN))
        out.append((rows, per))
    return out


def machine():
    model, flags = "unknown", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                have = line.split(":", 1)[1].split()
                flags = " ".join(x for x in ("avx2", "fma", "avx512f", "avx512_bf16") if x in have)
    return f"{model}, {os.cpu_count()} cores ({flags}), {platform.system()} {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    dlc = os.path.join(args.build, "bin", "dlc")
    bench = os.path.join(args.build, "bin", "dlc-bench-cpu")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-bench-cpu-") as tmp:
        prepared = []
        for name, dims, in_name, shape, out_name, batch in MODELS:
            src = os.path.join(ROOT, "examples", name + ".dlg")
            dim_args = [f"--dim={k}={v}" for k, v in dims.items()]
            key = name + "".join(f"-{k}{v}" for k, v in dims.items())
            module = os.path.join(tmp, key + ".dlcm")
            run([dlc, "compile", src, "-o", module] + dim_args)
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            xin, yout, pfile = (os.path.join(tmp, f) for f in ("x.npy", "y.npy", "p.npz"))
            np.save(xin, x)
            run([dlc, "run", module, f"--input={in_name}=@{xin}", f"--output={out_name}=@{yout}"])
            run([dlc, "run", src, f"--save-params={pfile}", f"--input={in_name}=@{xin}"] + dim_args)
            with np.load(pfile) as archive:
                params = {k: archive[k] for k in archive.files}
            model = onnx_model(name, params, in_name, shape, out_name)
            ours = np.load(yout).astype(np.float64)
            prepared.append((key, name, dims, batch, module, model, {in_name: x}, ours))
        samples = {p[0]: [] for p in prepared}
        for _ in range(args.repeat):
            for key, name, dims, batch, module, model, feeds, ours in prepared:
                ort_ms, ort_out = time_ort(model, feeds, args.threads, args.runs)
                err = np.linalg.norm(ours - ort_out) / np.linalg.norm(ort_out)
                med, p10, p90 = map(float, run([bench, "run", module, str(args.threads),
                                                str(args.runs)]).split())
                samples[key].append((med, p10, p90, ort_ms, err))
        for key, name, dims, batch, *_ in prepared:
            s = samples[key]
            med = float(np.median([x[0] for x in s]))
            ort_ms = float(np.median([x[3] for x in s]))
            ratios = [x[0] / x[3] for x in s]
            rows.append((name, dims, batch, med, min(x[0] for x in s), max(x[0] for x in s),
                         ort_ms, min(x[3] for x in s), max(x[3] for x in s),
                         float(np.median(ratios)), min(ratios), max(ratios), max(x[4] for x in s)))
        dispatch = measure_dispatch(dlc, bench, tmp, sorted({1, args.threads}))
    peaks = {}
    for t in sorted({args.threads, 1}):
        for line in run([bench, "peak", str(t)]).splitlines():
            what, value = line.split()
            peaks[(t, what)] = float(value)
    gemm = run([bench, "gemm", str(args.threads)]).splitlines()[1:]
    gemm1 = run([bench, "gemm", "1"]).splitlines()[1:] if args.threads != 1 else None

    lines = [f"machine: {machine()}",
             f"threads: {args.threads} (dlc session and ONNX Runtime {ort.__version__} intra-op); "
             f"each latency is the median of {args.runs} runs after 10 warm-up runs, "
             f"measured {args.repeat} times interleaved: median of the {args.repeat} (min–max)", "",
             "| model | size | dlc ms (min–max) | ORT ms (min–max) | dlc/ORT (min–max) | dlc samples/s | ORT samples/s | dlc vs ORT rel. error |",
             "|---|---|---|---|---|---|---|---|"]
    for name, dims, batch, med, lo, hi, ort_ms, olo, ohi, ratio, rlo, rhi, err in rows:
        size = ", ".join(f"{k}={v}" for k, v in dims.items())
        lines.append(f"| {name} | {size} | {med:.3f} ({lo:.3f}–{hi:.3f}) | {ort_ms:.3f} ({olo:.3f}–{ohi:.3f}) | "
                     f"{ratio:.2f} ({rlo:.2f}–{rhi:.2f}) | {1e3 * batch / med:.0f} | {1e3 * batch / ort_ms:.0f} | {err:.1e} |")
    lines += ["", "GEMM (f32, row-major), GFLOP/s, best of 5 × 0.2 s; peak = a tight loop of "
              "independent AVX-512 FMAs on the same threads (`dlc-bench-cpu peak`); "
              "*split* = each library single-threaded on threads splitting M (how dlc kernels call it)", ""]
    for t, table in ((args.threads, gemm), (1, gemm1)):
        if table is None:
            continue
        peak = peaks[(t, "fma512")]
        lines += [f"{t} thread(s): FMA peak {peak:.1f} GFLOP/s (AVX-512), "
                  f"{peaks[(t, 'fma256')]:.1f} (AVX2)", "",
                  "| shape | m×n×k | OpenBLAS | oneDNN | OpenBLAS split | oneDNN split |",
                  "|---|---|---|---|---|---|"]
        for row in table:
            what, rest = row[1:].split('" ')
            m, n, k, *vals = rest.split()
            cells = " | ".join(f"{float(v):.1f} ({100 * float(v) / peak:.0f}%)" for v in vals)
            lines.append(f"| {what} | {m}×{n}×{k} | {cells} |")
        lines.append("")
    lines += ["Dispatch: a chain of %d matmul kernels of [rows, 8] by [8, 8] (nothing to fuse, "
              "almost nothing to compute), µs per kernel: the executor's walk, the call and the "
              "GEMM library's entry (issue 16's goal: at most 2 µs)" % DISPATCH_CHAIN, "",
              "| rows | " + " | ".join(f"{t} thread(s)" for t, _ in dispatch[0][1]) + " |",
              "|---:|" + "---:|" * len(dispatch[0][1])]
    for rows_, per in dispatch:
        lines.append(f"| {rows_} | " + " | ".join(f"{us:.2f}" for _, us in per) + " |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# bench/cpu: dlc on the CPU vs ONNX Runtime\n\n"
                    "Produced by `bench/cpu/bench_cpu.py` (see its docstring for the method).\n\n"
                    + text)


if __name__ == "__main__":
    main()
