# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# `dlc plan --parallel pipeline` on CPU ranks of one host
# (passes/analysis/PipelineCost.cpp): a step is every stage's parts run in
# its schedule's order, each part starting once its stage is free and its
# input has come (a transfer after the part before ends), the stages
# sharing the host while they compute at once. Each rank has the threads
# all the stages' ranks leave it (cores / ranks) however many compute, so
# a compute-bound kernel is slower than with the host to itself; a kernel
# in memory is not (one thread streams at the memory's bandwidth) until
# two stages stream at once and share it. Two specs of a two-core host,
# one where every kernel is compute-bound and one where every kernel is
# memory-bound, make each effect show alone; the step is checked against
# an independent simulation of the same schedule from the plan's printed
# per-stage times.
import json
import os
import re
import subprocess
import sys

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
mlp = os.path.join(root, "examples", "fashion_mnist", "mlp.dlg")


def spec(name, flops, bandwidth):
    path = os.path.join(tmp, name + ".json")
    json.dump({"name": name, "peak_flops": {"f32": flops}, "memory_bandwidth": bandwidth,
               "memory_bytes": 16e9, "cores": 2, "default_link": "cpu-mpi"}, open(path, "w"))
    return path


def plan(device, microbatches, schedule):
    out = subprocess.run(["dlc", "plan", mlp, "--dim", "N=64", "--train", "--mesh", "pipe=2",
                          "--parallel", "pipeline", "--microbatches", str(microbatches),
                          "--schedule", schedule, "--device-spec", device],
                         capture_output=True, text=True, check=True).stdout
    stages = [tuple(float(x) for x in m) for m in re.findall(
        r"forward ([0-9.]+) ms, backward ([0-9.]+) ms a micro-batch, update ([0-9.]+) ms", out)]
    slot = re.search(r"\(transfers ([0-9.]+) ms\).*step ([0-9.]+) ms", out)
    # The printed transfers are the activation there and its gradient back.
    return stages, float(slot.group(1)) / 2, float(slot.group(2))


def order(schedule, s, stages, m):
    if schedule == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warm = min(stages - s - 1, m)
    seq = [("F", i) for i in range(warm)]
    for i in range(m - warm):
        seq += [("F", warm + i), ("B", i)]
    return seq + [("B", i) for i in range(m - warm, m)]


def simulate(stages, transfer, m, schedule, factor):
    """The step on processor sharing: while b stages compute, a part takes
    its stage-alone time times factor[b - 1]."""
    p = len(stages)
    seqs = [order(schedule, s, p, m) for s in range(p)]
    ready = {("F", 0, i): 0.0 for i in range(m)}
    nxt, prog, done, now = [0] * p, [None] * p, [0.0] * p, 0.0
    while True:
        for s in range(p):
            if prog[s] is None and nxt[s] < len(seqs[s]):
                ph, i = seqs[s][nxt[s]]
                r = 0.0 if (ph == "B" and s == p - 1) else ready.get((ph, s, i), float("inf"))
                if r <= now:
                    prog[s] = 0.0
        busy = sum(x is not None for x in prog)
        dur = lambda s: stages[s][0 if seqs[s][nxt[s]][0] == "F" else 1] * factor[busy - 1]
        step = float("inf")
        for s in range(p):
            if prog[s] is not None:
                step = min(step, (1 - prog[s]) * dur(s))
            elif nxt[s] < len(seqs[s]):
                ph, i = seqs[s][nxt[s]]
                r = ready.get((ph, s, i), float("inf"))
                if now < r < float("inf"):
                    step = min(step, r - now)
        if step == float("inf"):
            break
        for s in range(p):
            if prog[s] is not None:
                prog[s] = prog[s] + step / dur(s) if dur(s) > 0 else 1.0
        now += step
        for s in range(p):
            if prog[s] is not None and prog[s] >= 1 - 1e-9:
                ph, i = seqs[s][nxt[s]]
                if ph == "F" and s + 1 < p:
                    ready[("F", s + 1, i)] = now + transfer
                if ph == "B" and s > 0:
                    ready[("B", s - 1, i)] = now + transfer
                prog[s], nxt[s], done[s] = None, nxt[s] + 1, now
    updates = [st[2] for st in stages]
    updating = min(p, max(1, round(sum(updates) / max(updates))))
    return max(done[s] + updates[s] * factor[updating - 1] for s in range(p))


def check(name, device, factor):
    for m in (1, 4):
        for schedule in ("1f1b", "gpipe"):
            stages, transfer, step = plan(device, m, schedule)
            expected = simulate(stages, transfer, m, schedule, factor)
            # The times are printed to 0.001 ms and the simulation sums up to
            # 25 of them, each up to twice: 3% (a share taken wrong moves
            # the step by 20-100%).
            ok = abs(step - expected) <= max(0.01, 0.03 * expected)
            print(f"{name}, {m} micro-batches, {schedule}: "
                  f"{'ok' if ok else f'step {step} ms, expected {expected:.3f}'}")


# Compute-bound: a stage's rank has one of the two cores whether or not the
# other computes: twice the time it was costed at alone (on both threads).
check("compute-bound", spec("compute-bound", 100e9, 1e18), [2.0, 2.0])
# CHECK: compute-bound, 1 micro-batches, 1f1b: ok
# CHECK: compute-bound, 1 micro-batches, gpipe: ok
# CHECK: compute-bound, 4 micro-batches, 1f1b: ok
# CHECK: compute-bound, 4 micro-batches, gpipe: ok

# Memory-bound: a stage alone streams as fast as on both cores; two
# stages streaming at once share the bandwidth.
check("memory-bound", spec("memory-bound", 1e18, 10e9), [1.0, 2.0])
# CHECK: memory-bound, 1 micro-batches, 1f1b: ok
# CHECK: memory-bound, 1 micro-batches, gpipe: ok
# CHECK: memory-bound, 4 micro-batches, 1f1b: ok
# CHECK: memory-bound, 4 micro-batches, gpipe: ok
