# REQUIRES: mpi, fashion-mnist
# RUN: rm -rf %t && mkdir -p %t && %python %s %t | FileCheck %s
# Pipeline parallelism on CPU ranks (`mpirun -np N dlc train ... --parallel
# pipeline --mesh [data=D,]pipe=P --microbatches M`): the model cut into P
# stages, micro-batches on GPipe and 1F1B schedules, gradients accumulated
# over them. Each run ends with the parameters of one process training the
# same batches (rel <= 1e-5 in norm per tensor), in rank 0's checkpoint,
# which holds every stage's parameters; and `dlc run` over the stages gives
# one process's output.
import os
import subprocess
import sys

import numpy as np
from dlc_numpy import load_safetensors as load

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
mlp = os.path.join(root, "examples", "fashion_mnist", "mlp.dlg")
marked = os.path.join(root, "test", "partition", "Inputs", "mlp-stages.dlg")
gpt = os.path.join(root, "test", "partition", "Inputs", "gpt4.dlg")
fashion = ["--data", "/usr/share/datasets/fashion-mnist", "--max-steps", "20",
           "--batch-size", "64"]

# Token data for the GPT-style model: the next token of a random sequence.
rng = np.random.default_rng(0)
tokens = rng.integers(0, 64, size=(512, 16)).astype(np.int32)
np.savez(f"{tmp}/tokens.npz", tokens=tokens, targets=np.roll(tokens, -1, axis=1))
text = ["--data", f"{tmp}/tokens.npz", "--max-steps", "20", "--batch-size", "16"]


def train(model, data, name, ranks=1, extra=()):
    out = f"{tmp}/{name}"
    command = ["dlc", "train", model] + data + ["--checkpoint-dir", out] + list(extra)
    if ranks > 1:
        command = mpirun + ["-np", str(ranks)] + command
    p = subprocess.run(command, capture_output=True, text=True)
    assert p.returncode == 0, (name, p.stdout, p.stderr)
    assert sorted(os.listdir(out)) == ["ckpt-20.safetensors"], os.listdir(out)
    return load(f"{out}/ckpt-20.safetensors"), p.stderr


def compare(name, one, got):
    assert sorted(got) == sorted(one), (name, sorted(set(got) ^ set(one)))
    errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                     max(np.linalg.norm(one[k].astype(np.float64)), 1e-30))
            for k in one if k != "step"}
    assert int(got["step"]) == 20, got["step"]
    worst = max(errs, key=errs.get)
    print(f"{name}: {len(got)} tensors, max rel {errs[worst]:.1e} ({worst})")
    assert errs[worst] <= 1e-5, (name, worst, errs[worst])


# The Fashion-MNIST MLP: 2 and 4 stages, both schedules, and 2 data
# replicas of 2 stages, each against one process.
mlp_one, _ = train(mlp, fashion, "mlp-one")
for ranks, mesh, schedule in ((2, "pipe=2", "1f1b"), (2, "pipe=2", "gpipe"),
                              (4, "pipe=4", "1f1b"), (4, "data=2,pipe=2", "gpipe")):
    parallel = "data,pipeline" if "data" in mesh else "pipeline"
    got, log = train(mlp, fashion, f"mlp-{mesh}-{schedule}", ranks,
                     ["--parallel", parallel, "--mesh", mesh, "--microbatches", "4",
                      "--schedule", schedule, "--deterministic"])
    compare(f"mlp {mesh} {schedule}", mlp_one, got)
    # Every stage reports its measured bubble beside (P-1)/(M+P-1).
    stages = int(mesh.split("pipe=")[1])
    ideal = 100 * (stages - 1) / (4 + stages - 1)
    lines = [l for l in log.splitlines() if "bubble" in l]
    assert len(lines) == ranks and all(f"(P-1)/(M+P-1) = {ideal:.1f}%" in l for l in lines), log
# CHECK: mlp pipe=2 1f1b: 13 tensors, max rel
# CHECK: mlp pipe=2 gpipe: 13 tensors
# CHECK: mlp pipe=4 1f1b: 13 tensors
# CHECK: mlp data=2,pipe=2 gpipe: 13 tensors

# The cut where the model's `@stage` line puts it.
got, _ = train(marked, fashion, "marked", 2, ["--parallel", "pipeline", "--mesh", "pipe=2",
                                              "--microbatches", "2"])
compare("mlp @stage", mlp_one, got)
# CHECK: mlp @stage: 13 tensors

# A 4-layer GPT-style model whose head is tied to its embedding (the first
# and last stages both read `wte`, updated by the first).
one, _ = train(gpt, text, "gpt-one")
for ranks, mesh, schedule in ((2, "pipe=2", "1f1b"), (4, "pipe=4", "gpipe"),
                              (4, "pipe=4", "1f1b"), (4, "data=2,pipe=2", "1f1b")):
    parallel = "data,pipeline" if "data" in mesh else "pipeline"
    got, _ = train(gpt, text, f"gpt-{mesh}-{schedule}", ranks,
                   ["--parallel", parallel, "--mesh", mesh, "--microbatches", "4",
                    "--schedule", schedule])
    compare(f"gpt4 {mesh} {schedule}", one, got)
# CHECK: gpt4 pipe=2 1f1b: 145 tensors
# CHECK: gpt4 pipe=4 gpipe: 145 tensors
# CHECK: gpt4 pipe=4 1f1b: 145 tensors
# CHECK: gpt4 data=2,pipe=2 1f1b: 145 tensors

# Inference over the stages: rank 0 writes what one process computes.
np.save(f"{tmp}/tok.npy", tokens[:4])
run = ["dlc", "run", gpt, "--dim", "N=4", "--input", f"tokens=@{tmp}/tok.npy"]
subprocess.run(run + ["--output", f"logits=@{tmp}/one.npy"], check=True, capture_output=True)
for stages in (2, 4):
    subprocess.run(mpirun + ["-np", str(stages)] + run +
                   ["--output", f"logits=@{tmp}/p{stages}.npy", "--parallel", "pipeline",
                    "--mesh", f"pipe={stages}"], check=True, capture_output=True)
    a, b = np.load(f"{tmp}/one.npy"), np.load(f"{tmp}/p{stages}.npy")
    err = float(np.abs(a - b).max() / np.abs(a).max())
    print(f"run pipe={stages}: max rel {err:.1e}")
    assert err <= 1e-5, err
# CHECK: run pipe=2: max rel
# CHECK: run pipe=4: max rel

# --parallel auto: the cost model's choice for the launch's ranks, trained.
got, log = train(mlp, fashion, "auto", 2, ["--parallel", "auto"])
print([l for l in log.splitlines() if "--parallel auto" in l][0])
compare("mlp auto", mlp_one, got)
# CHECK: dlc: --parallel auto on 2 CPU rank{{.*}}: --mesh {{.*}}, predicted {{.*}} ms a step ({{[0-9]+}}% of perfect scaling), {{[0-9]+}} of {{[0-9]+}} plans fit
# CHECK: mlp auto: 13 tensors

# What cannot run says why.
def fails(ranks, args):
    p = subprocess.run(mpirun + ["-np", str(ranks), "dlc", "train"] + args,
                       capture_output=True, text=True)
    assert p.returncode != 0
    print(p.stderr.splitlines()[0])


fails(2, [mlp] + fashion + ["--parallel", "pipeline", "--mesh", "pipe=2", "--schedule", "zigzag"])
# CHECK: dlc: error: --schedule must be 1f1b or gpipe, not 'zigzag'
fails(2, [mlp] + fashion + ["--parallel", "pipeline", "--mesh", "pipe=2", "--microbatches", "3"])
# CHECK: dlc: error: --batch-size 64 does not divide into 1 data replicas of 3 micro-batches
fails(4, [mlp] + fashion + ["--parallel", "pipeline", "--mesh", "model=2,pipe=2"])
# CHECK: dlc: error: --parallel pipeline runs on the axes 'pipe' and 'data'; 'model'
fails(4, [marked] + fashion + ["--parallel", "pipeline", "--mesh", "pipe=4"])
# CHECK: error: the model's @stage lines make 2 stages, but the pipeline has 4
fails(2, [mlp] + fashion + ["--parallel", "auto", "--mesh", "data=2"])
# CHECK: dlc: error: --parallel auto chooses the mesh: leave out --mesh
