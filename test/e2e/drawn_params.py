# RUN: %python %s %dlc_obj/lib/libdlc_runtime.so %t
# Parameters drawn by the runtime instead of stored (module format 1.5).
#
# A train module records its parameters' initialisers instead of their
# values, and the session draws them when it creates or resets its state:
# the values must be what dlc's initialisers give (the NumPy
# re-implementation of SplitMix64 / Box-Muller: bit for bit for the uniform
# draws, within 1 ulp for the normal ones), a value read from a file stays a
# stored weight, and the module does not grow with the parameters (a 1024 x
# 1024 one would add 4 MiB).
#
# `dlc compile --draw-params` does the same for an inference module's
# weights, which the reader draws when it loads the module: the module
# computes, bit for bit, what the module with stored weights computes, on
# the CPU and on cuda-emu.
import json
import os
import subprocess
import sys

import numpy as np
from dlc_numpy import splitmix64_init, ulp_distance
from dlc_runtime_ctypes import Runtime, Session

LIB, TMP = sys.argv[1], sys.argv[2]
os.makedirs(TMP, exist_ok=True)
loaded = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
np.save(os.path.join(TMP, "w0.npy"), loaded)
model = os.path.join(TMP, "drawn.dlg")
GRAPH = """graph drawn(x: f32[N, 4]) -> (y: f32[N, 1]) {
  param w0: f32[4, 3]       = load("w0.npy")
  param w1: f32[3, 1024]    = normal(std=0.02, seed=5)
  param w2: f32[1024, 1024] = he(seed=6)
  param w3: f32[1024, 1]    = xavier(seed=7)
  param b1: f32[1024]       = uniform(low=-0.5, high=0.5, seed=8)
  param g:  f32[1]          = ones
  param b2: f32[1]          = zeros
  h = relu(((x @ w0) @ w1 + b1) @ w2)
  y = (h @ w3) * g + b2
}
"""
with open(model, "w") as f:
    f.write(GRAPH + """train drawn(target: f32[N, 1]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.001)
}
""")
data = os.path.join(TMP, "d.npz")
rng = np.random.default_rng(0)
np.savez(data, x=rng.standard_normal((8, 4)).astype(np.float32),
         target=rng.standard_normal((8, 1)).astype(np.float32))
job = os.path.join(TMP, "job")
subprocess.run(["dlc", "train", model, "--data", data, "--batch-size", "8", "--compile-only",
                job], check=True, stdout=subprocess.DEVNULL)
modules = json.load(open(os.path.join(job, "job.json")))["modules"]
path = os.path.join(job, "train-8.dlcm")
assert os.path.exists(path), (os.listdir(job), modules)
size = os.path.getsize(path)
print(f"train module: {size} bytes")
assert size < 2**20, f"{size} bytes: the parameters' values (4.0 MiB of w2) are stored"

WANT = {
    "w0": (loaded, 0),
    "w1": (splitmix64_init("normal", (3, 1024), std=0.02, seed=5), 1),
    "w2": (splitmix64_init("he", (1024, 1024), seed=6), 1),
    "w3": (splitmix64_init("xavier", (1024, 1), seed=7), 0),
    "b1": (splitmix64_init("uniform", (1024,), low=-0.5, high=0.5, seed=8), 0),
    "g": (np.ones(1, np.float32), 0),
    "b2": (np.zeros(1, np.float32), 0),
}
runtime = Runtime(LIB)
session = Session(runtime, path, "cpu")
names = [name for name, _, _ in session.state]
for reset in (False, True):
    if reset:  # drawn again, the same bits
        session.reset_state()
    for name, (want, allowed) in WANT.items():
        assert name in names, (name, names)
        i = names.index(name)
        got = np.full(session.state[i][1], np.nan, np.float32)
        session.read_state(i, got.ctypes.data)
        ulps = ulp_distance(got, want.astype(np.float32))
        print(f"{name}{' after reset' if reset else ''}: {int(np.sum(ulps == 0))}/{got.size} "
              f"bit-exact, max {int(ulps.max())} ulp")
        assert ulps.max() <= allowed, (name, got.ravel()[:4], want.ravel()[:4])
    # Adam's moments and step counter start at zero.
    others = [i for i, name in enumerate(names) if name not in WANT]
    assert len(others) >= 2 * len(WANT), names
    for i in others:
        _, shape, dtype = session.state[i]
        got = np.full(int(np.prod(shape)) * dtype.bits // 8, 0xAB, np.uint8)
        session.read_state(i, got.ctypes.data)
        assert not got.any(), (names[i], got[:8])
session.close()

# --draw-params: the same graph for inference, its weights drawn at load.
infer = os.path.join(TMP, "infer.dlg")
with open(infer, "w") as f:
    f.write(GRAPH)
x = rng.standard_normal((8, 4)).astype(np.float32)
np.save(os.path.join(TMP, "x.npy"), x)


def compile_and_run(name, target, device, *flags):
    module = os.path.join(TMP, name + ".dlcm")
    subprocess.run(["dlc", "compile", infer, "--dim", "N=8", f"--target={target}", "-o", module]
                   + list(flags), check=True)
    out = os.path.join(TMP, name + ".npy")
    subprocess.run(["dlc", "run", module, f"--device={device}", f"--input=x=@{TMP}/x.npy",
                    f"--output=y=@{out}"], check=True, stdout=subprocess.DEVNULL)
    return os.path.getsize(module), np.load(out)


stored_size, stored = compile_and_run("stored", "cpu", "cpu")
drawn_size, drawn = compile_and_run("drawn", "cpu", "cpu", "--draw-params")
print(f"inference module: {stored_size} bytes stored, {drawn_size} drawn")
assert stored_size > 4 * 2**20 and drawn_size < 2**20, (stored_size, drawn_size)
assert np.isfinite(stored).all() and np.abs(stored).max() > 0, stored
assert stored.tobytes() == drawn.tobytes(), (stored.ravel(), drawn.ravel())
_, emu = compile_and_run("drawn_cuda", "cuda:sm_90", "cuda-emu", "--draw-params")
np.testing.assert_allclose(emu, stored, rtol=1e-5, atol=1e-6)
print("cuda-emu, drawn weights: within 1e-5 of the CPU's")
