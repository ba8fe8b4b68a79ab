# REQUIRES: fashion-mnist
# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# A torchrun-style launch (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
# MASTER_PORT; no mpirun): the ranks meet through runtime/comm's tcp
# communicator at MASTER_ADDR:MASTER_PORT.
#  - dlc-comm-check: every collective, send/recv included, exact on 3 ranks;
#  - `dlc run --mesh model=2 --parallel tensor` on 2 ranks: the
#    single-device logits;
#  - a partitioned training job (dlc-train-job) on 2 ranks: the
#    single-process parameters after 30 steps;
#  - a rank killed mid-run: the other exits 3 at once, naming it.
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
from dlc_numpy import load_safetensors as load

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
fashion = "/usr/share/datasets/fashion-mnist"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(world, argv_of, extra_env=None):
    port = free_port()
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        for k in ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"):
            env.pop(k, None)
        env.update((extra_env or {}).get(r, {}))
        procs.append(subprocess.Popen(argv_of(r), env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


def finish(procs, timeout=300):
    out = []
    for p in procs:
        o, e = p.communicate(timeout=timeout)
        out.append((p.returncode, o, e))
    return out


# 1. Every collective.
results = finish(launch(3, lambda r: ["dlc-comm-check", "--count", "1000"]))
for rc, o, e in results:
    assert rc == 0, (rc, o, e)
rc, o, e = results[0]
print((o + e).strip())
assert "tcp, 3 ranks" in (o + e) and "checks exact" in (o + e), (o, e)

# 2. Tensor parallelism on 2 ranks.
mlp = os.path.join(root, "examples", "mnist_mlp.dlg")
subprocess.run(["dlc", "run", mlp, "--dim", "N=8", "--seed", "2", "--output",
                f"logits=@{tmp}/ref.npy"], check=True, capture_output=True)
results = finish(launch(2, lambda r: ["dlc", "run", mlp, "--dim", "N=8", "--seed", "2", "--mesh",
                                      "model=2", "--parallel", "tensor", "--output",
                                      f"logits=@{tmp}/tp.npy"]))
for rc, o, e in results:
    assert rc == 0, (rc, o, e)
ref, got = np.load(f"{tmp}/ref.npy"), np.load(f"{tmp}/tp.npy")
err = float(np.abs(got - ref).max() / np.abs(ref).max())
print(f"dlc run --mesh model=2 over tcp: max rel error {err:.1e}")
assert got.shape == ref.shape and err <= 1e-5

# 3. A partitioned training job on 2 ranks.
fmlp = os.path.join(root, "examples", "fashion_mnist", "mlp.dlg")
base = ["--data", fashion, "--batch-size", "64"]
subprocess.run(["dlc", "train", fmlp] + base + ["--max-steps", "30", "--checkpoint-dir",
                                                f"{tmp}/one"], check=True, capture_output=True)
subprocess.run(["dlc", "train", fmlp] + base + ["--compile-only", f"{tmp}/job", "--mesh", "data=2",
                                                "--parallel", "data"], check=True,
               capture_output=True)
for rc, o, e in finish(launch(2, lambda r: ["dlc-train-job", f"{tmp}/job", "--data", fashion,
                                            "--max-steps", "30", "--checkpoint-dir",
                                            f"{tmp}/ck"])):
    assert rc == 0, (rc, o, e)
one, got = load(f"{tmp}/one/ckpt-30.safetensors"), load(f"{tmp}/ck/ckpt-30.safetensors")
errs = {k: float(np.linalg.norm(got[k].astype(np.float64) - one[k]) /
                 max(np.linalg.norm(one[k].astype(np.float64)), 1e-30)) for k in one}
print(f"training job on 2 ranks over tcp: max rel error {max(errs.values()):.1e}")
assert max(errs.values()) <= 1e-5, errs

# 4. Rank 1 stalls before its first collective and is killed: rank 0,
# waiting with a 300 s deadline, exits 3 within seconds, naming it.
procs = launch(2, lambda r: ["dlc", "run", mlp, "--random-inputs", "--dim", "N=8", "--mesh", "data=2",
                             "--parallel", "data"], {1: {"DLC_TEST_HANG_RANK": "1"}})
time.sleep(3)
procs[1].send_signal(signal.SIGKILL)
start = time.time()
rc, o, e = finish(procs[:1], timeout=60)[0]
procs[1].wait()
print(f"rank 1 killed: rank 0 exit {rc} after {time.time() - start:.1f} s: {e.strip()}")
assert rc == 3 and "rank 1 closed its connection" in e and time.time() - start < 15, (rc, e)
print("torchrun-style launches work through the tcp communicator")
