#!/usr/bin/env python3
"""dlc on the CPU against ONNX Runtime: the MLP (N=1 and 64), LeNet, the GPT-2 block,
ResNet-50 (N=1 and 8), MobileNet v1 (N=1), a BERT-base encoder layer and GPT-2 small
(T=128).

Each model (examples/, or bench/models/generate.py's text) is compiled by
`dlc compile -o` and timed by `dlc-bench-cpu run`
(the runtime's C++ API); the same model is built as an ONNX graph here, with
the parameters `dlc run --save-params` wrote, checked against dlc's output on
the same input, and timed in ONNX Runtime with the same number of threads.
Latency is the median of many runs after warm-up; the whole dlc/ORT
measurement is repeated --repeat times, interleaved (the machine is shared, so
single measurements swing): the table gives the median of the repeats and the
range of the dlc/ORT ratio over them. Throughput is samples per second at the
median latency. Then GEMM GFLOP/s of OpenBLAS and oneDNN (each with its own
threads, and each single-threaded on spinning threads splitting M, as dlc
kernels run it, or N) against the machine's peak: a tight loop of independent FMAs of the widest
vectors the CPU has (AVX-512 or AVX2) on
the same number of threads (`dlc-bench-cpu peak`). Last, the cost of
dispatching a kernel: a chain of tiny matmul kernels, per kernel.

    bench/cpu/bench_cpu.py [--build build] [--threads 2] [--runs 100] [--repeat 5] [--only M,..] [--out bench/results/cpu.md]
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
import generate  # noqa: E402  (bench/models/generate.py: the larger models' .dlg text)

# (name, .dlg: a file under examples/ or generated lines, dims, input, input
# shape, input dtype, output, samples per run)
MODELS = [("mnist_mlp", None, {"N": 1}, "x", (1, 784), np.float32, "logits", 1),
          ("mnist_mlp", None, {"N": 64}, "x", (64, 784), np.float32, "logits", 64),
          ("lenet", None, {"N": 64}, "x", (64, 1, 28, 28), np.float32, "logits", 64),
          ("gpt2_block", None, {"B": 1, "T": 128}, "x", (1, 128, 768), np.float32, "y", 1),
          ("resnet50", generate.resnet50, {"N": 1}, "x", (1, 3, 224, 224), np.float32, "logits", 1),
          ("resnet50", generate.resnet50, {"N": 8}, "x", (8, 3, 224, 224), np.float32, "logits", 8),
          ("mobilenet_v1", generate.mobilenet_v1, {"N": 1}, "x", (1, 3, 224, 224), np.float32,
           "logits", 1),
          ("bert_layer", generate.bert_layer, {"B": 1}, "x", (1, 128, 768), np.float32, "y", 1),
          ("gpt2_small", lambda: generate.gpt2_small(seq=128), {"B": 1}, "ids", (1, 128),
           np.int32, "logits", 1)]


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


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype), name)


def transformer_consts(b, t, causal):
    """The shapes, scalars and mask the transformer builders below share."""
    consts = [const("heads_shape", [b, t, 12, 64], np.int64),
              const("merged_shape", [b, t, 768], np.int64),
              const("scale", 0.125), const("half", 0.5), const("one", 1.0),
              const("cubic", 0.044715), const("c", np.sqrt(2 / np.pi)),
              const("sqrt2", np.sqrt(2.0))]
    if causal:
        consts += [numpy_helper.from_array(np.tril(np.ones((t, t), bool)), "mask"),
                   const("neg", -1e9)]
    return consts


def layer_norm(nodes, x, p, out, eps):
    nodes.append(helper.make_node("LayerNormalization", [x, p + "_g", p + "_b"], [out],
                                  axis=-1, epsilon=eps))


def attention(nodes, p, h, out, causal):
    """Multi-head self-attention of h with parameters p + w_q ... b_o, as
    bench/models/generate.py's attention_heads (12 heads of 64)."""
    mk = helper.make_node
    for name in "qkv":
        linear(nodes, h, f"{p}w_{name}", f"{p}b_{name}", f"{p}{name}_lin")
        nodes += [mk("Reshape", [f"{p}{name}_lin", "heads_shape"], [f"{p}{name}_r"]),
                  mk("Transpose", [f"{p}{name}_r"], [p + name], perm=[0, 2, 1, 3])]
    nodes += [mk("Transpose", [p + "k"], [p + "kt"], perm=[0, 1, 3, 2]),
              mk("MatMul", [p + "q", p + "kt"], [p + "s0"]),
              mk("Mul", [p + "s0", "scale"], [p + "s"])]
    scores = p + "s"
    if causal:
        nodes.append(mk("Where", ["mask", p + "s", "neg"], [p + "masked"]))
        scores = p + "masked"
    nodes += [mk("Softmax", [scores], [p + "probs"], axis=-1),
              mk("MatMul", [p + "probs", p + "v"], [p + "heads"]),
              mk("Transpose", [p + "heads"], [p + "ht"], perm=[0, 2, 1, 3]),
              mk("Reshape", [p + "ht", "merged_shape"], [p + "merged"])]
    linear(nodes, p + "merged", p + "w_o", p + "b_o", out)


def mlp(nodes, p, h, out, exact_gelu=False):
    """768 -> 3072 -> 768 with GELU's tanh approximation, written out as
    0.5 f (1 + tanh(c (f + 0.044715 f^3))) (as exporters of opset 17 do),
    or exact (BERT): 0.5 f (1 + erf(f / sqrt 2)), which ONNX Runtime fuses."""
    mk = helper.make_node
    linear(nodes, h, p + "w_fc", p + "b_fc", p + "f")
    f = p + "f"
    if exact_gelu:
        nodes += [mk("Div", [f, "sqrt2"], [p + "fs"]), mk("Erf", [p + "fs"], [p + "er"]),
                  mk("Add", [p + "er", "one"], [p + "er1"]), mk("Mul", [f, p + "er1"], [p + "g0"]),
                  mk("Mul", [p + "g0", "half"], [p + "g"])]
        linear(nodes, p + "g", p + "w_proj", p + "b_proj", out)
        return
    nodes += [mk("Mul", [f, f], [p + "f2"]), mk("Mul", [p + "f2", f], [p + "f3"]),
              mk("Mul", [p + "f3", "cubic"], [p + "f3c"]), mk("Add", [f, p + "f3c"], [p + "inner0"]),
              mk("Mul", [p + "inner0", "c"], [p + "inner"]), mk("Tanh", [p + "inner"], [p + "th"]),
              mk("Add", [p + "th", "one"], [p + "th1"]), mk("Mul", [f, p + "th1"], [p + "g0"]),
              mk("Mul", [p + "g0", "half"], [p + "g"])]
    linear(nodes, p + "g", p + "w_proj", p + "b_proj", out)


def gpt2_block(nodes, p, x, out):
    """Pre-LN: r = x + attn(ln_1(x)); out = r + mlp(ln_2(r))."""
    mk = helper.make_node
    layer_norm(nodes, x, p + "ln_1", p + "n1", 1e-5)
    attention(nodes, p, p + "n1", p + "attn", causal=True)
    nodes.append(mk("Add", [x, p + "attn"], [p + "r"]))
    layer_norm(nodes, p + "r", p + "ln_2", p + "n2", 1e-5)
    mlp(nodes, p, p + "n2", p + "m")
    nodes.append(mk("Add", [p + "r", p + "m"], [out]))


def gpt2_graph(p, shape):
    nodes = []
    gpt2_block(nodes, "", "x", "y")
    return nodes, transformer_consts(shape[0], shape[1], causal=True)


def gpt2_small_graph(p, shape):
    b, t = shape
    mk = helper.make_node
    nodes = [mk("Gather", ["wte", "ids"], ["tok"]), mk("Add", ["tok", "wpe"], ["e"])]
    x = "e"
    for i in range(12):
        gpt2_block(nodes, f"h{i}_", x, f"h{i}")
        x = f"h{i}"
    layer_norm(nodes, x, "ln_f", "hf", 1e-5)
    # The tied head multiplies by wte transposed: given as its own initializer
    # (what ONNX Runtime's constant folding of a Transpose would make).
    nodes.append(mk("MatMul", ["hf", "wte_t"], ["logits"]))
    return nodes, transformer_consts(b, t, causal=True) + [
        numpy_helper.from_array(np.ascontiguousarray(p["wte"].T), "wte_t")]


def bert_layer_graph(p, shape):
    """Post-LN: x1 = ln_1(x + attn(x)); y = ln_2(x1 + mlp(x1))."""
    mk = helper.make_node
    nodes = []
    attention(nodes, "l0_", "x", "attn", causal=False)
    nodes.append(mk("Add", ["x", "attn"], ["r1"]))
    layer_norm(nodes, "r1", "l0_ln_1", "x1", 1e-12)
    mlp(nodes, "l0_", "x1", "m", exact_gelu=True)
    nodes.append(mk("Add", ["x1", "m"], ["r2"]))
    layer_norm(nodes, "r2", "l0_ln_2", "y", 1e-12)
    return nodes, transformer_consts(shape[0], shape[1], causal=False)


def classifier_head(nodes, x, batch, features):
    """generate.classifier_head: global average pooling and the classifier;
    the graph's nodes and its constants."""
    nodes += [helper.make_node("GlobalAveragePool", [x], ["gap4"]),
              helper.make_node("Reshape", ["gap4", "gap_shape"], ["gap"])]
    linear(nodes, "gap", "fc_w", "fc_b", "logits")
    return nodes, [const("gap_shape", [batch, features], np.int64)]


def resnet50_graph(p, shape):
    """As bench/models/generate.py's resnet50: convolutions with bias (batch
    norm folded in), ReLU, max pooling, bottlenecks with residual adds,
    global average pooling and the classifier."""
    mk = helper.make_node
    nodes = []

    def conv(name, x, k, stride=1, pad=0, relu=True):
        out = name + ("_pre" if relu else "")
        nodes.append(mk("Conv", [x, name + "_w", name + "_b"], [out], kernel_shape=[k, k],
                        strides=[stride, stride], pads=[pad] * 4))
        if relu:
            nodes.append(mk("Relu", [out], [name]))
        return name

    conv("conv1", "x", 7, stride=2, pad=3)
    nodes.append(mk("MaxPool", ["conv1"], ["pool1"], kernel_shape=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1]))
    x = "pool1"
    for stage, (blocks, stride) in enumerate([(3, 1), (4, 2), (6, 2), (3, 2)], start=1):
        for block in range(blocks):
            s = stride if block == 0 else 1
            q = f"s{stage}b{block}"
            conv(q + "_a", x, 1)
            conv(q + "_b", q + "_a", 3, stride=s, pad=1)
            conv(q + "_c", q + "_b", 1, relu=False)
            shortcut = conv(q + "_down", x, 1, stride=s, relu=False) if block == 0 else x
            nodes += [mk("Add", [q + "_c", shortcut], [q + "_sum"]), mk("Relu", [q + "_sum"], [q])]
            x = q
    return classifier_head(nodes, x, shape[0], 2048)


def mobilenet_v1_graph(p, shape):
    """As bench/models/generate.py's mobilenet_v1: the stem, depthwise (Conv
    with group = channels) and pointwise convolutions with bias and ReLU,
    global average pooling and the classifier."""
    mk = helper.make_node
    nodes = []

    def conv(name, x, k, stride=1, pad=0, group=1):
        nodes.extend([mk("Conv", [x, name + "_w", name + "_b"], [name + "_pre"],
                         kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                         group=group),
                      mk("Relu", [name + "_pre"], [name])])
        return name

    x = conv("conv1", "x", 3, stride=2, pad=1)
    for i, (stride, _) in enumerate(generate.MOBILENET_V1_BLOCKS, start=1):
        x = conv(f"dw{i}", x, 3, stride=stride, pad=1, group=p[f"dw{i}_w"].shape[0])
        x = conv(f"pw{i}", x, 1)
    return classifier_head(nodes, x, shape[0], 1024)


GRAPHS = {"mnist_mlp": mlp_graph, "lenet": lenet_graph, "gpt2_block": gpt2_graph,
          "gpt2_small": gpt2_small_graph, "bert_layer": bert_layer_graph,
          "resnet50": resnet50_graph, "mobilenet_v1": mobilenet_v1_graph}


def onnx_model(name, params, in_name, shape, dtype, out_name):
    nodes, consts = GRAPHS[name](params, shape)
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()]
    elem = TensorProto.INT32 if dtype == np.int32 else TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(in_name, elem, shape)],
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
    # Warm-up as dlc-bench-cpu's: 10 runs and 0.3 s at least.
    start = time.perf_counter()
    warm = 0
    while warm < 10 or time.perf_counter() - start < 0.3:
        out = session.run(None, feeds)
        warm += 1
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


def measure_dlc_gemm(dlc, bench, tmp, shapes, threads):
    """GFLOP/s of `y = x @ w` for each (m, n, k), w a module weight, as dlc
    compiles and runs it (its packed GEMM where it uses it, else the
    library's sgemm): the best of 5 medians of about 0.2 s of runs."""
    out = []
    for m, n, k in shapes:
        src = os.path.join(tmp, f"gemm_{m}_{n}_{k}.dlg")
        with open(src, "w") as f:
            f.write(f"graph gemm(x: f32[{m}, {k}]) -> (y: f32[{m}, {n}]) {{\n"
                    f"  param w: f32[{k}, {n}] = normal(mean=0, std=0.02, seed=1)\n"
                    "  y = x @ w\n}\n")
        module = os.path.join(tmp, f"gemm_{m}_{n}_{k}.dlcm")
        run([dlc, "compile", src, "-o", module])
        flops = 2.0 * m * n * k
        runs = str(max(5, int(0.2 / (flops / 100e9))))
        best = min(float(run([bench, "run", module, str(threads), runs]).split()[0])
                   for _ in range(5))
        out.append(flops / best / 1e6)
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
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    dlc = os.path.join(args.build, "bin", "dlc")
    bench = os.path.join(args.build, "bin", "dlc-bench-cpu")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-bench-cpu-") as tmp:
        prepared = []
        only = set(args.only.split(",")) if args.only else None
        for name, lines, dims, in_name, shape, dtype, out_name, batch in MODELS:
            if only and name not in only:
                continue
            src = os.path.join(ROOT, "examples", name + ".dlg")
            if lines:
                src = os.path.join(tmp, name + ".dlg")
                with open(src, "w") as f:
                    f.write("\n".join(lines()) + "\n")
            dim_args = [f"--dim={k}={v}" for k, v in dims.items()]
            key = name + "".join(f"-{k}{v}" for k, v in dims.items())
            module = os.path.join(tmp, key + ".dlcm")
            run([dlc, "compile", src, "-o", module] + dim_args)
            flops = int(re.search(r"FLOPs per run: ([\d,]+)",
                                  run([dlc, "check", src] + dim_args)).group(1).replace(",", ""))
            rng = np.random.default_rng(0)
            x = (rng.integers(0, 50257, shape).astype(np.int32) if dtype == np.int32
                 else rng.standard_normal(shape).astype(np.float32))
            xin, yout, pfile = (os.path.join(tmp, f) for f in ("x.npy", "y.npy", "p.npz"))
            np.save(xin, x)
            run([dlc, "run", module, f"--input={in_name}=@{xin}", f"--output={out_name}=@{yout}"])
            run([dlc, "run", src, f"--save-params={pfile}", f"--input={in_name}=@{xin}"] + dim_args)
            with np.load(pfile) as archive:
                params = {k: archive[k] for k in archive.files}
            model = onnx_model(name, params, in_name, shape, dtype, out_name)
            ours = np.load(yout).astype(np.float64)
            # The large models (a run of 10-500 ms) take fewer timed runs.
            runs = args.runs if lines is None else max(10, args.runs // 5)
            prepared.append((key, name, dims, batch, module, model, {in_name: x}, ours, runs, flops))
        samples = {p[0]: [] for p in prepared}
        for _ in range(args.repeat):
            for key, name, dims, batch, module, model, feeds, ours, runs, _ in prepared:
                ort_ms, ort_out = time_ort(model, feeds, args.threads, runs)
                err = np.linalg.norm(ours - ort_out) / np.linalg.norm(ort_out)
                med, p10, p90 = map(float, run([bench, "run", module, str(args.threads),
                                                str(runs)]).split())
                samples[key].append((med, p10, p90, ort_ms, err))
        for key, name, dims, batch, *_, flops in prepared:
            s = samples[key]
            med = float(np.median([x[0] for x in s]))
            ort_ms = float(np.median([x[3] for x in s]))
            ratios = [x[0] / x[3] for x in s]
            rows.append((name, dims, batch, med, min(x[0] for x in s), max(x[0] for x in s),
                         ort_ms, min(x[3] for x in s), max(x[3] for x in s),
                         float(np.median(ratios)), min(ratios), max(ratios), max(x[4] for x in s), flops))
        dispatch = measure_dispatch(dlc, bench, tmp, sorted({1, args.threads}))
    peaks = {}
    for t in sorted({args.threads, 1}):
        for line in run([bench, "peak", str(t)]).splitlines():
            what, value = line.split()
            peaks[(t, what)] = float(value)
    gemm = run([bench, "gemm", str(args.threads)]).splitlines()[1:]
    gemm1 = run([bench, "gemm", "1"]).splitlines()[1:] if args.threads != 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        shapes = [tuple(int(v) for v in row[1:].split('" ')[1].split()[:3]) for row in gemm]
        dlc_gemm = {t: measure_dlc_gemm(dlc, bench, tmp, shapes, t)
                    for t in sorted({args.threads, 1})}

    widest = "fma512" if (args.threads, "fma512") in peaks else "fma256"
    isa = {"fma512": "AVX-512", "fma256": "AVX2"}
    peak = peaks[(args.threads, widest)]
    lines = [f"machine: {machine()}",
             f"threads: {args.threads} (dlc session and ONNX Runtime {ort.__version__} intra-op); "
             f"each latency is the median of {args.runs} runs ({max(10, args.runs // 5)} for "
             "ResNet-50, MobileNet v1, the BERT layer and GPT-2 small) after warm-up runs (10, and 0.3 s at least), "
             f"measured {args.repeat} times interleaved: median of the {args.repeat} (min–max); "
             f"GFLOP/s from `dlc check`'s FLOPs per run at the median latency, against the "
             f"{isa[widest]} FMA peak of {peak:.0f} GFLOP/s on {args.threads} thread(s)", "",
             "| model | size | dlc ms (min–max) | ORT ms (min–max) | dlc/ORT (min–max) | dlc samples/s | ORT samples/s | dlc GFLOP/s (of peak) | ORT GFLOP/s | dlc vs ORT rel. error |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, dims, batch, med, lo, hi, ort_ms, olo, ohi, ratio, rlo, rhi, err, flops in rows:
        size = ", ".join(f"{k}={v}" for k, v in dims.items())
        ours, theirs = flops / med / 1e6, flops / ort_ms / 1e6
        lines.append(f"| {name} | {size} | {med:.3f} ({lo:.3f}–{hi:.3f}) | {ort_ms:.3f} ({olo:.3f}–{ohi:.3f}) | "
                     f"{ratio:.2f} ({rlo:.2f}–{rhi:.2f}) | {1e3 * batch / med:.0f} | {1e3 * batch / ort_ms:.0f} | "
                     f"{ours:.1f} ({100 * ours / peak:.0f}%) | {theirs:.1f} | {err:.1e} |")
    lines += ["", f"GEMM (f32, row-major), GFLOP/s, best of 5 × 0.2 s; peak = a tight loop of "
              f"independent {isa[widest]} FMAs on the same threads (`dlc-bench-cpu peak`), the "
              "widest vectors this CPU has; "
              "*split M* = each library single-threaded on spinning threads splitting M (how dlc "
              "kernels call it), *split N* = the same splitting N in blocks of 16 columns; "
              "*dlc* = `y = x @ w` with w a module weight, compiled by dlc and run by "
              "`dlc-bench-cpu run` (what a model's product by a weight gets: dlc's packed GEMM "
              "for weights of 1 MiB or more on AVX2 CPUs without AVX-512, else oneDNN's or "
              "OpenBLAS's sgemm split over M), best of 5 medians", ""]
    for t, table in ((args.threads, gemm), (1, gemm1)):
        if table is None:
            continue
        peak = peaks[(t, widest)]
        lines += [f"{t} thread(s): FMA peak " + ", ".join(
                      f"{peaks[(t, w)]:.1f} GFLOP/s ({isa[w]})" for w in ("fma512", "fma256")
                      if (t, w) in peaks), "",
                  "| shape | m×n×k | OpenBLAS | oneDNN | OpenBLAS split M | oneDNN split M | "
                  "OpenBLAS split N | oneDNN split N | dlc |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for row, ours in zip(table, dlc_gemm[t]):
            what, rest = row[1:].split('" ')
            m, n, k, *vals = rest.split()
            vals.append(ours)
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
