# RUN: %python %s
# The MNIST MLP (examples/mnist_mlp.dlg) on the oracle against NumPy float64,
# from the same parameters and inputs: once as written (zero biases) and once
# with random biases.
import numpy as np
from dlc_numpy import (check_close, example, model_info, randomise_constant_params,
                       run_dlc, run_source)

MODEL = example("mnist_mlp")
SHAPES = {"w1": (784, 128), "b1": (128,), "w2": (128, 10), "b2": (10,)}
assert model_info(MODEL)["num_params"] == 784 * 128 + 128 + 128 * 10 + 10


def reference(x, p):
    p = {k: v.astype(np.float64) for k, v in p.items()}
    h = np.maximum(x @ p["w1"] + p["b1"], 0)
    return h @ p["w2"] + p["b2"]


x = np.random.default_rng(0).standard_normal((8, 784)).astype(np.float32)
runs = {
    "example": run_dlc(MODEL, {"x": x}),
    "random biases": run_source(randomise_constant_params(open(MODEL).read()), {"x": x}),
}
for variant, (out, p) in runs.items():
    assert {k: v.shape for k, v in p.items()} == SHAPES, p.keys()
    assert all(v.dtype == np.float32 for v in p.values())
    assert out["logits"].shape == (8, 10) and out["logits"].dtype == np.float32
    check_close(f"{variant}: logits", out["logits"], reference(x, p))
assert np.any(runs["random biases"][1]["b1"] != 0)
