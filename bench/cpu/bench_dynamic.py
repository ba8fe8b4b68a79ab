#!/usr/bin/env python3
"""One module for a range of batch sizes against modules compiled for each size (CPU).

`dlc compile M --dim N=1..64` writes one module for every N in the range
(issue 14 item 4). This compares its latency at N = 1 and N = 64 with the
module compiled for that N alone, both timed by `dlc-bench-cpu run` (the
runtime's C++ API, median of many runs after 10 warm-up runs), interleaved
--repeat times (which of the two runs first alternates); the table gives the
medians and the ratio range/specialised (goal: within 10%, a ratio of at
most 1.10).

    bench/cpu/bench_dynamic.py [--build build] [--threads 2] [--runs N] [--repeat 5] [--models a,b] [--out bench/results/dynamic.md]
"""
import argparse
import os
import platform
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# (model, its batch dimension, the range's top, other dims, timed runs: the
# small models many, since this shared machine's speed swings by tens of
# percent from one moment to the next)
MODELS = [("mnist_mlp", "N", 64, {}, 2000), ("lenet", "N", 64, {}, 2000),
          ("gpt2_block", "B", 8, {"T": 128}, 30)]


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
    ap.add_argument("--runs", type=int, default=0, help="timed runs (default: per model)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    ap.add_argument("--models", default="", help="comma-separated subset, e.g. lenet")
    args = ap.parse_args()
    dlc = os.path.join(args.build, "bin", "dlc")
    bench = os.path.join(args.build, "bin", "dlc-bench-cpu")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-bench-dynamic-") as tmp:
        for name, dim, top, others, model_runs in MODELS:
            runs = args.runs or model_runs
            if args.models and name not in args.models.split(","):
                continue
            src = os.path.join(ROOT, "examples", name + ".dlg")
            extra = [f"--dim={k}={v}" for k, v in others.items()]
            ranged = os.path.join(tmp, f"{name}-range.dlcm")
            run([dlc, "compile", src, f"--dim={dim}=1..{top}", "-o", ranged] + extra)
            for n in (1, top):
                fixed = os.path.join(tmp, f"{name}-{n}.dlcm")
                run([dlc, "compile", src, f"--dim={dim}={n}", "-o", fixed] + extra)
                times = {"fixed": [], "range": []}
                for r in range(args.repeat):
                    pair = [("fixed", fixed, []), ("range", ranged, [str(n)])]
                    # Alternate which goes first: the machine's speed drifts.
                    for what, module, size in (pair if r % 2 == 0 else pair[::-1]):
                        med = float(run([bench, "run", module, str(args.threads), str(runs)]
                                        + size).split()[0])
                        times[what].append(med)
                f, r = np.median(times["fixed"]), np.median(times["range"])
                ratios = [b / a for a, b in zip(times["fixed"], times["range"])]
                size = ", ".join([f"{dim}={n}"] + [f"{k}={v}" for k, v in others.items()])
                rows.append((name, size, f"{dim}=1..{top}", runs, f, r, float(np.median(ratios)),
                             min(ratios), max(ratios)))
    lines = [f"machine: {machine()}",
             f"threads: {args.threads}; each latency is the median of the given runs after 10 "
             f"warm-up runs, measured {args.repeat} times interleaved (order alternating): "
             f"median of the {args.repeat}, and the median and range of the {args.repeat} "
             f"ratios", "",
             "| model | run at | range module | runs | specialised ms | range ms | range/specialised (min–max) |",
             "|---|---|---|---:|---:|---:|---|"]
    for name, size, rng, runs, f, r, ratio, lo, hi in rows:
        lines.append(f"| {name} | {size} | {rng} | {runs} | {f:.3f} | {r:.3f} | "
                     f"{ratio:.2f} ({lo:.2f}–{hi:.2f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as out:
            out.write("# One module for a range of batch sizes (CPU)\n\n"
                      "Produced by `bench/cpu/bench_dynamic.py` (see its docstring for the "
                      "method).\n\n" + text)


if __name__ == "__main__":
    main()
