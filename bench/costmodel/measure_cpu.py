#!/usr/bin/env python3
"""Measures this machine once for the cost model's `cpu` device spec.

    bench/costmodel/measure_cpu.py [--build build] [--out devices/cpu.json]

What devices/cpu.json holds, each measured as dlc runs it (one thread per
rank, as `mpirun dlc train --mesh` runs ranks):

  peak_flops.f32          a dlc-compiled 256x1024x1024 matmul (`dlc compile`,
                          timed by `dlc-bench-cpu run`, one thread): FLOPs
                          over its median time (at K = 1024, corrected
                          by gemm_k_half), the GEMM rate dlc's kernels
                          reach, not the core's peak;
  memory_bandwidth        a dlc-compiled element-wise op over 32 MiB (read
                          and write): bytes over its median time;
  host_memory_bandwidth   the same copy on every core's thread: what the
                          host's ranks share (one thread saturates it here);
  cache_bandwidth         the same over 512 KiB, for kernels whose operands
                          and results fit in cache_bytes (the L2 cache of
                          a core, from sysfs): a second roofline level;
  shared_cache_bandwidth  the same over a quarter of the last-level cache
                          (shared_cache_bytes, sysfs): a third level, for
                          kernels whose bytes times the host's ranks fit;
  transcendental_flops    GELU (tanh) over 256x3072,
                          dlc-compiled: their FLOPs (`dlc check`) over the
                          median time, the rate of the ops that compute
                          exp, tanh, log, ... an element;
  row_bandwidth           a layer norm and a column sum over 256x3072: the
                          bytes/s of kernels that reduce rows or columns
                          (norms, softmax, reductions, losses);
  kernel_launch_seconds   a chain of 32 matmuls of 1x8 by 8x8 (each its own
                          kernel): the median time over 32, what one kernel
                          costs the runtime beyond its work;
  cores                   os.cpu_count(): ranks beyond it time-share the
                          cores (dlc plan scales a rank's kernels by
                          busy threads / cores);
  gemm_k_half             the contraction length at which a GEMM runs at
                          half the peak: 768x64x2304 against 768x768x2304
                          (time = 2mnK / peak * (1 + k_half / K + m_half / M));
                          the peak is corrected for its K and M;
  gemm_m_half             the same on the rows M of a product (small
                          batches, pipelines' micro-batches): 16x768x768
                          against 256x768x768;
  parallel_capacity       the 256x1024x1024 GEMM on every core's thread
                          against one: how many single-thread rates the
                          host sustains at once (a rank runs on cores /
                          ranks threads, runtime/base/HostCores.h);
  links.cpu-mpi           MPI_Allreduce over 2 ranks (mpirun, shared memory)
                          of 64 B to 4 MiB, fitted to the ring's
                          2(n-1) latency + 2(n-1)/n bytes / bandwidth;
                          beyond_cache_bandwidth the same over 16 and
                          64 MiB, whose buffers do not stay in the
                          caches (calls that send more than cache_bytes).

The result is a file like devices/h100.json (its `host_path` overheads, fitted
by bench/costmodel/calibrate.py, are kept); `dlc plan --device-spec cpu`
reads it, and `--link cpu-mpi` (its default link) the link, from
devices/links.json.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def median_ms(build, tmp, name, text, iterations, threads=1):
    """Compiles `text` (a .dlg) and returns dlc-bench-cpu's median ms on
    `threads` threads."""
    src = os.path.join(tmp, name + ".dlg")
    module = os.path.join(tmp, name + ".dlcm")
    # The same graph timed on other thread counts is compiled once.
    if not (os.path.exists(module) and open(src).read() == text):
        with open(src, "w") as f:
            f.write(text)
        run([os.path.join(build, "bin", "dlc"), "compile", src, "-o", module])
    # The fastest of three runs' medians: a VM's neighbours only add time,
    # and one slow window skewed single probes by a third (the short-K
    # GEMM, and so gemm_k_half, 7 in one run and 31 in the next).
    return min(float(run([os.path.join(build, "bin", "dlc-bench-cpu"), "run", module,
                          str(threads), str(iterations)]).split()[0]) for _ in range(3))


def gemm_text(m, k, n):
    return f"""
graph gemm(x: f32[{m}, {k}]) -> (y: f32[{m}, {n}]) {{
  param w: f32[{k}, {n}] = normal(mean=0, std=0.02, seed=1)
  y = x @ w
}}
"""


def machine():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def l2_bytes():
    """The L2 cache of one core (Linux sysfs), else 1 MiB."""
    return cache_level_bytes("2", 1 << 20)


def cache_level_bytes(wanted, default):
    """The cache of level `wanted` that cpu0 sees (Linux sysfs), else
    `default`."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            level = open(os.path.join(base, index, "level")).read().strip()
            size = open(os.path.join(base, index, "size")).read().strip()
        except OSError:
            continue
        if level == wanted:
            units = {"K": 1 << 10, "M": 1 << 20}
            return int(size[:-1]) * units.get(size[-1], 1)
    return default


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
        # Short K and few rows: time = 2mnK / peak * (1 + k_half / K +
        # m_half / M) (Hockney's n-half on the contraction and on the rows),
        # from K = 64 and K = 768 at one M, N, and M = 16 and M = 256 at one
        # K, N; each fit corrected for the other's term (a few rounds).
        short_ms = median_ms(args.build, tmp, "gemm_k64", gemm_text(768, 64, 2304), 50)
        long_ms = median_ms(args.build, tmp, "gemm_k768", gemm_text(768, 768, 2304), 30)
        few_ms = median_ms(args.build, tmp, "gemm_m16", gemm_text(16, 768, 768), 500)
        many_ms = median_ms(args.build, tmp, "gemm_m256", gemm_text(256, 768, 768), 50)
        rk = (short_ms / 64) / (long_ms / 768)
        rm = (few_ms / 16) / (many_ms / 256)
        k_half = m_half = 0.0
        for _ in range(5):
            c = 1 + m_half / 768  # the K probes' rows
            k_half = max(0.0, c * (rk - 1) / (1 / 64 - rk / 768))
            c = 1 + k_half / 768  # the M probes' contraction
            m_half = max(0.0, c * (rm - 1) / (1 / 16 - rm / 256))
        m, k, n = 256, 1024, 1024
        gemm_ms = median_ms(args.build, tmp, "gemm", gemm_text(m, k, n), 50)
        flops = 2 * m * n * k / (gemm_ms * 1e-3) * (1 + k_half / k + m_half / m)
        # Every core's thread on the same GEMM against one: how many
        # single-thread rates the host sustains (hyper-threads of one core
        # share its FMA units).
        cores = os.cpu_count()
        all_ms = median_ms(args.build, tmp, "gemm", gemm_text(m, k, n), 50, threads=cores)
        capacity = min(float(cores), max(1.0, gemm_ms / all_ms))

        elements = 8 << 20
        copy_ms = median_ms(args.build, tmp, "copy", f"""
graph copy(x: f32[{elements}]) -> (y: f32[{elements}]) {{
  y = x * 2
}}
""", 30)
        bandwidth = 2 * 4 * elements / (copy_ms * 1e-3)
        # The same copy on every core's thread: the host's bandwidth, which
        # its ranks share.
        copy_all_ms = median_ms(args.build, tmp, "copy", f"""
graph copy(x: f32[{elements}]) -> (y: f32[{elements}]) {{
  y = x * 2
}}
""", 30, threads=os.cpu_count())
        host_bandwidth = max(bandwidth, 2 * 4 * elements / (copy_all_ms * 1e-3))
        # The same op on 512 KiB (read and write), well inside the L2 cache:
        # the small kernels of small models run at this rate.
        small = 64 << 10
        cache_ms = median_ms(args.build, tmp, "cached", f"""
graph cached(x: f32[{small}]) -> (y: f32[{small}]) {{
  y = x * 2
}}
""", 2000)
        cache_bandwidth = 2 * 4 * small / (cache_ms * 1e-3)
        cache_bytes = l2_bytes()
        # The same op on a quarter of the last-level cache (read and
        # write), which the host's cores share: a kernel beyond a core's
        # L2 whose bytes, times the host's ranks, fit there moves at this
        # rate, each rank at its own (a small model's optimizer update).
        shared_cache_bytes = cache_level_bytes("3", 0)
        shared_cache_bandwidth = 0.0
        if shared_cache_bytes > 2 * cache_bytes:
            mid = shared_cache_bytes // 32  # floats: in and out, a quarter
            shared_ms = median_ms(args.build, tmp, "shared", f"""
graph shared(x: f32[{mid}]) -> (y: f32[{mid}]) {{
  y = x * 2
}}
""", 200)
            shared_cache_bandwidth = 2 * 4 * mid / (shared_ms * 1e-3)

        # Transcendental ops: GELU (tanh) over [256, 3072], FLOPs as dlc
        # counts them (`dlc check`).
        vector_text = """
graph vector(x: f32[256, 3072]) -> (y: f32[256, 3072]) {
  y = gelu(x, approximate="tanh")
}
"""
        vector_ms = median_ms(args.build, tmp, "vector", vector_text, 50)
        check = run([os.path.join(args.build, "bin", "dlc"), "check",
                     os.path.join(tmp, "vector.dlg")])
        vector_flops = int(re.search(r"FLOPs per run: ([0-9,]+)", check).group(1).replace(",", ""))
        vector_rate = vector_flops / (vector_ms * 1e-3)

        # Kernels that reduce rows or columns: a layer norm (rows) and a
        # bias gradient's column sum over [256, 3072], bytes in and out.
        rows_ms = median_ms(args.build, tmp, "rows", """
graph rows(x: f32[256, 3072]) -> (y: f32[256, 3072], s: f32[3072]) {
  param g: f32[3072] = ones
  param b: f32[3072] = zeros
  y = layer_norm(x, g, b, axis=-1, epsilon=1e-5)
  s = reduce_sum(x, axes=[0])
}
""", 100)
        row_bandwidth = (3 * 256 * 3072 + 3 * 3072) * 4 / (rows_ms * 1e-3)

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
        # Each size's fastest of three runs (a VM's neighbours only add).
        best = {}
        for _ in range(3):
            out = run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", exe])
            for line in out.splitlines():
                b, t = int(line.split()[0]), float(line.split()[1])
                best[b] = min(best.get(b, t), t)
        points = sorted(best.items())
        # Up to 4 MiB the buffers stay in the caches; beyond, a call
        # streams through memory (here 2.4x slower at 16 MiB): a second
        # bandwidth, fitted with the same latency (a GPT-2 block's
        # gradient bucket is 26 MB).
        link_cache = 4 << 20
        alpha, beta = fit_alpha_beta([p for p in points if p[0] <= link_cache])
        beyond = [(b, t - 2 * alpha) for b, t in points if b > link_cache]
        beta_beyond = sum(b * b for b, _ in beyond) / sum(b * t for b, t in beyond)

    spec = {
        "name": f"CPU rank ({machine()}, 1 thread)",
        "source": "bench/costmodel/measure_cpu.py on this machine: dlc-compiled GEMM "
                  f"{m}x{k}x{n} {gemm_ms:.3f} ms ({all_ms:.3f} ms on {cores} threads), "
                  f"768x64x2304 {short_ms:.3f} ms and 768x768x2304 {long_ms:.3f} ms, "
                  f"16x768x768 {few_ms:.4f} ms and 256x768x768 {many_ms:.3f} ms, element-wise copy of {4 * elements >> 20} MiB "
                  f"{copy_ms:.3f} ms (512 KiB: {cache_ms:.4f} ms), {chain} 8x8 matmul kernels "
                  f"{launch_ms:.4f} ms; GELU over 256x3072 "
                  f"{vector_ms:.3f} ms, its layer norm and column sum {rows_ms:.3f} ms; "
                  "MPI_Allreduce over 2 ranks fitted to the ring's alpha-beta",
        "peak_flops": {"f32": float(f"{flops:.4g}")},
        "memory_bandwidth": float(f"{bandwidth:.4g}"),
        "host_memory_bandwidth": float(f"{host_bandwidth:.4g}"),
        "memory_bytes": float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")),
        "cache_bytes": cache_bytes,
        "cache_bandwidth": float(f"{cache_bandwidth:.4g}"),
        "shared_cache_bytes": shared_cache_bytes,
        "shared_cache_bandwidth": float(f"{shared_cache_bandwidth:.4g}"),
        "transcendental_flops": float(f"{vector_rate:.4g}"),
        "row_bandwidth": float(f"{row_bandwidth:.4g}"),
        "kernel_launch_seconds": float(f"{launch:.3g}"),
        "gemm_k_half": float(f"{k_half:.3g}"),
        "gemm_m_half": float(f"{m_half:.3g}"),
        "cores": cores,
        "parallel_capacity": float(f"{capacity:.3g}"),
        "default_link": "cpu-mpi",
    }
    # The host path's overheads are calibrate.py's fit: kept.
    if os.path.exists(args.out):
        previous = json.load(open(args.out))
        if "host_path" in previous:
            spec["host_path"] = previous["host_path"]
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
    lines.insert(last + 1, f'  "cpu-mpi": {{"bandwidth": {beta:.3e}, "latency": {alpha:.2e}, '
                           f'"cache_bytes": {link_cache}, "beyond_cache_bandwidth": {beta_beyond:.3e}}}')
    with open(args.links, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"GEMM {flops / 1e9:.1f} GFLOP/s (K half {k_half:.0f}, M half {m_half:.1f}, {capacity:.2f} single-thread "
          f"rates on {cores} cores), transcendental ops {vector_rate / 1e9:.2f} GFLOP/s, row kernels {row_bandwidth / 1e9:.2f} GB/s, copy {bandwidth / 1e9:.2f} GB/s "
          f"({cache_bandwidth / 1e9:.2f} GB/s within {cache_bytes >> 10} KiB, "
          f"{shared_cache_bandwidth / 1e9:.2f} within {shared_cache_bytes >> 20} MiB shared), kernel "
          f"{launch * 1e6:.2f} us, MPI latency {alpha * 1e6:.2f} us a step, "
          f"{beta / 1e9:.2f} GB/s ({beta_beyond / 1e9:.2f} beyond {link_cache >> 20} MiB) -> {args.out}, {args.links} (cpu-mpi)")
    for b, t in points:
        print(f"  allreduce {b:>9} B: {t * 1e6:10.1f} us")


if __name__ == "__main__":
    main()
