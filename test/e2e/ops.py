# RUN: %python %s
# One small generated .dlg per op family, run by the oracle and compared with
# NumPy.  A reference given in float64 means an f32 output that must match
# within 1e-6 relative; a reference of any other dtype (integers, booleans,
# float16, or float32 built bit by bit) must match exactly.
import math
import sys
import textwrap

import numpy as np
import dlc_numpy as ref
from dlc_numpy import check_close, check_equal, f64, run_source

rng = np.random.default_rng(7)
DLG_TYPES = {np.float64: "f64", np.float32: "f32", np.float16: "f16",
             np.int64: "i64", np.int32: "i32", np.bool_: "i1"}
failures = []


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def ints(low, high, *shape, dtype=np.int32):
    return rng.integers(low, high, shape).astype(dtype)


def dlg_type(dtype, shape):
    return f"{DLG_TYPES[np.dtype(dtype).type]}[{', '.join(map(str, shape))}]"


def case(name, inputs, body, **want):
    """Runs `graph NAME(inputs) -> (want's names)` with `body` and compares
    every output with its reference; records a failure instead of stopping."""
    want = {k: np.asarray(v) for k, v in want.items()}
    params = ", ".join(f"{k}: {dlg_type(v.dtype, v.shape)}" for k, v in inputs.items())
    results = ", ".join(f"{k}: {dlg_type(np.float32 if v.dtype == np.float64 else v.dtype, v.shape)}"
                        for k, v in want.items())
    source = f"graph {name}({params}) -> ({results}) {{\n{textwrap.dedent(body).strip()}\n}}\n"
    try:
        got, _ = run_source(source, inputs)
        for k, v in want.items():
            if v.dtype == np.float64:
                check_close(f"{name}.{k}", got[k], v)
            else:
                assert got[k].dtype == v.dtype, f"{name}.{k}: dtype {got[k].dtype}, want {v.dtype}"
                check_equal(f"{name}.{k}", got[k], v)
    except (AssertionError, RuntimeError) as e:
        print(f"FAILED {name}:\n{source}{e}")
        failures.append(name)


#--- softmax, log_softmax ------------------------------------------------------
x = randn(3, 5, 4)
big = randn(2, 6, scale=300)  # exp would overflow without the max shift
case("softmax", {"x": x, "big": big}, """
    a = softmax(x)
    b = softmax(x, axis=0)
    c = log_softmax(x, axis=1)
    d = log_softmax(x, axis=-3)
    e = softmax(big, axis=-1)
    f = log_softmax(big)
""", a=ref.softmax(x, -1), b=ref.softmax(x, 0), c=ref.log_softmax(x, 1),
     d=ref.log_softmax(x, 0), e=ref.softmax(big, -1), f=ref.log_softmax(big, -1))

#--- layer_norm, rms_norm ------------------------------------------------------
x, g, b, g2 = randn(2, 3, 8), randn(8), randn(8), randn(3, 8)
case("norms", {"x": x, "g": g, "b": b, "g2": g2}, """
    a = layer_norm(x, g, b)
    c = layer_norm(x, g2, axis=1, epsilon=0.001)
    d = rms_norm(x, g)
    e = rms_norm(x, g2, axis=-2, epsilon=0.1)
""", a=ref.layer_norm(x, g, b, -1, 1e-5), c=ref.layer_norm(x, g2, None, 1, 1e-3),
     d=ref.rms_norm(x, g, -1, 1e-6), e=ref.rms_norm(x, g2, -2, 0.1))

#--- conv2d --------------------------------------------------------------------
x = randn(2, 4, 9, 8)
w, bias, wg, wd = randn(6, 4, 3, 3), randn(6), randn(6, 2, 3, 2), randn(8, 1, 3, 3)
conv = ref.conv2d_nchw
case("conv2d", {"x": x, "w": w, "bias": bias, "wg": wg, "wd": wd}, """
    plain   = conv2d(x, w, bias)
    strided = conv2d(x, w, bias, stride=[2, 1], padding=[1, 2], dilation=[1, 2])
    asym    = conv2d(x, w, stride=2, padding=[0, 1, 2, 3], dilation=2)
    grouped = conv2d(x, wg, bias, groups=2, padding=1)
    depth   = conv2d(x, wd, groups=4, stride=[1, 3])
""", plain=conv(x, w, bias),
     strided=conv(x, w, bias, stride=(2, 1), padding=(1, 2, 1, 2), dilation=(1, 2)),
     asym=conv(x, w, stride=(2, 2), padding=(0, 1, 2, 3), dilation=(2, 2)),
     grouped=conv(x, wg, bias, padding=(1, 1, 1, 1), groups=2),
     depth=conv(x, wd, stride=(1, 3), groups=4))

#--- max_pool2d, avg_pool2d ----------------------------------------------------
x = randn(2, 3, 7, 6) - 10  # all negative: padding must not win a max
case("pooling", {"x": x}, """
    m1 = max_pool2d(x, kernel=2)
    m2 = max_pool2d(x, kernel=[3, 2], stride=[2, 1], padding=[1, 0])
    m3 = max_pool2d(x, kernel=3, stride=2, padding=[1, 1, 0, 0])
    a1 = avg_pool2d(x, kernel=2)
    a2 = avg_pool2d(x, kernel=3, stride=2, padding=1, count_include_pad=true)
    a3 = avg_pool2d(x, kernel=3, stride=2, padding=1, count_include_pad=false)
    a4 = avg_pool2d(x, kernel=[2, 3], stride=[1, 2], padding=[0, 2, 1, 0])
""", m1=ref.max_pool2d(x, (2, 2)),
     m2=ref.max_pool2d(x, (3, 2), (2, 1), (1, 0, 1, 0)),
     m3=ref.max_pool2d(x, (3, 3), (2, 2), (1, 1, 0, 0)),
     a1=ref.avg_pool2d(x, (2, 2)),
     a2=ref.avg_pool2d(x, (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=True),
     a3=ref.avg_pool2d(x, (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=False),
     a4=ref.avg_pool2d(x, (2, 3), (1, 2), (0, 2, 1, 0)))

#--- reductions ----------------------------------------------------------------
x, n = randn(3, 4, 5), ints(-50, 50, 3, 4, 5)
case("reductions", {"x": x, "n": n}, """
    total = reduce_sum(x)
    last  = reduce_sum(x, axes=[-1])
    mean  = reduce_mean(x, axes=[0, -1], keepdims=true)
    maxk  = reduce_max(x, axes=1, keepdims=true)
    min2  = reduce_min(x, axes=[-2, -3])
    none  = reduce_sum(x, axes=[])
    isum  = reduce_sum(n, axes=[1, 2])
    imax  = reduce_max(n, axes=[-1], keepdims=true)
""", total=f64(x).sum(), last=f64(x).sum(-1), mean=f64(x).mean((0, 2), keepdims=True),
     maxk=f64(x).max(1, keepdims=True), min2=f64(x).min((0, 1)), none=f64(x),
     isum=n.sum((1, 2), dtype=np.int32), imax=n.max(-1, keepdims=True))

#--- gather, embedding ---------------------------------------------------------
x, table = randn(5, 3), randn(10, 4)
i0 = np.array([[-1, 0], [2, -5]], np.int32)
i1 = np.array([-1, -3, 0, 2, 1], np.int64)
ids = ints(0, 10, 2, 3)
case("gather", {"x": x, "i0": i0, "i1": i1, "table": table, "ids": ids}, """
    rows = gather(x, i0)
    cols = gather(x, i1, axis=-1)
    emb  = embedding(table, ids)
""", rows=f64(np.take(x, i0, axis=0)), cols=f64(np.take(x, i1, axis=1)), emb=f64(table[ids]))

#--- pad, slice, concat, transpose, broadcast_to, reshape ----------------------
x, n, s = randn(6, 7), ints(-9, 9, 2, 3), randn()
case("movement", {"x": x, "n": n, "s": s}, """
    padded  = pad(x, low=[1, 0], high=[0, 2], value=-1.5)
    ipad    = pad(n, low=[0, 3], high=[2, 1])
    rows    = slice(x, starts=[1], ends=[-1])
    strided = slice(x, starts=[-5, 0], ends=[100, 7], axes=[1, 0], steps=[2, 3])
    tail    = slice(x, starts=[-100], ends=[-2], axes=[-1], steps=[3])
    empty   = slice(x, starts=[5], ends=[2])
    cat     = concat(x, slice(x, starts=[0], ends=[2], axes=[1]), x, axis=-1)
    cat0    = concat(n, n, axis=0)
    perm    = transpose(reshape(x, shape=[3, 2, 7]), perm=[2, 0, 1])
    rev     = transpose(reshape(x, shape=[3, -1, 7]))
    negperm = transpose(reshape(x, shape=[2, 3, 7]), perm=[-1, 0, 1])
    bcast   = broadcast_to(slice(x, starts=[0], ends=[1], axes=[1]), shape=[2, 6, 4])
    scalar  = broadcast_to(s, shape=[2, 2])
""", padded=f64(np.pad(x, ((1, 0), (0, 2)), constant_values=-1.5)),
     ipad=np.pad(n, ((0, 2), (3, 1))), rows=f64(x[1:-1]), strided=f64(x[0:7:3, -5:100:2]),
     tail=f64(x[:, -100:-2:3]), empty=f64(x[5:2]), cat=f64(np.concatenate([x, x[:, :2], x], -1)),
     cat0=np.concatenate([n, n], 0), perm=f64(x.reshape(3, 2, 7).transpose(2, 0, 1)),
     rev=f64(x.reshape(3, 2, 7).T), negperm=f64(x.reshape(2, 3, 7).transpose(2, 0, 1)),
     bcast=f64(np.broadcast_to(x[:, :1], (2, 6, 4))), scalar=f64(np.broadcast_to(s, (2, 2))))

#--- iota, compare, select -----------------------------------------------------
a, b = np.round(randn(4, 5)), np.round(randn(4, 5))  # small integers: many ties
c = randn(4, 1)
case("compare_select", {"a": a, "b": b, "c": c}, """
    eq_ = eq(a, b)
    ne_ = ne(a, b)
    lt_ = lt(a, b)
    le_ = le(a, b)
    gt_ = gt(a, 0.5)
    ge_ = ge(c, b)
    pick  = select(gt(a, b), a, b)
    relu_ = select(lt(a, 0), 0, a)
    bsel  = select(gt(c, 0), a, c)
    rows  = iota(shape=[3, 4], axis=0, dtype=i32)
    cols  = iota(shape=[3, 4], axis=-1)
    fcols = iota(shape=[2, 3], axis=1, dtype=f32)
""", eq_=a == b, ne_=a != b, lt_=a < b, le_=a <= b, gt_=a > 0.5, ge_=c >= b,
     pick=f64(np.where(a > b, a, b)), relu_=f64(np.where(a < 0, 0, a)),
     bsel=f64(np.where(c > 0, a, c)),
     rows=np.broadcast_to(np.arange(3, dtype=np.int32)[:, None], (3, 4)),
     cols=np.broadcast_to(np.arange(4, dtype=np.int64), (3, 4)),
     fcols=np.broadcast_to(np.arange(3.0), (2, 3)))

#--- cast ----------------------------------------------------------------------
special = np.array([65504, 65519.99, 65520, 70000, -70000, 1e-8, 6e-8, 2.9802322e-08,
                    -2.9802323e-08, 1 + 2**-11, 1 + 3 * 2**-11, 0.1, -0.0, 3.14159], np.float32)
x = np.concatenate([special, randn(50), randn(20, scale=1000), randn(20, scale=1e-5)])
x64 = np.concatenate([x.astype(np.float64), [1 + 2**-11 + 2**-40, 1 + 2**-11 - 2**-40, 2**-25 * 1.5]])
# bf16 hand-checked: 1 + 2^-8 is a tie (to even: 1); 1 + 3*2^-8 a tie (up to
# 1 + 2^-6); just above a tie rounds up; the largest float32 overflows to inf.
hand = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-9), np.finfo(np.float32).max],
                np.float32)
hand_bf16 = np.array([1, 1 + 2**-6, 1 + 2**-7, -1, np.inf], np.float32)
assert np.array_equal(ref.round_bf16(hand), hand_bf16)
xb = np.concatenate([hand, x, (x.view(np.uint32) & 0xFFFF0000 | 0x8000).view(np.float32)])
xi = (randn(40) * 100)
case("cast", {"x": x, "x64": x64, "xb": xb, "xi": xi, "n": ints(-1000, 1000, 10)}, """
    h    = cast(x, to=f16)
    h64  = cast(x64, to=f16)
    back = cast(cast(x, to=f16), to=f32)
    bf   = cast(cast(xb, to=bf16), to=f32)
    i    = cast(xi, to=i32)
    b    = cast(xi, to=i1)
    f    = cast(n, to=f32)
    d    = cast(x, to=f64)
""", h=x.astype(np.float16), h64=x64.astype(np.float16), back=x.astype(np.float16).astype(np.float32),
     bf=ref.round_bf16(xb), i=np.trunc(xi).astype(np.int32), b=xi != 0,
     f=ints(-1000, 1000, 0) if False else None, d=x.astype(np.float64))
