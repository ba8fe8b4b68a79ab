# RUN: %python %s
# One GPT-2 block (examples/gpt2_block.dlg) on the oracle against NumPy
# float64, from the same parameters and inputs: once as written (zero biases,
# unit norm scales) and once with those drawn at random.  B=2, T=16 keep the
# oracle fast.
import numpy as np
from dlc_numpy import (check_close, example, gelu_tanh, layer_norm, model_info,
                       randomise_constant_params, run_dlc, run_source, softmax)

MODEL = example("gpt2_block")
B, T, D, H = 2, 16, 768, 12
SHAPES = {"ln_1_g": (D,), "ln_1_b": (D,), "ln_2_g": (D,), "ln_2_b": (D,)}
for n in "qkvo":
    SHAPES.update({f"w_{n}": (D, D), f"b_{n}": (D,)})
SHAPES.update({"w_fc": (D, 4 * D), "b_fc": (4 * D,), "w_proj": (4 * D, D), "b_proj": (D,)})
assert sum(np.prod(s) for s in SHAPES.values()) == 7_087_872
assert model_info(MODEL, {"B": B, "T": T})["num_params"] == 7_087_872


def reference(x, p):
    p = {k: v.astype(np.float64) for k, v in p.items()}
    heads = lambda t: t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # [B, H, T, 64]
    h = layer_norm(x, p["ln_1_g"], p["ln_1_b"], eps=1e-5)
    q, k, v = (heads(h @ p[f"w_{n}"] + p[f"b_{n}"]) for n in "qkv")
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // H)
    causal = np.tril(np.ones((T, T), dtype=bool))  # query i sees keys j <= i
    probs = softmax(np.where(causal, scores, -np.inf), axis=-1)
    merged = (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    r = x + merged @ p["w_o"] + p["b_o"]
    h2 = layer_norm(r, p["ln_2_g"], p["ln_2_b"], eps=1e-5)
    return r + gelu_tanh(h2 @ p["w_fc"] + p["b_fc"]) @ p["w_proj"] + p["b_proj"]


x = np.random.default_rng(2).standard_normal((B, T, D)).astype(np.float32)
runs = {
    "example": run_dlc(MODEL, {"x": x}),
    "random biases": run_source(randomise_constant_params(open(MODEL).read()), {"x": x}),
}
for variant, (out, p) in runs.items():
    assert {k: v.shape for k, v in p.items()} == SHAPES, p.keys()
    assert sum(v.size for v in p.values()) == 7_087_872
    assert out["y"].shape == (B, T, D) and out["y"].dtype == np.float32
    check_close(f"{variant}: y", out["y"], reference(x, p))
