# RUN: %python %s
# One small graph per op family, run on the compiled CPU backend and on the
# float64 oracle from the same inputs: float outputs within 1e-5 relative
# error (f16/bf16: 1e-2), integer and boolean outputs equal.
import os
import subprocess
import tempfile

import numpy as np
from dlc_numpy import graph_source, rel_error

rng = np.random.default_rng(11)
failures = []


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def ints(low, high, *shape, dtype=np.int32):
    return rng.integers(low, high, shape).astype(dtype)


def run(source, inputs, outputs, device, tmp):
    path = os.path.join(tmp, "model.dlg")
    with open(path, "w") as f:
        f.write(source)
    cmd = ["dlc", "run", path, f"--device={device}"]
    for k, v in inputs.items():
        np.save(os.path.join(tmp, f"in_{k}.npy"), v)
        cmd.append(f"--input={k}=@{os.path.join(tmp, f'in_{k}.npy')}")
    for k in outputs:
        cmd.append(f"--output={k}=@{os.path.join(tmp, f'{device}_{k}.npy')}")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{device}: exit {r.returncode}\n{r.stderr}\n{source}")
    return {k: np.load(os.path.join(tmp, f"{device}_{k}.npy")) for k in outputs}


def case(name, inputs, body, **outputs):
    """outputs: name -> (dtype, shape) of each graph output."""
    declared = {k: np.empty(shape, dtype) for k, (dtype, shape) in outputs.items()}
    source = graph_source(name, inputs, body, declared)
    with tempfile.TemporaryDirectory(prefix="dlc-cpu-ops-") as tmp:
        try:
            cpu = run(source, inputs, outputs, "cpu", tmp)
            ref = run(source, inputs, outputs, "reference", tmp)
        except RuntimeError as e:
            print(f"FAILED {name}: {e}")
            failures.append(name)
            return
    for k in outputs:
        a, b = cpu[k], ref[k]
        if a.dtype.kind == "f":
            tol = 1e-5 if a.dtype.itemsize >= 4 else 1e-2
            nan = np.isnan(b)  # NaN where the oracle has NaN, and only there
            err = rel_error(np.where(nan, 0, a), np.where(nan, 0, b)) if a.shape == b.shape else np.inf
            ok = a.shape == b.shape and np.array_equal(np.isnan(a), nan) and err <= tol
            print(f"{name}.{k}: rel_error = {err:.3e}")
        else:
            ok = a.shape == b.shape and np.array_equal(a, b)
            print(f"{name}.{k}: {'exact' if ok else 'DIFFERS'}")
        if not ok:
            failures.append(f"{name}.{k}")


f32 = np.float32
x, y, v = randn(3, 4, 5), randn(4, 5), randn(5)
case("unary_binary", {"x": x, "y": y, "v": v}, """
    a = relu(x) + y * v - abs(y) / (1 + exp(v))
    b = tanh(x) * sigmoid(y) + silu(x) - sqrt(abs(x)) + rsqrt(abs(y) + 1)
    c = gelu(x, approximate="tanh") + gelu(y) + log(abs(x) + 1)
    d = max(x, y) - min(x, v) + pow(abs(x), y) + neg(x)
""", a=(f32, (3, 4, 5)), b=(f32, (3, 4, 5)), c=(f32, (3, 4, 5)), d=(f32, (3, 4, 5)))

a, b, c = np.round(randn(4, 5)), np.round(randn(4, 5)), randn(4, 1)
case("compare_select_iota", {"a": a, "b": b, "c": c}, """
    ge_ = ge(c, b)
    pick = select(gt(a, b), a, b)
    bsel = select(gt(c, 0), a, c)
    rows = iota(shape=[3, 4], axis=0, dtype=i32)
    cols = iota(shape=[3, 4], axis=-1)
""", ge_=(np.bool_, (4, 5)), pick=(f32, (4, 5)), bsel=(f32, (4, 5)),
     rows=(np.int32, (3, 4)), cols=(np.int64, (3, 4)))

i, j = ints(-50000, 50000, 6), ints(1, 7, 6)
x = randn(6) * 1e5
case("integers_casts", {"i": i, "j": j, "x": x}, """
    m = i * i * i + i - j
    q = i / j
    p = pow(j, j)
    t = cast(x, to=i32)
    h = cast(x * 0.01, to=f16)
    back = cast(cast(x * 0.01, to=f16), to=f32)
""", m=(np.int32, (6,)), q=(np.int32, (6,)), p=(np.int32, (6,)), t=(np.int32, (6,)),
     h=(np.float16, (6,)), back=(f32, (6,)))

x, w, bias = randn(5, 7, 16), randn(16, 12), randn(12)
xb, wb = randn(2, 3, 8, 6), randn(3, 6, 4)
case("matmul", {"x": x, "w": w, "bias": bias, "xb": xb, "wb": wb}, """
    y = relu(x @ w + bias)
    t = matmul(w, w, transpose_a=true)
    u = matmul(x, x, transpose_b=true)
    z = xb @ wb
""", y=(f32, (5, 7, 12)), t=(f32, (12, 12)), u=(f32, (5, 7, 7)), z=(f32, (2, 3, 8, 4)))

x64, w64 = randn(4, 9, dtype=np.float64), randn(9, 3, dtype=np.float64)
xi, wi = ints(-5, 5, 4, 9), ints(-5, 5, 9, 3)
case("matmul_other_dtypes", {"x64": x64, "w64": w64, "xi": xi, "wi": wi}, """
    d = x64 @ w64
    k = xi @ wi
    h = cast(cast(x64, to=f16) @ cast(w64, to=f16), to=f32)
""", d=(np.float64, (4, 3)), k=(np.int32, (4, 3)), h=(f32, (4, 3)))

x, wc, bc, wg, w1 = randn(2, 4, 9, 8), randn(6, 4, 3, 3), randn(6), randn(6, 2, 3, 2), randn(6, 4, 1, 1)
case("conv_pool", {"x": x, "wc": wc, "bc": bc, "wg": wg, "w1": w1}, """
    plain = relu(conv2d(x, wc, bc, stride=[1, 1], padding=[1, 1]))
    strided = conv2d(x, wc, bc, stride=[2, 1], padding=[1, 2], dilation=[1, 2])
    grouped = conv2d(x, wg, groups=2, padding=[0, 1, 2, 3])
    pointwise = conv2d(x, w1)
    mp = max_pool2d(x, kernel=[2, 2], stride=[2, 2])
    ap = avg_pool2d(x, kernel=[3, 3], stride=[2, 2], padding=[1, 1])
""", plain=(f32, (2, 6, 9, 8)), strided=(f32, (2, 6, 5, 8)), grouped=(f32, (2, 6, 9, 11)),
     pointwise=(f32, (2, 6, 9, 8)), mp=(f32, (2, 4, 4, 4)), ap=(f32, (2, 4, 5, 4)))

x, g, b = randn(3, 5, 8), randn(8), randn(8)
case("rows", {"x": x, "g": g, "b": b}, """
    s = softmax(x)
    s0 = softmax(x, axis=0)
    ls = log_softmax(x, axis=1)
    ln = layer_norm(x, g, b)
    rn = rms_norm(x, g)
    total = reduce_sum(x, axes=[0, 2])
    mean = reduce_mean(x, axes=[-1], keepdims=true)
    mx = reduce_max(x, axes=[1])
    mn = reduce_min(x, axes=[0, 1, 2])
    hand = exp(x - reduce_max(x, axes=[-1], keepdims=true)) / reduce_sum(exp(x - reduce_max(x, axes=[-1], keepdims=true)), axes=[-1], keepdims=true)
""", s=(f32, (3, 5, 8)), s0=(f32, (3, 5, 8)), ls=(f32, (3, 5, 8)), ln=(f32, (3, 5, 8)),
     rn=(f32, (3, 5, 8)), total=(f32, (5,)), mean=(f32, (3, 5, 1)), mx=(f32, (3, 8)),
     mn=(f32, ()), hand=(f32, (3, 5, 8)))

logits, labels, pred, target = randn(6, 10), ints(0, 10, 6), randn(4, 3), randn(4, 3)
case("losses", {"logits": logits, "labels": labels, "pred": pred, "target": target}, """
    ce = cross_entropy(logits, labels)
    ces = cross_entropy(logits, labels, reduction="none")
    m = mse(pred, target, reduction="sum")
""", ce=(f32, ()), ces=(f32, (6,)), m=(f32, ()))

# PyTorch's label_smoothing and ignore_index (-100 by default; 7 here).
logits, labels = randn(6, 10), np.array([0, 9, -100, 2, 3, -100], np.int32)
logits3, labels3 = randn(2, 3, 4), np.array([[1, 7, 0], [7, 3, 7]], np.int64)
case("losses_smoothing_ignore", {"logits": logits, "labels": labels, "logits3": logits3,
                                 "labels3": labels3}, """
    smooth = cross_entropy(logits, labels, label_smoothing=0.1)
    smooth_sum = cross_entropy(logits, labels, reduction="sum", label_smoothing=0.25)
    ignored = cross_entropy(logits3, labels3, ignore_index=7)
    both_none = cross_entropy(logits3, labels3, reduction="none", ignore_index=7, label_smoothing=0.5)
    all_ignored = cross_entropy(logits3, labels3 * 0 + 7, ignore_index=7)
""", smooth=(f32, ()), smooth_sum=(f32, ()), ignored=(f32, ()), both_none=(f32, (2, 3)),
     all_ignored=(f32, ()))

# i8 and u8 are data: moved, selected, concatenated, gathered and cast (to
# them: truncated toward zero, wrapped modulo 256).
f = np.concatenate([randn(12) * 300, [127.5, 128.5, 255.7, 256.2, -129.3, -0.5]]).astype(f32)
u, s8 = ints(0, 256, 6, dtype=np.uint8), ints(-128, 128, 6, dtype=np.int8)
m = ints(0, 2, 6, dtype=np.bool_)
case("data_only_dtypes", {"f": f, "u": u, "s8": s8, "m": m}, """
    to_u8 = cast(f, to=u8)
    to_i8 = cast(f, to=i8)
    from_u8 = cast(u, to=f32) / 255
    from_i8 = cast(s8, to=f16)
    u_as_i8 = cast(u, to=i8)
    i8_as_u8 = cast(s8, to=u8)
    i8_as_i1 = cast(s8, to=i1)
    moved = concat(transpose(reshape(u, shape=[2, 3]), perm=[1, 0]), reshape(u, shape=[3, 2]), axis=1)
    picked = gather(s8, iota(shape=[3], axis=0) * 2 + 1)
    chosen = select(m, u, slice(u, starts=[0], ends=[1]))
    padded = pad(s8, low=[1], high=[2], value=-7)
    table = embedding(reshape(u, shape=[3, 2]), iota(shape=[4], axis=0) / 2)
    same = eq(u, cast(s8, to=u8))
""", to_u8=(np.uint8, (18,)), to_i8=(np.int8, (18,)), from_u8=(f32, (6,)),
     from_i8=(np.float16, (6,)), u_as_i8=(np.int8, (6,)), i8_as_u8=(np.uint8, (6,)),
     i8_as_i1=(np.bool_, (6,)), moved=(np.uint8, (3, 4)), picked=(np.int8, (3,)),
     chosen=(np.uint8, (6,)), padded=(np.int8, (9,)), table=(np.uint8, (4, 2)),
     same=(np.bool_, (6,)))

x, idx, table, ids = randn(4, 6, 3), ints(-6, 6, 2, 2), randn(10, 4), ints(0, 10, 3)
case("data_movement", {"x": x, "idx": idx, "table": table, "ids": ids}, """
    t = transpose(x, perm=[2, 0, 1])
    r = reshape(transpose(x, perm=[1, 0, 2]), shape=[6, 12])
    s = slice(x, starts=[1, 0], ends=[4, 6], axes=[0, 1], steps=[1, 2])
    p = pad(x, low=[0, 1, 2], high=[1, 0, 1], value=0.5)
    c = concat(x, x * 2, axis=1)
    gth = gather(x, idx, axis=1)
    e = embedding(table, ids)
    bc = broadcast_to(slice(table, starts=[0], ends=[1]), shape=[5, 4])
""", t=(f32, (3, 4, 6)), r=(f32, (6, 12)), s=(f32, (3, 3, 3)), p=(f32, (5, 7, 6)),
     c=(f32, (4, 12, 3)), gth=(f32, (4, 2, 2, 3)), e=(f32, (3, 4)), bc=(f32, (5, 4)))

q, k, vv = randn(2, 4, 16, 8), randn(2, 4, 16, 8), randn(2, 4, 16, 8)
case("attention", {"q": q, "k": k, "vv": vv}, """
    row = iota(shape=[16, 16], axis=0, dtype=i32)
    col = iota(shape=[16, 16], axis=1, dtype=i32)
    o = softmax(select(ge(row, col), matmul(q, k, transpose_b=true) * 0.35, -1e9)) @ vv
""", o=(f32, (2, 4, 16, 8)))

# Results that are reshapes/transposes of matmul rows (the q/k/v head split,
# the merge of the heads) split over those rows and store through the map.
x, w, kk = randn(2, 16, 32), randn(32, 32), randn(2, 4, 16, 8)
case("heads", {"x": x, "w": w, "kk": kk}, """
    q = transpose(reshape(x @ w + 1, shape=[2, 16, 4, 8]), perm=[0, 2, 1, 3])
    m = reshape(transpose(softmax(matmul(q, kk, transpose_b=true)) @ kk, perm=[0, 2, 1, 3]), shape=[2, 16, 32])
    t = transpose(reshape(x @ w, shape=[2, 16, 2, 16]), perm=[2, 0, 3, 1])
""", q=(f32, (2, 4, 16, 8)), m=(f32, (2, 16, 32)), t=(f32, (2, 2, 16, 16)))

# The CPU's own exp/tanh/erf (vectorisable polynomials): each element within
# 1e-6 relative of the oracle over the whole float range, saturation,
# subnormal results, infinities and NaN included.
sweep = np.concatenate([np.linspace(-110, 110, 20005), np.geomspace(1e-30, 0.7, 997),
                        -np.geomspace(1e-30, 0.7, 997),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.7, 89.0, -87.5, -103.9]]
                       ).astype(f32)
with tempfile.TemporaryDirectory(prefix="dlc-cpu-ops-") as tmp:
    body = """
    e = exp(t)
    th = tanh(t)
    sg = sigmoid(t)
    gl = gelu(t, approximate="tanh")
    er = erf(t)
    ge = gelu(t)
    sm = softmax(reshape(t * 0.25, shape=[%d, 8]))
""" % (sweep.size // 8)
    outs = {k: (f32, sweep.shape) for k in ("e", "th", "sg", "gl", "er", "ge")}
    outs["sm"] = (f32, (sweep.size // 8, 8))
    declared = {k: np.empty(shape, dtype) for k, (dtype, shape) in outs.items()}
    source = graph_source("transcendental", {"t": sweep}, body, declared)
    # Subnormal results are checked with denormals kept; by default the
    # runtime flushes them to zero (runtime/hal/cpu/Denormals.h), checked
    # after the loop.
    os.environ["DLC_CPU_DENORMALS"] = "keep"
    cpu = run(source, {"t": sweep}, outs, "cpu", tmp)
    del os.environ["DLC_CPU_DENORMALS"]
    flushed = run(source, {"t": sweep}, outs, "cpu", tmp)
    ref = run(source, {"t": sweep}, outs, "reference", tmp)
for k in outs:
    a, f = cpu[k].astype(np.float64), flushed[k].astype(np.float64)
    subnormal = np.abs(a) < np.finfo(f32).tiny
    if not (np.all(f[subnormal] == 0) and np.array_equal(a[~subnormal], f[~subnormal],
                                                         equal_nan=True)):
        failures.append(f"transcendental.{k} (denormals flushed)")
for k in outs:
    a, b = cpu[k].astype(np.float64), ref[k].astype(np.float64)
    same_special = np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(
        a[np.isinf(b)], b[np.isinf(b)])
    normal = np.isfinite(b) & (np.abs(b) >= np.finfo(f32).tiny)
    if k in ("gl", "ge"):
        # 0.5 x (1 + tanh(u)) in float cancels for u << 0 whatever the tanh
        # (libm's too; erf's alike): compared where 1 + tanh(u) keeps its digits.
        normal &= sweep.astype(np.float64) > -2
    worst = float(np.max(np.abs(a[normal] - b[normal]) / np.abs(b[normal])))
    # below the normal range, within a few subnormal steps
    tiny = np.isfinite(b) & (np.abs(b) < np.finfo(f32).tiny)
    if k in ("gl", "ge"):
        tiny &= sweep.astype(np.float64) > -2
    tiny_ok = bool(np.all(np.abs(a[tiny] - b[tiny]) <= 4 * 1.4e-45))
    print(f"transcendental.{k}: max elementwise rel error = {worst:.2e}, specials "
          f"{'same' if same_special and tiny_ok else 'DIFFER'}")
    if worst > 1e-6 or not same_special or not tiny_ok:
        failures.append(f"transcendental.{k}")

assert not failures, failures
