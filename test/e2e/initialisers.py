# RUN: %python %s
# dlc's parameter initialisers against a NumPy re-implementation of the
# SplitMix64 / Box-Muller algorithm documented in oracle/kernels/Kernels.h.
# Uniform-based draws (uniform, xavier) and constants must match bit for bit;
# normal-based ones (normal, he) within 1 ulp, as libm's log/cos may differ.
import os
import tempfile

import numpy as np
from dlc_numpy import (SplitMix64, check_equal, example, round_bf16, run_dlc, run_source,
                       save_safetensors, splitmix64_draws, splitmix64_init, splitmix64_normal,
                       splitmix64_uniform, ulp_distance)

# The generator itself: the published SplitMix64 sequence for seed 1234567,
# and the vectorised form equal to the one-step-at-a-time form.
KNOWN = [6457827717110365317, 3203168211198807973, 9817491932198370423,
         4593380528125082431, 16408922859458223821]
rng = SplitMix64(1234567)
assert [rng.next() for _ in KNOWN] == KNOWN
assert [int(v) for v in splitmix64_draws(1234567, 5)] == KNOWN
for seed in (0, 1, 2**63 - 1):
    rng = SplitMix64(seed)
    assert [rng.next() for _ in range(100)] == [int(v) for v in splitmix64_draws(seed, 100)]
rng = SplitMix64(5)  # math's and numpy's log/cos may differ in the last bit
np.testing.assert_allclose([rng.normal() for _ in range(3)],
                           splitmix64_init("normal", (3,), seed=5, dtype=np.float64), rtol=1e-14)

NP_DTYPES = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": np.float32}
# name, dtype, shape, initialiser, keywords
CASES = [
    ("he_fc", "f32", (7, 5), "he", dict(seed=1)),
    ("he_conv", "f32", (4, 3, 3, 3), "he", dict(seed=2)),
    ("he_vec", "f32", (9,), "he", dict(seed=3)),
    ("he_scalar", "f32", (), "he", dict(seed=4)),
    ("xavier_fc", "f32", (6, 10), "xavier", dict(seed=5)),
    ("xavier_conv", "f32", (8, 2, 5, 3), "xavier", dict(seed=6)),
    ("xavier_3d", "f32", (3, 4, 5), "xavier", dict(seed=7)),
    ("normal_default", "f32", (5, 5), "normal", dict()),
    ("normal", "f32", (64, 33), "normal", dict(mean=-0.5, std=0.02, seed=8)),
    ("normal_big_seed", "f32", (10,), "normal", dict(mean=1, std=3, seed=2**63 - 1)),
    ("uniform_default", "f32", (17,), "uniform", dict()),
    ("uniform", "f32", (3, 100), "uniform", dict(low=-3, high=2.5, seed=9)),
    ("uniform_f64", "f64", (4, 4), "uniform", dict(low=-1, high=1, seed=10)),
    ("normal_f64", "f64", (50,), "normal", dict(seed=11)),
    ("he_f16", "f16", (16, 8), "he", dict(seed=12)),
    ("xavier_bf16", "bf16", (16, 8), "xavier", dict(seed=13)),
    ("normal_bf16", "bf16", (40,), "normal", dict(std=0.02, seed=14)),
    ("zeros", "f32", (2, 3), "zeros", dict()),
    ("ones", "f32", (3, 2), "ones", dict()),
    ("zeros_f16", "f16", (4,), "zeros", dict()),
    ("ones_f64", "f64", (), "ones", dict()),
]


def init_text(kind, kw):
    args = ", ".join(f"{k}={v}" for k, v in kw.items())
    return kind if kind in ("zeros", "ones") else f"{kind}({args})"


lines = [f"  param {name}: {dt}[{', '.join(map(str, shape))}] = {init_text(kind, kw)}"
         for name, dt, shape, kind, kw in CASES]
source = "graph inits(x: f32[1]) -> (y: f32[1]) {\n" + "\n".join(lines) + "\n  y = x\n}\n"
# .npz has no bfloat16: read the parameters from a safetensors file.
_, params = run_source(source, {"x": np.zeros(1, np.float32)}, params_file="params.safetensors")
assert sorted(params) == sorted(c[0] for c in CASES)

for name, dt, shape, kind, kw in CASES:
    got = params[name]
    want = splitmix64_init(kind, shape, dtype=NP_DTYPES[dt], **kw)
    if dt == "bf16":  # documented: round to float32, then to the top 16 bits
        want = round_bf16(want)
    assert got.shape == shape and got.dtype == want.dtype, (name, got.shape, got.dtype)
    ulps = ulp_distance(got, want)
    exact = int(np.sum(ulps == 0))
    print(f"{name}: {exact}/{got.size} bit-exact, max {int(ulps.max(initial=0))} ulp")
    allowed = 1 if kind in ("normal", "he") else 0
    assert ulps.max(initial=0) <= allowed, (name, got, want)
    if kind not in ("zeros", "ones") and got.size > 1:
        assert np.unique(got).size > 1, name  # really drawn

# The parameters of the example models, as they are initialised there.
EXAMPLES = {
    "mnist_mlp": ({"x": np.zeros((1, 784), np.float32)},
                  {"w1": ("he", 1), "w2": ("he", 2)}),
    "lenet": ({"x": np.zeros((1, 1, 28, 28), np.float32)},
              {f"conv{i}_w": ("he", i) for i in (1, 2)} | {f"fc{i}_w": ("he", i + 2) for i in (1, 2, 3)}),
    "gpt2_block": ({"x": np.zeros((1, 1, 768), np.float32)},
                   {w: ("normal", i + 1) for i, w in enumerate(["w_q", "w_k", "w_v", "w_o", "w_fc", "w_proj"])}),
}
for model, (inputs, inits) in EXAMPLES.items():
    _, params = run_dlc(example(model), inputs)
    for name, (kind, seed) in inits.items():
        kw = dict(std=0.02) if kind == "normal" else {}
        ulps = ulp_distance(params[name], splitmix64_init(kind, params[name].shape, seed=seed, **kw))
        print(f"{model}.{name}: {int(np.sum(ulps == 0))}/{ulps.size} bit-exact, max {int(ulps.max())} ulp")
        assert ulps.max() <= 1, (model, name)
    for name, value in params.items():
        if name not in inits:  # biases and norm offsets are zeros, norm scales ones
            assert np.all(value == (1 if name.endswith("_g") else 0)), (model, name)

# load(...): the file's values, unchanged, for each file kind and dtype.
with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    h = rng.standard_normal((2, 5)).astype(np.float16)
    d = rng.standard_normal(5)
    n = rng.integers(-100, 100, (2, 2)).astype(np.int32)
    b = round_bf16(rng.standard_normal((4, 2)).astype(np.float32))
    np.save(os.path.join(tmp, "w.npy"), w)
    np.save(os.path.join(tmp, "h.npy"), h)
    np.savez(os.path.join(tmp, "arch.npz"), d_in_file=d, n=n)
    save_safetensors(os.path.join(tmp, "st.safetensors"), {"b": b, "w": w}, bf16={"b"})
    source = """graph loads(x: f32[1]) -> (y: f32[1]) {
      param w:  f32[3, 4]  = load("w.npy")
      param h:  f16[2, 5]  = load("h.npy")
      param d:  f64[5]     = load("arch.npz", key="d_in_file")
      param n:  i32[2, 2]  = load("arch.npz")
      param b:  bf16[4, 2] = load("st.safetensors")
      param w2: f32[3, 4]  = load("st.safetensors", key="w")
      y = x
    }
    """
    with open(os.path.join(tmp, "loads.dlg"), "w") as f:
        f.write(source)
    _, params = run_dlc(os.path.join(tmp, "loads.dlg"), {"x": np.zeros(1, np.float32)},
                        params_file="params.safetensors")
    for name, want in dict(w=w, h=h, d=d, n=n, b=b, w2=w).items():
        check_equal(f"load {name}", params[name], want)
        assert params[name].dtype == want.dtype, name

# Random inputs (no --input): standard normal floats, integers in [0, 10) and
# booleans drawn from SplitMix64(seed * 1000003 + input index).
source = """graph rand(x: f32[N, 3], k: i32[N], m: i1[N]) -> (x2: f32[N, 3], k2: i32[N], m2: i1[N]) {
  x2 = x
  k2 = k
  m2 = m
}
"""
for seed in (0, 5):
    out, _ = run_source(source, {}, dims={"N": 7}, seed=seed)
    check_equal(f"random x, seed {seed}",
                out["x2"], splitmix64_normal(seed * 1000003 + 0, 21).astype(np.float32).reshape(7, 3))
    check_equal(f"random k, seed {seed}",
                out["k2"], np.floor(splitmix64_uniform(seed * 1000003 + 1, 7) * 10).astype(np.int32))
    check_equal(f"random m, seed {seed}", out["m2"], splitmix64_uniform(seed * 1000003 + 2, 7) >= 0.5)
