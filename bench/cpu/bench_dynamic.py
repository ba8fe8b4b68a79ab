#!/usr/bin/env python3
"""One module for a range of batch sizes against modules compiled for each size (CPU).

`dlc compile M --dim N=1..64` writes one module for every N in the range
(issue 14 item 4). This compares its latency at N = 1 and N = 64 with the
module compiled for that N alone, both timed by `dlc-bench-cpu run` (the
runtime's C++ API, median of --runs runs after 10 warm-up runs), interleaved
--repeat times; the table gives the medians and the ratio range/specialised
(goal: within 10%, a ratio of at most 1.10).

    bench/cpu/bench_dynamic.py [--build build] [--threads 2] [--runs 200] [--repeat 5] [--out bench/results/dynamic.md]
"""
import argparse
import os
import platform
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (model, its batch dimension, the range's top, other dims)
MODELS = [("mnist_mlp", "N", 64, {}), ("lenet", "N", 64, {}), ("gpt2_block", "B", 8, {"T": 128})]


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    dlc = os.path.join(args.build, "bin", "dlc")
    bench = os.path.join(args.build, "bin", "dlc-bench-cpu")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-bench-dynamic-") as tmp:
        for name, dim, top, others in MODELS:
            src = os.path.join(ROOT, "examples", name + ".dlg")
            extra = [f"--dim={k}={v}" for k, v in others.items()]
            ranged = os.path.join(tmp, f"{name}-range.dlcm")
            run([dlc, "compile", src, f"--dim={dim}=1..{top}", "-o", ranged] + extra)
            for n in (1, top):
                fixed = os.path.join(tmp, f"{name}-{n}.dlcm")
                run([dlc, "compile", src, f"--dim={dim}={n}", "-o", fixed] + extra)
                times = {"fixed": [], "range": []}
                for _ in range(args.repeat):
                    for what, module, size in (("fixed", fixed, []), ("range", ranged, [str(n)])):
                        med = float(run([bench, "run", module, str(args.threads), str(args.runs)]
                                        + size).split()[0])
                        times[what].append(med)
                f, r = np.median(times["fixed"]), np.median(times["range"])
                ratios = [b / a for a, b in zip(times["fixed"], times["range"])]
                size = ", ".join([f"{dim}={n}"] + [f"{k}={v}" for k, v in others.items()])
                rows.append((name, size, f"{dim}=1..{top}", f, r, r / f, min(ratios), max(ratios)))
    lines = [f"machine: {machine()}",
             f"threads: {args.threads}; each latency is the median of {args.runs} runs after 10 "
             f"warm-up runs, measured {args.repeat} times interleaved: median of the "
             f"{args.repeat}", "",
             "| model | run at | range module | specialised ms | range ms | range/specialised (min–max) |",
             "|---|---|---|---:|---:|---|"]
    for name, size, rng, f, r, ratio, lo, hi in rows:
        lines.append(f"| {name} | {size} | {rng} | {f:.3f} | {r:.3f} | {ratio:.2f} ({lo:.2f}–{hi:.2f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write("# One module for a range of batch sizes (CPU)\n\n"
                      "Produced by `bench/cpu/bench_dynamic.py` (see its docstring for the "
                      "method).\n\n" + text)


if __name__ == "__main__":
    main()
