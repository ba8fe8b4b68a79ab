# REQUIRES: mpi, fashion-mnist
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# Data-parallel training on CPU ranks: `mpirun -np N dlc train ... --mesh
# data=N --parallel data` (the train step partitioned: each rank takes its
# block of every global batch of 64, the gradients' all-reduces come from
# the partitioner, the collectives run through runtime/comm's MPI) ends 50
# steps with the parameters of one process training the same global
# batches (rel <= 1e-5 in norm per tensor; printed), in rank 0's
# checkpoint; so do --zero 1 and, bit for bit across rank counts,
# --deterministic.
import os
import subprocess
import sys

import numpy as np
from dlc_numpy import load_safetensors as load

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
model = os.path.join(root, "examples", "fashion_mnist", "mlp.dlg")
base = ["dlc", "train", model, "--data", "/usr/share/datasets/fashion-mnist",
        "--max-steps", "50", "--batch-size", "64"]
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


subprocess.run(base + ["--checkpoint-dir", f"{tmp}/one"], check=True, capture_output=True)
one = load(f"{tmp}/one/ckpt-50.safetensors")
for ranks in (2, 4):
    out = f"{tmp}/ranks{ranks}"
    p = subprocess.run(mpirun + ["-np", str(ranks)] + base +
                       ["--checkpoint-dir", out, "--mesh", f"data={ranks}", "--parallel", "data"],
                       capture_output=True, text=True)
    assert p.returncode == 0, (ranks, p.stdout, p.stderr)
    assert sorted(os.listdir(out)) == ["ckpt-50.safetensors"], os.listdir(out)
    got = load(f"{out}/ckpt-50.safetensors")
    assert int(got["step"]) == 50, got["step"]
    errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                     np.linalg.norm(one[k].astype(np.float64)))
            for k in ("w1", "b1", "w2", "b2")}
    print(f"{ranks} ranks: " + ", ".join(f"{k} {e:.1e}" for k, e in errs.items()))
    assert max(errs.values()) <= 1e-5, errs
# A 2-D mesh on 4 ranks: the batch over 'data', the matmuls Megatron-style
# over 'model' (ranks that differ only in 'model' load the same block).
out = f"{tmp}/mesh2x2"
p = subprocess.run(mpirun + ["-np", "4"] + base +
                   ["--checkpoint-dir", out, "--mesh", "data=2,model=2", "--parallel", "data,tensor"],
                   capture_output=True, text=True)
assert p.returncode == 0, (p.stdout, p.stderr)
got = load(f"{out}/ckpt-50.safetensors")
errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                 max(np.linalg.norm(one[k].astype(np.float64)), 1e-30)) for k in one if k != "step"}
print(f"data=2 x model=2 on 4 ranks: max rel {max(errs.values()):.1e}")
assert max(errs.values()) <= 1e-5, errs
# The model axis keeps the parameters it splits, and their moments, as
# each rank's columns between steps: a run stopped at step 25 and resumed
# from its checkpoint (assembled from the ranks' blocks, split again on
# load) ends where the uninterrupted one does.
out = f"{tmp}/mesh2x2-resumed"
for steps in ("25", "50"):
    p = subprocess.run(mpirun + ["-np", "4"] + base[:-4] + ["--max-steps", steps] + base[-2:] +
                       ["--checkpoint-dir", out, "--mesh", "data=2,model=2",
                        "--parallel", "data,tensor"] + (["--resume"] if steps == "50" else []),
                       capture_output=True, text=True)
    assert p.returncode == 0, (steps, p.stdout, p.stderr)
resumed = load(f"{out}/ckpt-50.safetensors")
errs = {k: float(np.linalg.norm(resumed[k].astype(np.float64) - got[k]) /
                 max(np.linalg.norm(got[k].astype(np.float64)), 1e-30)) for k in got if k != "step"}
print(f"data=2 x model=2 resumed at step 25: max rel {max(errs.values()):.1e} to uninterrupted")
assert max(errs.values()) <= 1e-6, errs

# --zero 1 (optimizer moments split over the ranks: gradients
# reduce-scattered, parameters all-gathered) ends with the same state.
for ranks in (2, 4):
    out = f"{tmp}/zero{ranks}"
    p = subprocess.run(mpirun + ["-np", str(ranks)] + base +
                       ["--checkpoint-dir", out, "--mesh", f"data={ranks}", "--parallel", "data",
                        "--zero", "1", "--bucket-mb", "0.1"],
                       capture_output=True, text=True)
    assert p.returncode == 0, (ranks, p.stdout, p.stderr)
    got = load(f"{out}/ckpt-50.safetensors")
    assert sorted(got) == sorted(one), (sorted(got), sorted(one))
    errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                     max(np.linalg.norm(one[k].astype(np.float64)), 1e-30))
            for k in one if k != "step"}
    print(f"--zero 1 on {ranks} ranks: max rel {max(errs.values()):.1e} "
          f"({max(errs, key=errs.get)})")
    assert max(errs.values()) <= 1e-5, errs

# --deterministic: the step is 8 shards of the batch summed in shard order,
# so 1, 2 and 4 ranks (with or without --zero 1) end with the same bits.
runs = {}
for ranks, zero in ((1, "0"), (2, "0"), (4, "0"), (2, "1"), (4, "1")):
    out = f"{tmp}/det{ranks}-{zero}"
    launch = mpirun + ["-np", str(ranks)] if ranks > 1 else []
    p = subprocess.run(launch + base +
                       ["--checkpoint-dir", out, "--mesh", f"data={ranks}", "--parallel", "data",
                        "--deterministic", "--zero", zero],
                       capture_output=True, text=True)
    assert p.returncode == 0, (ranks, p.stdout, p.stderr)
    runs[(ranks, zero)] = load(f"{out}/ckpt-50.safetensors")
ref = runs[(1, "0")]
for key, got in runs.items():
    same = [k for k in ref if np.array_equal(ref[k], got[k])]
    print(f"--deterministic, {key[0]} ranks, --zero {key[1]}: "
          f"{len(same)} of {len(ref)} tensors bitwise equal to 1 rank")
    assert len(same) == len(ref), sorted(set(ref) - set(same))
errs = {k: float(np.linalg.norm(ref[k].astype(np.float64) - one[k]) /
                 max(np.linalg.norm(one[k].astype(np.float64)), 1e-30)) for k in one}
assert max(errs.values()) <= 1e-5, errs

# An epoch's partial last batch would need another compiled global batch:
# said before training starts.
p = subprocess.run(mpirun + ["-np", "2", "dlc", "train", model, "--data",
                             "/usr/share/datasets/fashion-mnist", "--batch-size", "64",
                             "--epochs", "1", "--mesh", "data=2", "--parallel", "data"],
                   capture_output=True, text=True)
assert p.returncode == 2 and "ends each epoch with a batch of 32: add --drop-last" in p.stderr, \
    (p.returncode, p.stderr)

# A CNN ending in a large average pooling (ResNet's head; windows that
# overlap, so that its gradient is a slice per window offset) on 2 ranks,
# split by channels (model=2: the classifier's gradient reaches the pooling
# split by channels) and by images (data=2): the pooling's gradient slices
# the split dimension whole, each rank its block. 20 steps end with one
# process's parameters.
gap = os.path.join(root, "test", "partition", "Inputs", "cnn-gap.dlg")
gap_run = ["dlc", "train", gap, "--data", "/usr/share/datasets/fashion-mnist",
           "--max-steps", "20", "--batch-size", "64"]
subprocess.run(gap_run + ["--checkpoint-dir", f"{tmp}/gap-one"], check=True, capture_output=True)
one_gap = load(f"{tmp}/gap-one/ckpt-20.safetensors")
for mesh, parallel in (("model=2", "tensor"), ("data=2", "data")):
    out = f"{tmp}/gap-{parallel}"
    p = subprocess.run(mpirun + ["-np", "2"] + gap_run +
                       ["--checkpoint-dir", out, "--mesh", mesh, "--parallel", parallel],
                       capture_output=True, text=True)
    assert p.returncode == 0, (mesh, p.stdout, p.stderr)
    got = load(f"{out}/ckpt-20.safetensors")
    errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one_gap[k]) /
                     max(np.linalg.norm(one_gap[k].astype(np.float64)), 1e-30))
            for k in one_gap if k != "step"}
    print(f"CNN with average pooling, {mesh} on 2 ranks: max rel {max(errs.values()):.1e}")
    assert max(errs.values()) <= 1e-5, (mesh, errs)
print("data-parallel training on 2 and 4 ranks equals one process")
