# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# `dlc plan --parallel pipeline` on CPU ranks of one host
# (passes/analysis/PipelineCost.cpp): a stage's kernels are costed at the
# number of stages computing at once in each slot. Each rank has the
# threads all the stages' ranks leave it (cores / ranks) however many
# compute, so a compute-bound kernel is slower than with the host to
# itself; a kernel in memory is not (one thread streams at the memory's
# bandwidth) until two stages stream at once and share it. Two specs of a
# two-core host, one where every kernel is compute-bound and one where
# every kernel is memory-bound, make each effect show alone in the step.
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


def plan(device, microbatches):
    out = subprocess.run(["dlc", "plan", mlp, "--dim", "N=64", "--train", "--mesh", "pipe=2",
                          "--parallel", "pipeline", "--microbatches", str(microbatches),
                          "--device-spec", device], capture_output=True, text=True, check=True)
    slot = re.search(r"slot ([0-9.]+) ms \(transfers ([0-9.]+) ms\).*step ([0-9.]+) ms",
                     out.stdout)
    update = max(float(u) for u in re.findall(r"update ([0-9.]+) ms", out.stdout))
    # The stage costs as if each stage had the host alone: its kernels
    # (the slot less its transfers), the transfers, the update's kernels.
    return float(slot.group(1)) - float(slot.group(2)), float(slot.group(2)), update, \
        float(slot.group(3))


def check(name, predicted, expected):
    # Printed to 0.001 ms, summed over up to five slots.
    ok = abs(predicted - expected) <= 0.01
    print(f"{name}: {'ok' if ok else f'step {predicted} ms, expected {expected:.3f}'}")


# Compute-bound: a stage alone has one of the two cores, half the rate
# of the two threads it was costed at, in every slot and in the update.
compute = spec("compute-bound", 100e9, 1e18)
for m in (1, 4):
    kernels, transfers, update, step = plan(compute, m)
    check(f"compute-bound, {m} micro-batches", step,
          (m + 1) * (2 * kernels + transfers) + 2 * update)
# CHECK: compute-bound, 1 micro-batches: ok
# CHECK: compute-bound, 4 micro-batches: ok

# Memory-bound: one stage alone streams as fast as with both cores; the
# slots where both stages compute (the middle M - 1 of M + 1) share the
# bandwidth, each kernel twice as long; the updates (the last stage's is
# small: the first updates alone) are not slowed.
memory = spec("memory-bound", 1e18, 10e9)
for m in (1, 4):
    kernels, transfers, update, step = plan(memory, m)
    check(f"memory-bound, {m} micro-batches", step,
          2 * (kernels + transfers) + (m - 1) * (2 * kernels + transfers) + update)
# CHECK: memory-bound, 1 micro-batches: ok
# CHECK: memory-bound, 4 micro-batches: ok
