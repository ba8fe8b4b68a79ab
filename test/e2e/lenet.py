# RUN: %python %s
# LeNet (examples/lenet.dlg) on the oracle against NumPy float64, from the
# same parameters and inputs: once as written (zero biases) and once with
# random biases.
import numpy as np
from dlc_numpy import (check_close, conv2d_nchw, example, max_pool2d,
                       randomise_constant_params, run_dlc, run_source)

MODEL = example("lenet")
SHAPES = {
    "conv1_w": (6, 1, 5, 5), "conv1_b": (6,),
    "conv2_w": (16, 6, 5, 5), "conv2_b": (16,),
    "fc1_w": (400, 120), "fc1_b": (120,),
    "fc2_w": (120, 84), "fc2_b": (84,),
    "fc3_w": (84, 10), "fc3_b": (10,),
}
N = 4


def reference(x, p):
    p = {k: v.astype(np.float64) for k, v in p.items()}
    relu = lambda t: np.maximum(t, 0)
    c1 = relu(conv2d_nchw(x, p["conv1_w"], p["conv1_b"], padding=(2, 2, 2, 2)))
    p1 = max_pool2d(c1, kernel=(2, 2), stride=(2, 2))
    c2 = relu(conv2d_nchw(p1, p["conv2_w"], p["conv2_b"]))
    p2 = max_pool2d(c2, kernel=(2, 2), stride=(2, 2))
    assert p2.shape == (N, 16, 5, 5)
    f1 = relu(p2.reshape(N, 400) @ p["fc1_w"] + p["fc1_b"])
    f2 = relu(f1 @ p["fc2_w"] + p["fc2_b"])
    return f2 @ p["fc3_w"] + p["fc3_b"]


x = np.random.default_rng(1).standard_normal((N, 1, 28, 28)).astype(np.float32)
runs = {
    "example": run_dlc(MODEL, {"x": x}),
    "random biases": run_source(randomise_constant_params(open(MODEL).read()), {"x": x}),
}
for variant, (out, p) in runs.items():
    assert {k: v.shape for k, v in p.items()} == SHAPES, p.keys()
    assert out["logits"].shape == (N, 10)
    check_close(f"{variant}: logits", out["logits"], reference(x, p))
