# RUN: %python %s
# Whole-model gradients of the compiled train step's backward pass against an
# independent implementation: JAX's jax.grad of the same network, from the
# same parameters and inputs, in float32. dlc computes them with
# `dlc run M --gradients` (dlc-differentiate, gradients only) on the CPU
# backend; every parameter's gradient must agree with JAX's within 1e-4 of
# its largest magnitude. Models: the MNIST MLP, LeNet, a GPT-2 block
# (B=2, T=16) with an MSE loss, heads with the other losses (bce_with_logits,
# nll; cross_entropy with label smoothing and ignored labels, written by hand
# in jax.numpy as PyTorch defines it), and the Fashion-MNIST MLP on u8 images.
import os
import subprocess
import tempfile

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from dlc_numpy import example  # noqa: E402

TOLERANCE = 1e-4


def dlc_gradients(source, inputs, dims, device="cpu"):
    """Runs `dlc run --gradients` on `source` (.dlg text): returns
    (loss, {param: gradient}, {param: value})."""
    with tempfile.TemporaryDirectory(prefix="dlc-grad-") as tmp:
        model = os.path.join(tmp, "model.dlg")
        with open(model, "w") as f:
            f.write(source)
        grads_path = os.path.join(tmp, "grads.npz")
        params_path = os.path.join(tmp, "params.npz")
        cmd = ["dlc", "run", model, f"--device={device}", f"--gradients={grads_path}",
               f"--save-params={params_path}"]
        cmd += [f"--dim={k}={v}" for k, v in dims.items()]
        for name, array in inputs.items():
            path = os.path.join(tmp, f"in_{name}.npy")
            np.save(path, array)
            cmd.append(f"--input={name}=@{path}")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}\n{done.stdout}{done.stderr}")
        with np.load(grads_path) as g, np.load(params_path) as p:
            grads = {k[len("grad."):]: g[k] for k in g.files if k.startswith("grad.")}
            return float(g["loss"]), grads, {k: p[k] for k in p.files}


def compare(model, loss_fn, source, inputs, dims):
    loss, grads, params = dlc_gradients(source, inputs, dims)
    jparams = {k: jnp.asarray(v) for k, v in params.items()}
    want_loss, want = jax.value_and_grad(loss_fn)(jparams, *inputs.values())
    assert set(grads) == set(want), (model, sorted(grads), sorted(want))
    # A gradient that is zero in exact arithmetic (a key bias: softmax does
    # not see a constant added to a row of scores) is rounding noise in both
    # implementations: it must stay noise, below 1e-5 of the model's largest
    # gradient; every other one agrees within TOLERANCE of its own largest
    # element.
    largest = max(float(np.abs(np.asarray(w)).max()) for w in want.values())
    worst = 0.0
    for name in sorted(want):
        w = np.asarray(want[name], dtype=np.float64)
        g = grads[name].astype(np.float64)
        assert g.shape == w.shape, (model, name, g.shape, w.shape)
        if np.abs(w).max() < 1e-6 * largest:
            assert np.abs(g).max() < 1e-5 * largest, f"{model}: d loss / d {name} should be 0"
            continue
        err = np.abs(g - w).max() / np.abs(w).max()
        worst = max(worst, err)
        assert err <= TOLERANCE, f"{model}: d loss / d {name}: relative error {err:.3g}"
    assert abs(loss - float(want_loss)) <= 1e-5 * max(1.0, abs(float(want_loss))), (model, loss, want_loss)
    print(f"{model}: {len(want)} parameter gradients match JAX, worst relative error {worst:.2e}")


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


rng = np.random.default_rng(0)

# --- the MNIST MLP ------------------------------------------------------------
N = 8


def mlp(p, x, label):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return cross_entropy(h @ p["w2"] + p["b2"], label)


compare("mnist_mlp", mlp, open(example("mnist_mlp")).read(),
        {"x": rng.standard_normal((N, 784)).astype(np.float32),
         "label": rng.integers(0, 10, N).astype(np.int32)}, {"N": N})

# --- LeNet --------------------------------------------------------------------


def conv(x, w, b, padding):
    y = lax.conv_general_dilated(x, w, (1, 1), [(padding, padding)] * 2,
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                 precision=lax.Precision.HIGHEST)
    return y + b[None, :, None, None]


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def lenet(p, x, label):
    c1 = max_pool(jax.nn.relu(conv(x, p["conv1_w"], p["conv1_b"], 2)))
    c2 = max_pool(jax.nn.relu(conv(c1, p["conv2_w"], p["conv2_b"], 0)))
    f = c2.reshape(x.shape[0], 400)
    f1 = jax.nn.relu(f @ p["fc1_w"] + p["fc1_b"])
    f2 = jax.nn.relu(f1 @ p["fc2_w"] + p["fc2_b"])
    return cross_entropy(f2 @ p["fc3_w"] + p["fc3_b"], label)


compare("lenet", lenet, open(example("lenet")).read(),
        {"x": rng.standard_normal((N, 1, 28, 28)).astype(np.float32),
         "label": rng.integers(0, 10, N).astype(np.int32)}, {"N": N})

# --- average pooling: tiled (2x2), overlapping and padded (3x3, stride 1,
# padding not counted), and global (a ResNet-style head) --------------------
AVG_POOL_CNN = """
graph avgpool(x: f32[N, 3, 8, 8]) -> (logits: f32[N, 10]) {
  param conv1_w: f32[4, 3, 3, 3] = he(seed=1)
  param conv1_b: f32[4]          = zeros
  param conv2_w: f32[6, 4, 3, 3] = he(seed=2)
  param fc_w: f32[6, 10]         = he(seed=3)
  param fc_b: f32[10]            = zeros
  a = avg_pool2d(relu(conv2d(x, conv1_w, conv1_b, padding=1)), kernel=2)
  b = avg_pool2d(conv2d(a, conv2_w, padding=1), kernel=3, stride=1, padding=1)
  g = reshape(avg_pool2d(relu(b), kernel=[4, 4]), shape=[N, 6])
  logits = g @ fc_w + fc_b
}

train avgpool(label: i32[N]) {
  loss      = cross_entropy(logits, label)
  optimizer = sgd(lr=0.1)
}
"""


def avg_pool(x, k, s, pad):
    window, strides = (1, 1, k, k), (1, 1, s, s)
    padding = [(0, 0), (0, 0), (pad, pad), (pad, pad)]
    total = lax.reduce_window(x, 0.0, lax.add, window, strides, padding)
    count = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, window, strides, padding)
    return total / count


def avgpool_cnn(p, x, label):
    a = avg_pool(jax.nn.relu(conv(x, p["conv1_w"], p["conv1_b"], 1)), 2, 2, 0)
    y = lax.conv_general_dilated(a, p["conv2_w"], (1, 1), [(1, 1)] * 2,
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                 precision=lax.Precision.HIGHEST)
    b = avg_pool(y, 3, 1, 1)
    g = avg_pool(jax.nn.relu(b), 4, 4, 0).reshape(x.shape[0], 6)
    return cross_entropy(g @ p["fc_w"] + p["fc_b"], label)


compare("avg_pool_cnn", avgpool_cnn, AVG_POOL_CNN,
        {"x": rng.standard_normal((N, 3, 8, 8)).astype(np.float32),
         "label": rng.integers(0, 10, N).astype(np.int32)}, {"N": N})

# --- a GPT-2 block with an MSE loss ----------------------------------------
B, T, D, H = 2, 16, 768, 12


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * g + b


def gpt2_block(p, x, target):
    heads = lambda t: t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)
    h = layer_norm(x, p["ln_1_g"], p["ln_1_b"])
    q, k, v = (heads(h @ p[f"w_{n}"] + p[f"b_{n}"]) for n in "qkv")
    scores = jnp.matmul(q, k.transpose(0, 1, 3, 2)) * 0.125
    causal = jnp.tril(jnp.ones((T, T), dtype=bool))
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    merged = (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    r = x + merged @ p["w_o"] + p["b_o"]
    h2 = layer_norm(r, p["ln_2_g"], p["ln_2_b"])
    y = r + jax.nn.gelu(h2 @ p["w_fc"] + p["b_fc"], approximate=True) @ p["w_proj"] + p["b_proj"]
    return jnp.mean((y - target) ** 2)


with jax.default_matmul_precision("highest"):
    source = open(example("gpt2_block")).read() + """
train gpt2_block(target: f32[B, T, 768]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.001)
}
"""
    compare("gpt2_block", gpt2_block, source,
            {"x": rng.standard_normal((B, T, D)).astype(np.float32),
             "target": rng.standard_normal((B, T, D)).astype(np.float32)},
            {"B": B, "T": T})

# --- the other losses: bce_with_logits and nll (compositions of ops) --------
LOSSES = """
graph heads(x: f32[8, 5]) -> (logits: f32[8, 3]) {
  param w: f32[5, 3] = normal(std=1, seed=7)
  logits = x @ w
}
train heads(t: f32[8, 3], label: i32[8]) {
  loss = bce_with_logits(logits, t) + nll(log_softmax(logits), label, reduction="sum")
}
"""


def heads(p, x, t, label):
    logits = x @ p["w"]
    bce = jnp.mean(jnp.maximum(logits, 0) - logits * t + jnp.log1p(jnp.exp(-jnp.abs(logits))))
    logp = jax.nn.log_softmax(logits, axis=-1)
    return bce - jnp.sum(jnp.take_along_axis(logp, label[:, None], axis=-1))


compare("bce_with_logits + nll", heads, LOSSES,
        {"x": rng.standard_normal((8, 5)).astype(np.float32),
         "t": rng.uniform(0, 1, (8, 3)).astype(np.float32),
         "label": rng.integers(0, 3, 8).astype(np.int32)}, {})

# --- cross_entropy with label smoothing and ignored labels (PyTorch's
# semantics, written by hand in jax.numpy) ----------------------------------
SMOOTHED = """
graph heads(x: f32[8, 5]) -> (logits: f32[8, 4]) {
  param w: f32[5, 4] = normal(std=1, seed=7)
  param b: f32[4] = normal(std=0.1, seed=8)
  logits = x @ w + b
}
train heads(label: i32[8], other: i64[8]) {
  loss = cross_entropy(logits, label, label_smoothing=0.1, ignore_index=-1) + cross_entropy(
      logits, other, reduction="sum", label_smoothing=0.3, ignore_index=2) * 0.1
}
"""


def smoothed_cross_entropy(logits, labels, eps, ignore, reduction="mean"):
    logp = jax.nn.log_softmax(logits, axis=-1)
    kept = labels != ignore
    nll = -jnp.take_along_axis(logp, jnp.where(kept, labels, 0)[:, None], axis=-1)[:, 0]
    per = jnp.where(kept, (1 - eps) * nll - eps * logp.mean(axis=-1), 0.0)
    return per.sum() / (kept.sum() if reduction == "mean" else 1)


def smoothed_heads(p, x, label, other):
    logits = x @ p["w"] + p["b"]
    return (smoothed_cross_entropy(logits, label, 0.1, -1)
            + smoothed_cross_entropy(logits, other, 0.3, 2, "sum") * 0.1)


compare("cross_entropy smoothed, ignored labels", smoothed_heads, SMOOTHED,
        {"x": rng.standard_normal((8, 5)).astype(np.float32),
         "label": np.array([0, -1, 3, 2, -1, 1, 2, 0], np.int32),
         "other": np.array([2, 1, 3, 2, 0, 1, 2, 3], np.int64)}, {})

# --- the Fashion-MNIST MLP: u8 images, normalised in the graph --------------


def fashion_mlp(p, image, label):
    x = ((image.astype(jnp.float32) / 255 - 0.5) / 0.5).reshape(image.shape[0], 784)
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return cross_entropy(h @ p["w2"] + p["b2"], label)


compare("fashion_mnist/mlp", fashion_mlp, open(example("fashion_mnist/mlp")).read(),
        {"image": rng.integers(0, 256, (N, 28, 28)).astype(np.uint8),
         "label": rng.integers(0, 10, N).astype(np.int32)}, {"N": N})
