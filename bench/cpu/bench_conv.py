#!/usr/bin/env python3
"""ResNet-50's convolutions on this CPU: dlc's im2col + GEMM against oneDNN.

    bench/cpu/bench_conv.py [--build build] [--out bench/results/cpu-conv.md]

Runs `dlc-bench-conv` (bench/cpu/conv_bench.cpp, which says what each
column computes) on 1 thread and on every core, and writes a table of
GFLOP/s per convolution and method with the machine and its FMA peak
(`dlc-bench-cpu peak`), each method's ratio to im2col + GEMM, and the
FLOP-weighted total over the shapes.
"""
import argparse
import os
import platform
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
METHODS = ("im2col_sgemm", "nchw", "nhwc", "blocked")


def machine():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} logical cores"
    return platform.processor()


def run(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "dlc-bench-conv"), str(threads)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    head = out[0].split()
    rows = [dict(zip(head, line.split())) for line in out[1:]]
    for r in rows:
        hw, k, stride, pad = (int(r[x]) for x in ("hw", "k", "stride", "pad"))
        side = (hw + 2 * pad - k) // stride + 1
        r["flops"] = 2.0 * int(r["o"]) * int(r["c"]) * k * k * side * side
    return rows


def peak(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "dlc-bench-cpu"), "peak", str(threads)],
                         capture_output=True, text=True).stdout
    numbers = [float(w) for w in out.split() if w.replace(".", "", 1).isdigit()]
    return max(numbers) if numbers else None


def table(rows, threads, top):
    lines = [f"{threads} thread(s): FMA peak {top:.1f} GFLOP/s" if top else f"{threads} thread(s)",
             "", "| convolution | GFLOP | im2col + sgemm | oneDNN NCHW | oneDNN NHWC | "
             "oneDNN blocked | oneDNN's kernels (NCHW / NHWC / blocked) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    totals = {m: 0.0 for m in METHODS}
    for r in rows:
        base = float(r["im2col_sgemm"])
        cells = [f"{base:.1f}"] + [f"{float(r[m]):.1f} ({float(r[m]) / base:.2f}x)"
                                   for m in METHODS[1:]]
        for m in METHODS:
            totals[m] += r["flops"] / (float(r[m]) * 1e9)
        lines.append(f"| {r['conv']} | {r['flops'] / 1e9:.3f} | " + " | ".join(cells) +
                     f" | {r['impl_nchw']} / {r['impl_nhwc']} / {r['impl_blocked']} |")
    flops = sum(r["flops"] for r in rows)
    rates = {m: flops / totals[m] / 1e9 for m in METHODS}
    lines.append("| all of the above, FLOP-weighted | "
                 f"{flops / 1e9:.3f} | {rates['im2col_sgemm']:.1f} | " +
                 " | ".join(f"{rates[m]:.1f} ({rates[m] / rates['im2col_sgemm']:.2f}x)"
                            for m in METHODS[1:]) + " | |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["# ResNet-50's convolutions: im2col + GEMM against oneDNN's primitive", "",
             "Produced by `bench/cpu/bench_conv.py` (`dlc-bench-conv`, bench/cpu/conv_bench.cpp:",
             "what each column computes). GFLOP/s, f32, batch 1, the best of 7 timings of 5",
             "calls; weights reordered once outside the timing; activations already in the",
             "column's layout (no reorder counted). oneDNN threads with OpenMP; im2col + sgemm",
             "is one call (dnnl_sgemm on the same OpenMP threads), not dlc's split over",
             "output channels.", "", f"machine: {machine()}", ""]
    for threads in sorted({1, os.cpu_count() or 1}):
        lines += table(run(args.build, threads), threads, peak(args.build, threads))
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
