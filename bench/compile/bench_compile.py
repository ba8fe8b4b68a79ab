#!/usr/bin/env python3
"""dlc compile's time and peak memory (issue 16 item 5), measured in one run.

For each model: a cold compile (empty caches), one with the kernel cache
the cold one filled but no module cache (the compiler's own work: every
pass, the weights, the writer), a warm one (the module cache hit: the
module copied), and one with --no-cache, each `-o` a module;
wall time and the process's peak RSS (getrusage of the child). The baseline
of the ratios is the cold compile of the same run. Writes a Markdown table
to standard output (bench/results/compile.md keeps the latest).

    python3 bench/compile/bench_compile.py [--build build] [--repeat 3]
"""
import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = [
    ("MNIST MLP (N=64)", "examples/mnist_mlp.dlg", ["--dim", "N=64"]),
    ("GPT-2 block (B=1, T=128)", "examples/gpt2_block.dlg", ["--dim", "B=1", "--dim", "T=128"]),
    ("GPT-2 small (B=1, T=1024)", "bench/models/gpt2_small.dlg", ["--dim", "B=1"]),
    # Its weights drawn at load (module format 1.5), and its train step,
    # whose parameters the session draws: modules of code, no weights.
    ("GPT-2 small, --draw-params", "bench/models/gpt2_small.dlg",
     ["--dim", "B=1", "--draw-params"]),
    ("GPT-2 small train step (B=1)", "bench/models/gpt2_small.dlg", ["--dim", "B=1", "--train"]),
]


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def compile_once(dlc, model, dims, out, cache, extra=()):
    env = dict(os.environ, DLC_CACHE_DIR=cache, DLC_NO_PROGRESS="1")
    start = time.perf_counter()
    subprocess.run([dlc, "compile", os.path.join(ROOT, model), *dims, "-o", out, *extra],
                   check=True, env=env)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dlc = os.path.join(args.build, "bin", "dlc")
    print(f"Machine: {cpu_name()}, {os.cpu_count()} logical cores; "
          f"`dlc compile -o`, median of {args.repeat} runs each.\n")
    print("| model | module MB | cold s | kernels cached s (x cold) | warm s (x cold) | --no-cache s (x cold) | peak RSS MB | RSS / module |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="dlc-bench-compile-") as tmp:
        out = os.path.join(tmp, "m.dlcm")
        for name, model, dims in MODELS:
            cold, kernels, warm, nocache, peaks = [], [], [], [], []
            for r in range(args.repeat):
                cache = os.path.join(tmp, f"cache-{name}-{r}")
                s = compile_once(dlc, model, dims, out, cache)
                cold.append(s)
                shutil.rmtree(os.path.join(cache, "modules"), ignore_errors=True)
                s = compile_once(dlc, model, dims, out, cache)
                kernels.append(s)
                s = compile_once(dlc, model, dims, out, cache)
                warm.append(s)
                s = compile_once(dlc, model, dims, out, cache, ["--no-cache"])
                nocache.append(s)
                shutil.rmtree(cache, ignore_errors=True)
            # The peak of one compile alone: a child of its own.
            probe = subprocess.run(
                [sys.executable, "-c",
                 "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                 dlc, "compile", os.path.join(ROOT, model), *dims, "-o", out],
                check=True, capture_output=True, text=True,
                env=dict(os.environ, DLC_CACHE_DIR=os.path.join(tmp, "probe")))
            peak = int(probe.stdout.strip()) * 1024
            size = os.path.getsize(out)
            med = lambda v: sorted(v)[len(v) // 2]
            c, k, w, n = med(cold), med(kernels), med(warm), med(nocache)
            print(f"| {name} | {size / 2**20:.1f} | {c:.2f} | {k:.2f} ({k / c:.2f}x) | {w:.2f} ({w / c:.2f}x) | "
                  f"{n:.2f} ({n / c:.2f}x) | {peak / 2**20:.0f} | {peak / size:.2f} |")


if __name__ == "__main__":
    main()
