# REQUIRES: mpi, fashion-mnist
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# Collectives executed by the runtime inside a compiled module: `dlc compile
# --mesh` / `dlc train --compile-only --mesh` write one plan per rank with
# the partitioner's collectives between the kernels; the session runs this
# process's rank, the collectives through MPI on CPU ranks (NCCL on a GPU:
# bench/results/dp-gpu.md).
#  - inference: the data-parallel MLP's module on 2 ranks (each its block of
#    the batch; the logits all-gathered) gives the single-device logits;
#    so do strided reduce-scatters and all-gathers, and Megatron's MLP and
#    GPT-2 block (column and row shards of the parameters);
#  - training: the partitioned train-step job on 2 ranks (cpu, and cuda-emu:
#    the CUDA codegen's plan) ends 30 steps with the parameters of one
#    process (rel <= 1e-5); an epoch on 2 ranks is evaluated (rank 0, the
#    whole test set); a job for 2 ranks refuses to start on 1.
import json
import os
import subprocess
import sys

import numpy as np
from dlc_numpy import load_safetensors as load

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
fashion = "/usr/share/datasets/fashion-mnist"
mlp = os.path.join(root, "examples", "mnist_mlp.dlg")
fmlp = os.path.join(root, "examples", "fashion_mnist", "mlp.dlg")


# Inference.
rng = np.random.default_rng(0)
x = rng.random((8, 784), dtype=np.float32)
np.save(f"{tmp}/x.npy", x)
for r in range(2):
    np.save(f"{tmp}/x{r}.npy", x[4 * r:4 * r + 4])
subprocess.run(["dlc", "run", mlp, "--dim", "N=8", "--input", f"x=@{tmp}/x.npy",
                "--output", f"logits=@{tmp}/ref.npy"], check=True, capture_output=True)
subprocess.run(["dlc", "compile", mlp, "--dim", "N=8", "--mesh", "data=2", "--parallel", "data",
                "-o", f"{tmp}/dp.dlcm"], check=True)
# Each rank its own block: a wrapper picks the file by Open MPI's rank.
script = f"{tmp}/rank.sh"
with open(script, "w") as f:
    f.write(f"#!/bin/sh\nexec dlc run {tmp}/dp.dlcm --input x=@{tmp}/x$OMPI_COMM_WORLD_RANK.npy "
            f"--output logits=@{tmp}/out.npy\n")
os.chmod(script, 0o755)
p = subprocess.run(mpirun + ["-np", "2", script], check=True, capture_output=True, text=True)
assert p.stdout.count("logits: f32[8, 10]") == 1, p.stdout  # rank 0 reports, once
ref, got = np.load(f"{tmp}/ref.npy"), np.load(f"{tmp}/out.npy")
err = float(np.abs(got - ref).max() / np.abs(ref).max())
print(f"inference, data=2 (rank 0 writes the whole logits): {got.shape}, max rel error {err:.1e}")
assert got.shape == ref.shape and err <= 1e-5, err
# Strided blocks: a reduce-scatter and an all-gather along axis 1 of
# [4, 16] (test/partition/Inputs/strided.dlg), and Megatron's column and
# row shards of parameters.
strided = os.path.join(root, "test", "partition", "Inputs", "strided.dlg")
xs, bs = rng.random((4, 8), dtype=np.float32), rng.random((4, 16), dtype=np.float32)
np.save(f"{tmp}/sx.npy", xs)
np.save(f"{tmp}/sb.npy", bs)
for r in range(2):
    np.save(f"{tmp}/sx{r}.npy", xs[:, 4 * r:4 * r + 4])
    np.save(f"{tmp}/sb{r}.npy", bs[:, 8 * r:8 * r + 8])
subprocess.run(["dlc", "run", strided, "--input", f"x=@{tmp}/sx.npy", "--input", f"b=@{tmp}/sb.npy",
                "--output", f"y=@{tmp}/sref.npy"], check=True, capture_output=True)
subprocess.run(["dlc", "compile", strided, "--mesh", "model=2", "-o", f"{tmp}/strided.dlcm"],
               check=True)
with open(script, "w") as f:
    f.write(f"#!/bin/sh\nexec dlc run {tmp}/strided.dlcm --input x=@{tmp}/sx$OMPI_COMM_WORLD_RANK.npy "
            f"--input b=@{tmp}/sb$OMPI_COMM_WORLD_RANK.npy --output y=@{tmp}/sout.npy\n")
subprocess.run(mpirun + ["-np", "2", script], check=True, capture_output=True)
ref, got = np.load(f"{tmp}/sref.npy"), np.load(f"{tmp}/sout.npy")
err = float(np.abs(got - ref).max() / np.abs(ref).max())
print(f"strided reduce-scatter and all-gather on 2 ranks: max rel error {err:.1e}")
assert got.shape == ref.shape and err <= 1e-5, err
for name, dims, out in (("mnist_mlp", ["--dim", "N=8"], "logits"),
                        ("gpt2_block", ["--dim", "B=2", "--dim", "T=8"], "y")):
    model = os.path.join(root, "examples", f"{name}.dlg")
    subprocess.run(["dlc", "run", model, *dims, "--seed", "3", "--output",
                    f"{out}=@{tmp}/{name}-ref.npy"], check=True, capture_output=True)
    subprocess.run(["dlc", "compile", model, *dims, "--mesh", "model=2", "--parallel", "tensor",
                    "-o", f"{tmp}/{name}-tp.dlcm"], check=True)
    subprocess.run(mpirun + ["-np", "2", "dlc", "run", f"{tmp}/{name}-tp.dlcm", "--seed", "3",
                             "--output", f"{out}=@{tmp}/{name}-tp.npy"], check=True,
                   capture_output=True)
    ref, got = np.load(f"{tmp}/{name}-ref.npy"), np.load(f"{tmp}/{name}-tp.npy")
    err = float(np.abs(got - ref).max() / np.abs(ref).max())
    print(f"{name}, Megatron on 2 ranks in a compiled module: max rel error {err:.1e}")
    assert err <= 1e-5, err
p = subprocess.run(["dlc", "run", f"{tmp}/dp.dlcm", "--random-inputs"], capture_output=True, text=True)
assert p.returncode == 2 and "partitioned for 2 ranks, but this run has 1" in p.stderr, p.stderr

# Training.
base = ["--data", fashion, "--batch-size", "64"]
subprocess.run(["dlc", "train", fmlp] + base + ["--max-steps", "30", "--checkpoint-dir",
                                                f"{tmp}/one"], check=True, capture_output=True)
one = load(f"{tmp}/one/ckpt-30.safetensors")
for device in ("cpu", "cuda-emu"):
    job = f"{tmp}/job-{device}"
    subprocess.run(["dlc", "train", fmlp] + base + ["--device", device, "--compile-only", job,
                                                    "--mesh", "data=2", "--parallel", "data"],
                   check=True, capture_output=True)
    with open(f"{job}/job.json") as f:
        meta = json.load(f)
    assert meta["mesh"] == "data=2" and meta["ranks"] == 2, meta
    p = subprocess.run(mpirun + ["-np", "2", "dlc-train-job", job, "--data", fashion,
                                 "--max-steps", "30", "--checkpoint-dir", f"{tmp}/ck-{device}"],
                       capture_output=True, text=True)
    assert p.returncode == 0, (p.stdout, p.stderr)
    got = load(f"{tmp}/ck-{device}/ckpt-30.safetensors")
    errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                     max(np.linalg.norm(one[k].astype(np.float64)), 1e-30)) for k in one}
    print(f"training job on 2 ranks, {device}: max rel error {max(errs.values()):.1e}")
    assert max(errs.values()) <= 1e-5, errs
# A whole epoch on 2 ranks, evaluated by rank 0 on the whole test set.
p = subprocess.run(mpirun + ["-np", "2", "dlc-train-job", f"{tmp}/job-cpu", "--data", fashion,
                             "--epochs", "1", "--drop-last"], capture_output=True, text=True)
assert p.returncode == 0, (p.stdout, p.stderr)
line = [l for l in p.stdout.splitlines() if l.startswith("epoch 1/1")]
assert len(line) == 1, p.stdout  # printed once, by rank 0
accuracy = float(line[0].split("eval_accuracy ")[1].split()[0])
print(f"one epoch on 2 ranks: {line[0]}")
assert accuracy >= 0.80, accuracy
p = subprocess.run(["dlc-train-job", f"{tmp}/job-cpu", "--data", fashion, "--max-steps", "2"],
                   capture_output=True, text=True)
assert p.returncode == 2 and "start it with mpirun -np 2" in p.stderr, (p.returncode, p.stderr)
print("collectives inside compiled modules: inference and training on 2 ranks equal one process")
