#!/usr/bin/env python3
"""The cost model's prediction against measurement on CPU ranks.

    bench/costmodel/calibrate.py [--build build] [--repeat 5] [--out bench/results/cost-model.md]
                                 [--only NAME]

For each configuration of CONFIGS (a model, a mesh, ranks), runs the train
step on CPU ranks as `mpirun -np N dlc train ... --mesh ... --parallel ...`
runs it (the host path, one thread a rank) and takes the step time from
its DLC_SPMD_STATS line (rank 0's segments computed plus the time they
waited for collectives, a step after the first: the first step's warm-up,
the GEMM libraries' first calls and the first touch of the arena and the
state, is no part of the steady step the model predicts, and was a tenth
of a 12-step GPT-2 block run; the pipelines' stages time the same); the
fastest of --repeat runs (in as many rounds over the configurations, so
that a slow window of minutes costs each configuration one run), each
started once other work leaves the cores idle (the model predicts ranks
that have the cores to themselves; on a shared VM the same run's step
swings 20-50% between runs minutes apart, and neighbours only ever add
time, so the fastest run is the closest to that; the busiest share of the
machine seen before a run is recorded beside). The prediction is
`dlc plan M --train --mesh ... --device-spec cpu`'s step (devices/cpu.json, measured by bench/costmodel/measure_cpu.py, with
its link cpu-mpi; ranks beyond the machine's cores time-share them).
Writes a table of measured, predicted and error per configuration, with
the median and largest error.

Add a configuration by appending to CONFIGS (pipelines: mesh "pipe=2" and
parallel "pipeline", with "--microbatches" in `extra`, once `dlc train`
runs them).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION = "/usr/share/datasets/fashion-mnist"
MLP = os.path.join(ROOT, "examples", "fashion_mnist", "mlp.dlg")
GPT2 = os.path.join(ROOT, "bench", "costmodel", "gpt2_block_train.dlg")

# name, model, --dim bindings (the batch dimension last: the global batch),
# ranks, mesh, parallel, extra options, steps per run (or two step counts).
CONFIGS = [
    ("MLP, 1 rank", MLP, {"N": 64}, 1, "data=1", "data", [], 400),
    ("MLP, data=2", MLP, {"N": 64}, 2, "data=2", "data", [], 400),
    ("MLP, data=4", MLP, {"N": 64}, 4, "data=4", "data", [], 400),
    ("MLP, data=2 --zero 1", MLP, {"N": 64}, 2, "data=2", "data", ["--zero", "1"], 400),
    ("MLP, data=2,model=2", MLP, {"N": 64}, 4, "data=2,model=2", "data,tensor", [], 400),
    ("GPT-2 block, 1 rank", GPT2, {"T": 64, "B": 4}, 1, "data=1", "data", [], 12),
    ("GPT-2 block, data=2", GPT2, {"T": 64, "B": 4}, 2, "data=2", "data", [], 12),
    ("GPT-2 block, data=4", GPT2, {"T": 64, "B": 4}, 4, "data=4", "data", [], 12),
    ("GPT-2 block, model=2", GPT2, {"T": 64, "B": 4}, 2, "model=2", "tensor", [], 12),
    # Pipelines: each stage prints its wall time a step (after the first);
    # the step is the slowest stage's.
    ("MLP, pipe=2, 1 micro-batch", MLP, {"N": 64}, 2, "pipe=2", "pipeline",
     ["--microbatches", "1"], 400),
    ("MLP, pipe=2, 4 micro-batches", MLP, {"N": 64}, 2, "pipe=2", "pipeline",
     ["--microbatches", "4"], 400),
    ("MLP, data=2,pipe=2, 2 micro-batches", MLP, {"N": 64}, 4, "data=2,pipe=2",
     "data,pipeline", ["--microbatches", "2"], 400),
    ("GPT-2 block, pipe=2, 2 micro-batches", GPT2, {"T": 64, "B": 4}, 2, "pipe=2", "pipeline",
     ["--microbatches", "2"], 12),
    ("GPT-2 block, pipe=2, 4 micro-batches", GPT2, {"T": 64, "B": 4}, 2, "pipe=2", "pipeline",
     ["--microbatches", "4"], 12),
]


def machine():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} logical cores"
    return platform.processor()


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p.stdout


def busy_fraction(seconds=1.0):
    """The share of the machine's CPU time spent busy over `seconds`."""
    def sample():
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return 1 - (idle1 - idle0) / max(1, total1 - total0)


def wait_for_quiet(limit=0.15, patience=1800):
    """Waits (up to `patience` s) until other work leaves the cores idle:
    the model predicts ranks that have their cores to themselves. Returns
    the busy share seen last."""
    deadline = time.time() + patience
    busy = busy_fraction()
    while busy > limit and time.time() < deadline:
        busy = busy_fraction(2.0)
    return busy


def run_stderr(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")
    return p.stderr


def gpt2_data(tmp, dims):
    """Random tokens' embeddings and targets for the GPT-2 block."""
    import numpy as np
    rng = np.random.default_rng(0)
    path = os.path.join(tmp, "gpt2.npz")
    samples = 64
    np.savez(path, x=rng.standard_normal((samples, dims["T"], 768), dtype=np.float32),
             targets=rng.integers(0, 768, (samples, dims["T"]), dtype=np.int32))
    return path


def measure(build, tmp, config):
    """One run of `config`: its step time (seconds) and the busy share of
    the machine just before it."""
    name, model, dims, ranks, mesh, parallel, extra, long = config
    batch_dim = list(dims)[-1]
    data = FASHION if model == MLP else gpt2_data(tmp, dims)
    cmd = (["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
           if ranks > 1 else [])
    cmd += [os.path.join(build, "bin", "dlc"), "train", model, "--data", data,
            "--batch-size", str(dims[batch_dim]), "--mesh", mesh, "--parallel", parallel,
            "--drop-last"] + extra
    for k, v in dims.items():
        if k != batch_dim:
            cmd += ["--dim", f"{k}={v}"]
    busy = wait_for_quiet()
    if isinstance(long, tuple):  # two runs' wall times
        walls = []
        for n in long:
            ck = tempfile.mkdtemp(prefix="ck-", dir=tmp)
            start = time.perf_counter()
            run_stderr(cmd + ["--max-steps", str(n), "--checkpoint-dir", ck],
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
            walls.append(time.perf_counter() - start)
        return (walls[1] - walls[0]) / (long[1] - long[0]), busy
    ck = tempfile.mkdtemp(prefix="ck-", dir=tmp)
    out = run_stderr(cmd + ["--max-steps", str(long), "--checkpoint-dir", ck],
                     env=dict(os.environ, OMP_NUM_THREADS="1", DLC_SPMD_STATS="1"))
    if "pipeline" in parallel:
        stages = [float(x) for x in re.findall(r"([0-9.]+) ms a step after the first", out)]
        if len(stages) != ranks:
            sys.exit(f"{name}: {len(stages)} pipeline stage lines of {ranks} in\n{out[-2000:]}")
        return max(stages) / 1e3, busy
    m = re.search(r"spmd: compute .* calls per step, ([0-9.]+) ms a step after the first", out)
    if not m:
        sys.exit(f"{name}: no DLC_SPMD_STATS line in\n{out[-2000:]}")
    return float(m.group(1)) / 1e3, busy


def measure_kernels(build, tmp, spec):
    """One rank's train steps with every kernel timed (DLC_KERNEL_TIMES),
    on the rank's default threads and on one: the kernels' measured
    seconds a step on each and their single-thread predictions on `spec`,
    summed over the GPT-2 block's and the MLP's steps. A step's seconds are
    the difference of a long and a short run over their steps' difference:
    the first step's warm-up (the GEMM libraries' first calls) is left out,
    as it is of the steps measured."""
    totals = {"measured": 0.0, "measured_single": 0.0, "predicted": 0.0}
    for model, data, batch, dims, steps in (
            (GPT2, gpt2_data(tmp, {"T": 64}), 4, ["--dim", "T=64"], (4, 16)),
            (MLP, FASHION, 64, [], (100, 400))):
        def timed(count, threads):
            """The fastest of three runs, as for the steps."""
            runs = []
            for _ in range(3):
                wait_for_quiet()
                ck = tempfile.mkdtemp(prefix="ck-", dir=tmp)
                out = run_stderr([os.path.join(build, "bin", "dlc"), "train", model, "--data",
                                  data, "--batch-size", str(batch), "--drop-last", "--mesh",
                                  "data=1", "--parallel", "data", "--max-steps", str(count),
                                  "--checkpoint-dir", ck] + dims + threads,
                                 env=dict(os.environ, DLC_KERNEL_TIMES=spec))
                m = re.search(r"total measured ([0-9.]+) ms, predicted ([0-9.]+) ms", out)
                runs.append((float(m.group(1)) * 1e-3, float(m.group(2)) * 1e-3))
            return min(runs)
        for key, threads in (("measured", []), ("measured_single", ["--threads", "1"])):
            (short, p_short), (long, p_long) = timed(steps[0], threads), timed(steps[1], threads)
            totals[key] += (long - short) / (steps[1] - steps[0])
            if not threads:
                totals["predicted"] += (p_long - p_short) / (steps[1] - steps[0])
    return totals


def predict(build, config, spec):
    """dlc plan's step, compute and exposed (seconds), and the host path's
    segments, collectives between ranks and time-share factor."""
    name, model, dims, ranks, mesh, parallel, extra, _ = config
    cmd = [os.path.join(build, "bin", "dlc"), "plan", model, "--train", "--mesh", mesh,
           "--parallel", parallel, "--device-spec", spec, "--link", "cpu-mpi"] + extra
    for k, v in dims.items():
        cmd += ["--dim", f"{k}={v}"]
    out = run(cmd)
    m = re.search(r"compute ([0-9.]+) ms .*communication ([0-9.]+) ms, exposed ([0-9.]+) ms, "
                  r"step ([0-9.]+) ms", out)
    if not m:  # a pipeline's plan: its slot line ends with the step
        p = re.search(r"slot .*, step ([0-9.]+) ms", out)
        step = float(p.group(1)) * 1e-3
        return {"step": step, "compute": step, "exposed": 0.0, "segments": 0,
                "collectives": 0, "share": 1.0}
    h = re.search(r"host path: ([0-9]+) segments \(([0-9,]+) bytes out\), ([0-9]+) "
                  r"collectives between ranks; ([0-9]+) ranks on ([0-9]+) cores, .* "
                  r"takes ([0-9.]+)x", out)
    ranks, cores = int(h.group(4)), int(h.group(5))
    return {"step": float(m.group(4)) * 1e-3, "compute": float(m.group(1)) * 1e-3,
            "exposed": float(m.group(3)) * 1e-3, "segments": int(h.group(1)),
            "bytes": int(h.group(2).replace(",", "")), "collectives": int(h.group(3)),
            "share": float(h.group(6)), "host_share": max(1.0, ranks / cores),
            "memory_share": float(ranks)}


# The host path's overheads (devices/cpu.json host_path) and the unit each
# is probed at: a segment's fixed cost, a byte of a segment's outputs, a
# collective call's hand-over, a pipeline's stage-to-stage message, a
# pipeline part's module run, and what a call adds for each rank beyond
# the host's cores (a descheduled peer).
TERMS = (("segment_seconds", 1e-4), ("segment_byte_seconds", 1e-10),
         ("collective_seconds", 1e-4), ("transfer_seconds", 1e-4), ("part_seconds", 1e-4),
         ("oversubscribed_collective_seconds", 1e-4))


def slopes(build, config, spec, threads, tmp):
    """The plan's step without host-path overheads, and how much each
    overhead adds per unit of it: `dlc plan` run with each term alone at
    its probe value. The same for a partitioned step (segments, bytes out,
    calls, each scaled by the ranks' share of the host) and a pipeline
    (its parts' runs and the update's call, in every slot): both fitted
    alike."""
    path = os.path.join(tmp, "probe.json")
    json.dump(with_host_path(spec, threads, None), open(path, "w"))
    base = predict(build, config, path)
    base["slopes"] = []
    for i, (term, unit) in enumerate(TERMS):
        coefficients = [unit if j == i else 0.0 for j in range(len(TERMS))]
        json.dump(with_host_path(spec, threads, coefficients, exact=True), open(path, "w"))
        base["slopes"].append((predict(build, config, path)["step"] - base["step"]) / unit)
    return base


def fit(rows):
    """Host-path overheads (all >= 0) minimising the squared relative error
    of base + sum(slope * overhead) against the measured steps
    (non-negative least squares)."""
    import numpy as np
    from scipy.optimize import nnls
    a = np.array([[k / measured for k in base["slopes"]] for base, measured in rows])
    y = np.array([(measured - base["step"]) / measured for base, measured in rows])
    scale = np.maximum(a.max(axis=0), 1e-30)  # columns of like size
    x, _ = nnls(a / scale, y)
    return list(x / scale)


def linear(base, coefficients):
    return base["step"] + sum(k * c for k, c in zip(base["slopes"], coefficients))


def with_host_path(spec, threads, coefficients, source=None, exact=False):
    """`spec` with host_path: the overheads `coefficients` (0 when None)
    and `threads`, the kernels' parallel_capacity and kernel_efficiency."""
    spec = dict(spec)
    host = {term: 0 for term, _ in TERMS}
    if coefficients:
        host = {term: c if exact else float(f"{c:.3g}")
                for (term, _), c in zip(TERMS, coefficients)}
    host.update(threads)
    if source:
        host["source"] = source
    spec["host_path"] = host
    return spec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--only", help="run the configurations whose name contains this")
    ap.add_argument("--measurements", help="a .json file: measurements are read from it "
                    "when it exists (to refit without measuring again), else written to it")
    ap.add_argument("--more", action="store_true",
                    help="measure the configurations of --measurements again and add the "
                    "runs to theirs (the fastest of all is kept): more rounds for a loud VM")
    ap.add_argument("--spec", default=os.path.join(ROOT, "devices", "cpu.json"),
                    help="the device spec whose host_path overheads are fitted and written")
    args = ap.parse_args()
    configs = [c for c in CONFIGS if not args.only or args.only in c[0]]
    measured = {}
    if args.measurements and os.path.exists(args.measurements):
        measured = json.load(open(args.measurements))
    with tempfile.TemporaryDirectory(prefix="dlc-calibrate-") as tmp:
        # Rounds over the configurations, one run of each per round: a
        # window of minutes in which the VM's neighbours slow everything
        # costs every configuration one run, not one configuration all.
        todo = [c for c in configs if args.more or c[0] not in measured]
        runs = {c[0]: (list(measured[c[0]]["runs"]) if c[0] in measured else [],
                       [measured[c[0]]["busy"]] if c[0] in measured else []) for c in todo}
        for r in range(args.repeat):
            for config in todo:
                step, busy = measure(args.build, tmp, config)
                runs[config[0]][0].append(step)
                runs[config[0]][1].append(busy)
                print(f"round {r + 1}: {config[0]}: {step * 1e3:.3f} ms", file=sys.stderr)
        for config in todo:
            steps, busy = runs[config[0]]
            measured[config[0]] = {"step": min(steps), "runs": steps, "busy": max(busy)}
            print(f"{config[0]}: measured {min(steps) * 1e3:.3f} ms "
                  f"({', '.join(f'{s * 1e3:.3f}' for s in steps)})", file=sys.stderr)
        if args.measurements:
            with open(args.measurements, "w") as f:
                json.dump(measured, f, indent=1)

        # What a rank's kernels gain from its threads in the host path's
        # module runs: every kernel of one rank's steps timed, against its
        # single-thread roofline time (measure_cpu.py's lone GEMM gains
        # more than the many small kernels of a step).
        spec = json.load(open(args.spec))
        single = os.path.join(tmp, "cpu-single.json")
        json.dump(with_host_path(spec, {"parallel_capacity": 1.0}, None), open(single, "w"))
        if "_kernels" not in measured:
            measured["_kernels"] = measure_kernels(args.build, tmp, single)
            if args.measurements:
                with open(args.measurements, "w") as f:
                    json.dump(measured, f, indent=1)
        kernels = measured["_kernels"]
        # The threads' gain, measured against the same kernels on one
        # thread, and that one thread's time against the roofline.
        capacity = float(f"{min(spec.get('cores', 1), max(1.0, kernels['measured_single'] / kernels['measured'])):.3g}")
        efficiency = float(f"{kernels['measured_single'] / kernels['predicted']:.3g}")
        threads = {"parallel_capacity": capacity, "kernel_efficiency": efficiency}
        # The model without the host path's overheads and each overhead's
        # slope, then fitted to every configuration, pipelines included.
        bases = {c[0]: slopes(args.build, c, spec, threads, tmp) for c in configs}
        pairs = [(bases[c[0]], measured[c[0]]["step"]) for c in configs]
        coefficients = fit(pairs)
        # Held out: each configuration predicted by a fit to the others.
        held_out = {}
        for i, c in enumerate(configs):
            held_out[c[0]] = linear(bases[c[0]], fit(pairs[:i] + pairs[i + 1:]))
        spec = with_host_path(spec, threads, coefficients,
                              "fitted by bench/costmodel/calibrate.py to "
                              f"{len(configs)} CPU-rank train steps")
        with open(args.spec, "w") as f:
            json.dump(spec, f, indent=2)
            f.write("\n")
        s0, s1, c0, t0, p0, o0 = coefficients
        rows = []
        for c in configs:
            p = predict(args.build, c, args.spec)
            m = measured[c[0]]
            rows.append((c, m, bases[c[0]], p, held_out.get(c[0], p["step"])))

    def err(p, m):
        return (p - m) / m

    errors = [abs(err(p["step"], m["step"])) for _, m, _, p, _ in rows]
    held = [abs(err(h, m["step"])) for _, m, _, _, h in rows]
    outside = [f"{c[0]} ({100 * err(p['step'], m['step']):+.0f}%)"
               for c, m, _, p, _ in rows if abs(err(p["step"], m["step"])) > 0.20]
    lines = [
        "# Cost model against measurement on CPU ranks",
        "",
        f"Machine: {machine()}; Open MPI ranks, one thread each. Measured by",
        "`bench/costmodel/calibrate.py`: the host path's train step",
        "(`mpirun -np N dlc train ... --mesh ... --parallel ...`): rank 0's segments",
        "plus its waits for collectives a step after the first (DLC_SPMD_STATS),",
        "the fastest of",
        f"{args.repeat} runs in as many rounds over the configurations (this VM's",
        "neighbours swing a run by 20-50% for minutes at a time, and only ever add",
        "time), each started once other work left the cores idle (the",
        "largest share of the machine others used just before is given; —: not",
        "recorded, the configurations measured by this script's first version, which",
        "waited for the same quiet). The measurements are kept in",
        "bench/costmodel/measurements.json (`--measurements` refits from them).",
        "",
        "Predicted: `dlc plan --train --mesh ... --device-spec cpu` (devices/cpu.json",
        "and the link cpu-mpi, measured by `bench/costmodel/measure_cpu.py`: GEMM",
        "rate and its short-K loss, memory and cache bandwidth, transcendental and",
        "row-kernel rates, kernel cost, MPI alpha-beta). Ranks of one host share",
        "it two ways: cores (a rank runs on cores / ranks threads, the runtime's",
        "default, runtime/base/HostCores.h; its kernels gain",
        f"**{capacity:.2f}x** from two threads in the host path, measured by timing",
        "every kernel of one rank's steps on two threads and on one, DLC_KERNEL_TIMES;",
        f"on one they take **{efficiency:.2f}x** their single-thread roofline) and memory bandwidth (one thread saturates it: R ranks",
        "streaming at once take R times as long). The roofline alone (*kernels and",
        "ring only*) leaves out what dlc's host path adds: each segment of kernels",
        "between two collectives is a module run whose outputs are fresh host",
        "tensors, and each collective is handed to a communication thread and",
        "back; a pipeline stage's parts are module runs too, run in the schedule's",
        "order (PipelineCost simulates it). Those costs are the",
        "calibration: each one's slope in every configuration's plan (`dlc plan` with",
        "that overhead alone set), fitted by non-negative least squares on the",
        "relative error of all the configurations, pipelines included:",
        f"**{s0 * 1e6:.1f} us a segment, {s1 * 1e9:.3f} ns a byte of a segment's outputs,",
        f"{c0 * 1e6:.1f} us a collective between ranks, {t0 * 1e6:.1f} us a pipeline's",
        f"message between stages, {p0 * 1e6:.1f} us a pipeline stage's part (a module",
        "run of a micro-batch's forward or backward, or of the update),",
        f"{o0 * 1e6:.1f} us a collective for each rank beyond the host's cores (a",
        "peer that is descheduled arrives a time slice late)**, written to",
        "devices/cpu.json (`host_path`). *Held out*: each configuration predicted by",
        "the fit to the others alone (the linear form of the model), the honest",
        "measure of how well the calibrated model predicts a configuration it was",
        "not fitted to. Pipelines: PipelineCost's slots with the stages that",
        "compute at once sharing the host.",
        "",
        "| configuration | ranks | measured ms/step (runs) | kernels and ring only | segments / collectives | predicted ms/step | error | held out: predicted, error | others' CPU before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c, m, base, p, h in rows:
        runs = ", ".join(f"{s * 1e3:.2f}" for s in m["runs"])
        lines.append(
            f"| {c[0]} | {c[3]} | {m['step'] * 1e3:.2f} ({runs}) | {base['step'] * 1e3:.2f} | "
            f"{base['segments']} / {base['collectives']} | {p['step'] * 1e3:.2f} | "
            f"{100 * err(p['step'], m['step']):+.0f}% | {h * 1e3:.2f}, "
            f"{100 * err(h, m['step']):+.0f}% | "
            + ("—" if m["busy"] is None else f"{100 * m['busy']:.0f}%") + " |")
    spmd = [abs(err(p["step"], m["step"])) for c, m, _, p, _ in rows if "pipeline" not in c[5]]
    pipes = [abs(err(p["step"], m["step"])) for c, m, _, p, _ in rows if "pipeline" in c[5]]
    lines += [
        "",
        f"Partitioned steps: median {100 * statistics.median(spmd):.0f}%, largest "
        f"{100 * max(spmd):.0f}%"
        + (f"; pipelines: median {100 * statistics.median(pipes):.0f}%, largest "
           f"{100 * max(pipes):.0f}%." if pipes else "."),
        "",
        f"Error (|predicted - measured| / measured), all: median {100 * statistics.median(errors):.0f}%, "
        f"largest {100 * max(errors):.0f}%; held out: median {100 * statistics.median(held):.0f}%, "
        f"largest {100 * max(held):.0f}%.",
        "",
        "## Reading",
        "",
        "- The goal (each within 20%, median within 10%): the median is "
        + ("met" if statistics.median(errors) <= 0.10 else "not met") + "; "
        + (f"{len(outside)} of the {len(errors)} configurations are outside 20%: "
           + ", ".join(outside) + "." if outside else
           f"each of the {len(errors)} configurations is within 20%: met."),
        "- See docs/design/2026-11-26-pipeline.md (cost model) for what the model",
        "  leaves out where it misses.",
        ""]
    lines += ["The GPU side (one H200: single-device predictions of kernels and models",
              "against measured): bench/results/cost-model-gpu.md.", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
