#!/usr/bin/env python3
"""Data-parallel training on CPU ranks: the MLP on 1, 2 and 4 ranks.

Trains examples/fashion_mnist/mlp.dlg for STEPS steps of a global batch of
64 with `mpirun -np N dlc train ... --mesh data=N --parallel data` (N = 1
through the same partitioned path, so the ranks compare like with like),
and reports the step time, the share of it spent in collectives (rank 0's
DLC_SPMD_STATS: communication and waiting for peers), and the speed-up.
On a machine with fewer cores than ranks (this one has 2) the ranks share
cores: the table shows the overheads, not a scaling curve.

    bench/scaling/bench_scaling.py [--build build] [--steps 200] [--out bench/results/scaling.md]
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def machine():
    cpu = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def run(build, ranks, steps):
    with tempfile.TemporaryDirectory(prefix="dlc-scaling-") as tmp:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
               "-x", "DLC_SPMD_STATS=1", "-x", "OMP_NUM_THREADS=1",
               os.path.join(build, "bin", "dlc"), "train",
               os.path.join(ROOT, "examples", "fashion_mnist", "mlp.dlg"),
               "--data", "/usr/share/datasets/fashion-mnist", "--batch-size", "64",
               "--max-steps", str(steps), "--mesh", f"data={ranks}", "--parallel", "data",
               "--checkpoint-dir", os.path.join(tmp, "ck")]
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if p.returncode:
            sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
        m = re.search(r"spmd: compute ([0-9.]+) s, collectives ([0-9.]+) s", p.stderr)
        compute, comm = float(m.group(1)), float(m.group(2))
        return wall, compute, comm


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = []
    for ranks in (1, 2, 4):
        wall, compute, comm = run(args.build, ranks, args.steps)
        step_ms = 1e3 * (compute + comm) / args.steps
        rows.append((ranks, step_ms, comm / (compute + comm), wall))
        print(f"{ranks} ranks: {step_ms:.2f} ms/step, collectives {100 * comm / (compute + comm):.0f}%",
              file=sys.stderr)
    base = rows[0][1]
    lines = ["# Data-parallel training on CPU ranks (MLP, Fashion-MNIST, global batch 64)", "",
             f"Machine: {machine()}; Open MPI ranks, one thread each; {args.steps} steps;",
             "measured by `bench/scaling/bench_scaling.py` in one run. Step time is rank 0's",
             "compute plus collectives (waiting for peers included); overlap of communication",
             "with the backward pass: none yet (the all-reduces run between segments).", "",
             "| ranks | ms/step | collectives share | speed-up vs 1 rank | wall s (incl. compile) |",
             "|---:|---:|---:|---:|---:|"]
    for ranks, step_ms, share, wall in rows:
        lines.append(f"| {ranks} | {step_ms:.2f} | {100 * share:.0f}% | {base / step_ms:.2f} | {wall:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
