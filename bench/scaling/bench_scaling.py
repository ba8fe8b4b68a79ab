#!/usr/bin/env python3
"""Data-parallel training on CPU ranks: the MLP on 1, 2 and 4 ranks.

Trains examples/fashion_mnist/mlp.dlg for STEPS steps of a global batch of
64 with `mpirun -np N dlc train ... --mesh data=N --parallel data` (N = 1
through the same partitioned path, so the ranks compare like with like),
(the host path: segments between collectives, driver/SpmdRunner.h), and
the same step compiled into one module per process whose collectives the
runtime executes (`dlc train --compile-only --mesh` + `mpirun
dlc-train-job`: its step time from the wall time of two runs), and reports
rank 0's step time (DLC_SPMD_STATS: segments computed plus
the time they waited for a collective's result), the time its
communication thread spent in collectives (waiting for peers included),
the share of that hidden behind the backward pass (overlap), and the
speed-up; with the default 25 MiB buckets (the MLP's 0.4 MB of gradients
go as one call after the last is computed), with 0.1 MiB buckets (one per
layer, issued as soon as each is ready) and with --zero 1.
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


def run(build, ranks, steps, extra):
    with tempfile.TemporaryDirectory(prefix="dlc-scaling-") as tmp:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
               "-x", "DLC_SPMD_STATS=1", "-x", "OMP_NUM_THREADS=1",
               os.path.join(build, "bin", "dlc"), "train",
               os.path.join(ROOT, "examples", "fashion_mnist", "mlp.dlg"),
               "--data", "/usr/share/datasets/fashion-mnist", "--batch-size", "64",
               "--max-steps", str(steps), "--mesh", f"data={ranks}", "--parallel", "data",
               "--checkpoint-dir", os.path.join(tmp, "ck")] + extra
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if p.returncode:
            sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
        m = re.search(r"spmd: compute ([0-9.]+) s, collectives ([0-9.]+) s, "
                      r"exposed ([0-9.]+) s, ([0-9]+) calls", p.stderr)
        return wall, float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4))


def run_job(build, ranks, steps):
    """The compiled path: the partitioned train step as one module per
    process, its collectives run by the runtime (dlc-train-job). Step time
    from two runs (steps and steps/4) so that start-up cancels out."""
    with tempfile.TemporaryDirectory(prefix="dlc-scaling-") as tmp:
        job = os.path.join(tmp, "job")
        subprocess.run([os.path.join(build, "bin", "dlc"), "train",
                        os.path.join(ROOT, "examples", "fashion_mnist", "mlp.dlg"),
                        "--data", "/usr/share/datasets/fashion-mnist", "--batch-size", "64",
                        "--compile-only", job, "--mesh", f"data={ranks}", "--parallel", "data"],
                       check=True, capture_output=True)
        walls, stats = [], None
        for n in (steps // 4, steps):
            launch = (["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
                       "-x", "DLC_SPMD_STATS=1", "-x", "OMP_NUM_THREADS=1"] if ranks > 1 else [])
            cmd = launch + [os.path.join(build, "bin", "dlc-train-job"), job, "--data",
                            "/usr/share/datasets/fashion-mnist", "--max-steps", str(n),
                            "--checkpoint-dir", os.path.join(tmp, f"ck{n}")]
            env = dict(os.environ, DLC_SPMD_STATS="1")
            start = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            walls.append(time.perf_counter() - start)
            if p.returncode:
                sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
            m = re.search(r"module collectives: ([0-9.]+) s on the communication thread, "
                          r"([0-9.]+) s waited", p.stderr)
            stats = (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)
        step_ms = 1e3 * (walls[1] - walls[0]) / (steps - steps // 4)
        return step_ms, 1e3 * stats[0] / steps, 1e3 * stats[1] / steps, walls[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    configs = [("buckets 25 MiB", []), ("buckets 0.1 MiB", ["--bucket-mb", "0.1"]),
               ("--zero 1", ["--zero", "1"])]
    rows = []
    for name, extra in configs:
        for ranks in (1, 2, 4):
            wall, compute, comm, exposed, calls = run(args.build, ranks, args.steps, extra)
            step_ms = 1e3 * (compute + exposed) / args.steps
            comm_ms = 1e3 * comm / args.steps
            exposed_ms = 1e3 * exposed / args.steps
            # The waits include handing the call to the thread and waking
            # up after it, so they can exceed the collective itself.
            overlap = max(0.0, 1 - exposed / comm) if comm > 0 else 0.0
            rows.append((name, ranks, calls, step_ms, comm_ms, exposed_ms, overlap, wall))
            print(f"{name}, {ranks} ranks: {step_ms:.2f} ms/step, collectives {comm_ms:.2f} ms, "
                  f"overlap {100 * overlap:.0f}%", file=sys.stderr)
    for ranks in (1, 2, 4):
        step_ms, comm_ms, exposed_ms, wall = run_job(args.build, ranks, args.steps)
        overlap = max(0.0, 1 - exposed_ms / comm_ms) if comm_ms > 0 else 0.0
        rows.append(("compiled module (dlc-train-job)", ranks, 6, step_ms, comm_ms, exposed_ms,
                     overlap, wall))
        print(f"compiled module, {ranks} ranks: {step_ms:.2f} ms/step, collectives "
              f"{comm_ms:.2f} ms, overlap {100 * overlap:.0f}%", file=sys.stderr)
    base = rows[0][3]
    lines = ["# Data-parallel training on CPU ranks (MLP, Fashion-MNIST, global batch 64)", "",
             f"Machine: {machine()}; Open MPI ranks, one thread each; {args.steps} steps;",
             "measured by `bench/scaling/bench_scaling.py` in one run. Step time is rank 0's",
             "segments plus the time they waited for collectives; communication is its",
             "communication thread's time in collectives (waiting for peers included);",
             "exposed is what the segments waited for it (hand-over and wake-up",
             "included); overlap is the share of communication not exposed.", "",
             "| configuration | ranks | calls/step | ms/step | communication ms/step | "
             "communication share | exposed ms/step | overlap | speed-up vs 1 rank | "
             "wall s (incl. compile) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, ranks, calls, step_ms, comm_ms, exposed_ms, overlap, wall in rows:
        lines.append(f"| {name} | {ranks} | {calls} | {step_ms:.2f} | {comm_ms:.2f} | "
                     f"{100 * comm_ms / step_ms:.0f}% | {exposed_ms:.2f} | {100 * overlap:.0f}% | "
                     f"{base / step_ms:.2f} | {wall:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
