#!/usr/bin/env python3
"""Measures this machine once for the cost model's `cpu` device spec.

    bench/costmodel/measure_cpu.py [--build build] [--out devices/cpu.json]

What devices/cpu.json holds, each measured as dlc runs it (one thread per
rank, as `mpirun dlc train --mesh` runs ranks):

  peak_flops.f32          a dlc-compiled 256x1024x1024 matmul (`dlc compile`,
                          timed by `dlc-bench-cpu run`, one thread): FLOPs
                          over its median time, the GEMM rate dlc's kernels
                          reach, not the core's peak;
  memory_bandwidth        a dlc-compiled element-wise op over 32 MiB (read
                          and write): bytes over its median time;
  kernel_launch_seconds   a chain of 32 matmuls of 1x8 by 8x8 (each its own
                          kernel): the median time over 32, what one kernel
                          costs the runtime beyond its work;
  cores                   os.cpu_count(): ranks beyond it time-share the
                          cores (dlc plan scales a rank's kernels by
                          ranks / cores);
  links.cpu-mpi           MPI_Allreduce over 2 ranks (mpirun, shared memory)
                          of 64 B to 4 MiB, fitted to the ring's
                          2(n-1) latency + 2(n-1)/n bytes / bandwidth.

The result is a file like devices/h100.json; `dlc plan --device-spec cpu`
reads it, and `--link cpu-mpi` (its default link) the link, from
devices/links.json.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def median_ms(build, tmp, name, text, iterations):
    """Compiles `text` (a .dlg) and returns dlc-bench-cpu's median ms."""
    src = os.path.join(tmp, name + ".dlg")
    with open(src, "w") as f:
        f.write(text)
    module = os.path.join(tmp, name + ".dlcm")
    run([os.path.join(build, "bin", "dlc"), "compile", src, "-o", module])
    out = run([os.path.join(build, "bin", "dlc-bench-cpu"), "run", module, "1", str(iterations)])
    return float(out.split()[0])


def machine():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def fit_alpha_beta(points, ranks=2):
    """t = 2(n-1) a + 2(n-1)/n bytes / b: the latency a from the smallest
    message (all latency), the bandwidth b by least squares over the
    messages of 64 KiB and more (mostly bandwidth) with a fixed."""
    steps = 2 * (ranks - 1)
    smallest_bytes, smallest_t = min(points)
    a = smallest_t / steps
    large = [(steps / ranks * b, t - steps * a) for b, t in points if b >= 64 << 10]
    inv_b = sum(w * t for w, t in large) / sum(w * w for w, _ in large)
    return a, 1 / inv_b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "devices", "cpu.json"))
    ap.add_argument("--links", default=os.path.join(ROOT, "devices", "links.json"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="dlc-measure-cpu-") as tmp:
        m, k, n = 256, 1024, 1024
        gemm_ms = median_ms(args.build, tmp, "gemm", f"""
graph gemm(x: f32[{m}, {k}]) -> (y: f32[{m}, {n}]) {{
  param w: f32[{k}, {n}] = normal(mean=0, std=0.02, seed=1)
  y = x @ w
}}
""", 50)
        flops = 2 * m * n * k / (gemm_ms * 1e-3)

        elements = 8 << 20
        copy_ms = median_ms(args.build, tmp, "copy", f"""
graph copy(x: f32[{elements}]) -> (y: f32[{elements}]) {{
  y = x * 2
}}
""", 30)
        bandwidth = 2 * 4 * elements / (copy_ms * 1e-3)

        chain = 32
        lines = [f"  param w{i}: f32[8, 8] = normal(mean=0, std=0.3, seed={i + 1})" for i in range(chain)]
        h = "x"
        for i in range(chain):
            lines.append(f"  h{i} = {h} @ w{i}")
            h = f"h{i}"
        lines.append(f"  y = {h}")
        launch_ms = median_ms(args.build, tmp, "launch",
                              "graph launch(x: f32[1, 8]) -> (y: f32[1, 8]) {\n" +
                              "\n".join(lines) + "\n}\n", 2000)
        launch = launch_ms * 1e-3 / chain

        exe = os.path.join(tmp, "mpi_alpha_beta")
        run(["mpicxx", "-O2", os.path.join(ROOT, "bench", "costmodel", "mpi_alpha_beta.cpp"),
             "-o", exe])
        out = run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", exe])
        points = [(int(b), float(t)) for b, t in (line.split() for line in out.splitlines())]
        # Up to 4 MiB: what fits the caches the collectives of the
        # calibration's models move through.
        alpha, beta = fit_alpha_beta([p for p in points if p[0] <= 4 << 20])

    spec = {
        "name": f"CPU rank ({machine()}, 1 thread)",
        "source": "bench/costmodel/measure_cpu.py on this machine: dlc-compiled GEMM "
                  f"{m}x{k}x{n} {gemm_ms:.3f} ms, element-wise copy of {4 * elements >> 20} MiB "
                  f"{copy_ms:.3f} ms, {chain} 8x8 matmul kernels {launch_ms:.4f} ms; "
                  "MPI_Allreduce over 2 ranks fitted to the ring's alpha-beta",
        "peak_flops": {"f32": float(f"{flops:.4g}")},
        "memory_bandwidth": float(f"{bandwidth:.4g}"),
        "memory_bytes": float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")),
        "kernel_launch_seconds": float(f"{launch:.3g}"),
        "cores": os.cpu_count(),
        "default_link": "cpu-mpi",
    }
    with open(args.out, "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    # The link goes with the others, as a named line of links.json (its
    # one-line-a-link layout kept).
    with open(args.links) as f:
        lines = [l for l in f.read().splitlines() if '"cpu-mpi"' not in l]
    close = max(i for i, l in enumerate(lines) if l.strip() == "}")
    last = max(i for i in range(close) if lines[i].strip())
    lines[last] = lines[last].rstrip(",") + ","
    lines.insert(last + 1, f'  "cpu-mpi": {{"bandwidth": {beta:.3e}, "latency": {alpha:.2e}}}')
    with open(args.links, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"GEMM {flops / 1e9:.1f} GFLOP/s, copy {bandwidth / 1e9:.2f} GB/s, kernel "
          f"{launch * 1e6:.2f} us, MPI latency {alpha * 1e6:.2f} us a step, "
          f"{beta / 1e9:.2f} GB/s -> {args.out}, {args.links} (cpu-mpi)")
    for b, t in points:
        print(f"  allreduce {b:>9} B: {t * 1e6:10.1f} us")


if __name__ == "__main__":
    main()
