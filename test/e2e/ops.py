# RUN: %python %s
# One small generated .dlg per op family, run by the oracle and compared with
# NumPy (see check_graph: a float64 reference is an f32 output that must match
# within 1e-6 relative, any other reference must match exactly).
import math
import sys

import numpy as np
import dlc_numpy as ref
from dlc_numpy import check_graph, dlc_error, f64, wrap32

rng = np.random.default_rng(7)
failures = []


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def ints(low, high, *shape, dtype=np.int32):
    return rng.integers(low, high, shape).astype(dtype)


def case(name, inputs, body, **want):
    failures.extend(check_graph(name, inputs, body, **want))


#--- softmax, log_softmax ------------------------------------------------------
x = randn(3, 5, 4)
big = randn(2, 6, scale=300)  # exp would overflow without the max shift
masked = np.where(np.tril(np.ones((4, 4), bool)), randn(4, 4), -np.inf).astype(np.float32)
case("softmax", {"x": x, "big": big, "masked": masked}, """
    a = softmax(x)
    b = softmax(x, axis=0)
    c = log_softmax(x, axis=1)
    d = log_softmax(x, axis=-3)
    e = softmax(big, axis=-1)
    f = log_softmax(big)
    g = softmax(masked)
""", a=ref.softmax(x, -1), b=ref.softmax(x, 0), c=ref.log_softmax(x, 1),
     d=ref.log_softmax(x, 0), e=ref.softmax(big, -1), f=ref.log_softmax(big, -1),
     g=ref.softmax(masked, -1))

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
    imean = reduce_mean(n, axes=[0])
""", total=f64(x).sum(), last=f64(x).sum(-1), mean=f64(x).mean((0, 2), keepdims=True),
     maxk=f64(x).max(1, keepdims=True), min2=f64(x).min((0, 1)), none=f64(x),
     isum=n.sum((1, 2), dtype=np.int32), imax=n.max(-1, keepdims=True),
     imean=np.trunc(n.mean(0)).astype(np.int32))  # integer means truncate toward zero

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
# f16 rounds directly from f64 (ties broken by 2^-40); bf16 goes through f32
# first, as documented, so 1 + 2^-8 + 2^-30 becomes a tie and rounds to 1.
x64 = np.concatenate([x.astype(np.float64), [1 + 2**-11 + 2**-40, 1 + 2**-11 - 2**-40, 2**-25 * 1.5,
                                             1 + 2**-8 + 2**-30]])
# bf16 hand-checked: 1 + 2^-8 is a tie (to even: 1); 1 + 3*2^-8 a tie (up to
# 1 + 2^-6); just above a tie rounds up; the largest float32 overflows to inf.
hand = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-9), np.finfo(np.float32).max],
                np.float32)
hand_bf16 = np.array([1, 1 + 2**-6, 1 + 2**-7, -1, np.inf], np.float32)
assert np.array_equal(ref.round_bf16(hand), hand_bf16)
xb = np.concatenate([hand, x, (x.view(np.uint32) & 0xFFFF0000 | 0x8000).view(np.float32)])
xi, n = randn(40, scale=100), ints(-1000, 1000, 10)
with np.errstate(over="ignore"):  # 70000 and beyond become inf in float16
    h, h64 = x.astype(np.float16), x64.astype(np.float16)
case("cast", {"x": x, "x64": x64, "xb": xb, "xi": xi, "n": n}, """
    h    = cast(x, to=f16)
    h64  = cast(x64, to=f16)
    back = cast(cast(x, to=f16), to=f32)
    bf   = cast(cast(xb, to=bf16), to=f32)
    bf64 = cast(cast(x64, to=bf16), to=f32)
    i    = cast(xi, to=i32)
    b    = cast(xi, to=i1)
    f    = cast(n, to=f32)
    d    = cast(cast(x, to=f64), to=f32)
""", h=h, h64=h64, back=h.astype(np.float32),
     bf=ref.round_bf16(xb), bf64=ref.round_bf16(x64.astype(np.float32)), i=np.trunc(xi).astype(np.int32), b=xi != 0, f=n.astype(np.float32), d=x)

#--- NaN, infinities, out-of-range conversions (exact, per the documented rules)
nan, inf = np.float32(np.nan), np.float32(np.inf)
x = np.array([nan, inf, -inf, 0, -0.0, 1.5, -2.5, 3e9, -3e9, 1e20, -1e20, 7e4], np.float32)
y = np.array([1, nan, 2, 0, 0, -1, inf, 2, 0, -inf, 1, 1], np.float32)
# to i32: NaN -> 0, truncate toward zero, saturate to int64, wrap to 32 bits
int_rule = [0, 2**63 - 1, -2**63, 0, 0, 1, -2, 3 * 10**9, -3 * 10**9, 2**63 - 1, -2**63, 70000]
with np.errstate(divide="ignore", invalid="ignore"):
    quotient = (f64(x) / f64(y)).astype(np.float32)
case("specials", {"x": x, "y": y}, """
    relu_  = relu(x)
    max_   = max(x, y)
    min_   = min(x, y)
    rmax   = reduce_max(x)
    div_   = x / y
    lt_    = lt(x, y)
    ne_    = ne(x, y)
    eq_    = eq(x, x)
    to_i32 = cast(x, to=i32)
    to_i1  = cast(x, to=i1)
    to_f16 = cast(x, to=f16)
""", relu_=np.maximum(x, 0), max_=np.maximum(x, y), min_=np.minimum(x, y), rmax=np.float32(nan),
     div_=quotient, lt_=x < y, ne_=x != y, eq_=x == x, to_i32=wrap32(int_rule), to_i1=x != 0,
     to_f16=np.array([nan, inf, -inf, 0, -0.0, 1.5, -2.5, inf, -inf, inf, -inf, inf], np.float16))

#--- f16 and bf16 arithmetic: each op rounds its float64 result once --------------
xh, wh, gh = (randn(*shape).astype(np.float16) for shape in [(3, 8), (8, 5), (8,)])
xb = randn(4, 6)
bf = lambda t: ref.round_bf16(np.asarray(t, np.float32))  # documented: f64 -> f32 -> bf16
case("half", {"xh": xh, "wh": wh, "gh": gh, "xb": xb}, """
    sm   = softmax(xh)
    mm   = xh @ wh
    ge   = gelu(xh, approximate="tanh")
    ln   = layer_norm(xh, gh)
    bsm  = cast(softmax(cast(xb, to=bf16)), to=f32)
    bsum = cast(reduce_sum(cast(xb, to=bf16), axes=[0]), to=f32)
""", sm=ref.softmax(xh).astype(np.float16), mm=(f64(xh) @ f64(wh)).astype(np.float16),
     ge=ref.gelu_tanh(xh).astype(np.float16), ln=ref.layer_norm(xh, gh).astype(np.float16),
     bsm=bf(ref.softmax(bf(xb))), bsum=bf(f64(bf(xb)).sum(0)))

#--- losses --------------------------------------------------------------------
logits, labels = randn(4, 6, scale=3), ints(0, 6, 4)
logits3, labels3 = randn(2, 3, 5), ints(0, 5, 2, 3, dtype=np.int64)
pred, target = randn(3, 4), randn(3, 4)
case("losses", {"logits": logits, "labels": labels, "logits3": logits3, "labels3": labels3,
                "pred": pred, "target": target}, """
    ce      = cross_entropy(logits, labels)
    ce_sum  = cross_entropy(logits, labels, reduction="sum")
    ce_none = cross_entropy(logits3, labels3, reduction="none")
    ce_mean = cross_entropy(logits3, labels3, reduction="mean")
    se      = mse(pred, target)
    se_sum  = mse(pred, target, reduction="sum")
    se_none = mse(pred, target, reduction="none")
""", ce=ref.cross_entropy(logits, labels), ce_sum=ref.cross_entropy(logits, labels, "sum"),
     ce_none=ref.cross_entropy(logits3, labels3, "none"), ce_mean=ref.cross_entropy(logits3, labels3, "mean"),
     se=ref.mse(pred, target), se_sum=ref.mse(pred, target, "sum"), se_none=ref.mse(pred, target, "none"))

#--- cross_entropy: PyTorch's label_smoothing and ignore_index -----------------
# Labels -100 (the default ignore_index) and 7 are ignored: loss 0, not
# counted by the mean; every position ignored gives NaN, as PyTorch.
logits, labels = randn(6, 5, scale=2), np.array([0, 4, -100, 2, 3, -100], np.int32)
logits3, labels3 = randn(2, 3, 4), np.array([[1, 7, 0], [7, 3, 7]], np.int64)
case("cross_entropy_smoothing_ignore", {"logits": logits, "labels": labels,
                                        "logits3": logits3, "labels3": labels3}, """
    smooth      = cross_entropy(logits, labels, label_smoothing=0.1)
    smooth_sum  = cross_entropy(logits, labels, reduction="sum", label_smoothing=0.25)
    smooth_none = cross_entropy(logits, labels, reduction="none", label_smoothing=0.1)
    ignored     = cross_entropy(logits3, labels3, ignore_index=7)
    both_none   = cross_entropy(logits3, labels3, reduction="none", ignore_index=7, label_smoothing=0.5)
    all_ignored = cross_entropy(logits3, labels3 * 0 + 7, ignore_index=7, label_smoothing=0.5)
""", smooth=ref.cross_entropy(logits, labels, label_smoothing=0.1),
     smooth_sum=ref.cross_entropy(logits, labels, "sum", label_smoothing=0.25),
     smooth_none=ref.cross_entropy(logits, labels, "none", label_smoothing=0.1),
     ignored=ref.cross_entropy(logits3, labels3, ignore_index=7),
     both_none=ref.cross_entropy(logits3, labels3, "none", label_smoothing=0.5, ignore_index=7),
     all_ignored=np.float32("nan"))

#--- i8 and u8: data only, moved and cast ---------------------------------------
# Float to i8/u8 truncates toward zero and wraps modulo 256 (NumPy's integer
# casts of the truncated value); i8/u8 to float is exact.
f = np.array([0.0, 1.9, -1.9, 127.5, 128.5, 255.7, 256.2, -129.3, -300.8, 1000.0], np.float32)
u = np.array([0, 1, 127, 128, 200, 255], np.uint8)
s8 = np.array([-128, -1, 0, 1, 100, 127], np.int8)
wrapped = np.trunc(f64(f)).astype(np.int64)
case("data_only_dtypes", {"f": f, "u": u, "s8": s8}, """
    to_u8   = cast(f, to=u8)
    to_i8   = cast(f, to=i8)
    from_u8 = cast(u, to=f32) / 255
    from_i8 = cast(s8, to=f32)
    u_as_i8 = cast(u, to=i8)
    i8_as_u8 = cast(s8, to=u8)
    moved   = concat(transpose(reshape(u, shape=[2, 3]), perm=[1, 0]), reshape(u, shape=[3, 2]), axis=1)
    picked  = gather(s8, iota(shape=[3], axis=0) * 2 + 1)
    padded  = pad(s8, low=[1], high=[2], value=-7)
""", to_u8=(wrapped % 256).astype(np.uint8), to_i8=((wrapped + 128) % 256 - 128).astype(np.int8),
     from_u8=f64(u) / 255, from_i8=s8.astype(np.float32), u_as_i8=u.astype(np.int8),
     i8_as_u8=s8.astype(np.uint8),
     moved=np.concatenate([u.reshape(2, 3).T, u.reshape(3, 2)], axis=1),
     picked=s8[[1, 3, 5]], padded=np.pad(s8, (1, 2), constant_values=-7))

#--- unary element-wise --------------------------------------------------------
x = np.concatenate([randn(60, scale=3), [-30, -10, 0, 10, 30]]).astype(np.float32)
case("unary", {"x": x}, """
    gelu_erf  = gelu(x)
    gelu_none = gelu(x, approximate="none")
    gelu_tanh = gelu(x, approximate="tanh")
    silu_     = silu(x)
    sigmoid_  = sigmoid(x)
    tanh_     = tanh(x)
    relu_     = relu(x)
    abs_      = abs(x)
    neg_      = -x
    exp_      = exp(x * 0.1)
    log_      = log(abs(x) + 0.5)
    sqrt_     = sqrt(abs(x))
    rsqrt_    = rsqrt(abs(x) + 1)
""", gelu_erf=ref.gelu_erf(x), gelu_none=ref.gelu_erf(x), gelu_tanh=ref.gelu_tanh(x),
     silu_=ref.silu(x), sigmoid_=ref.sigmoid(x), tanh_=np.tanh(f64(x)), relu_=np.maximum(f64(x), 0),
     abs_=np.abs(f64(x)), neg_=-f64(x), exp_=np.exp(f64(x) * np.float32(0.1)),
     log_=np.log(np.abs(f64(x)) + 0.5), sqrt_=np.sqrt(np.abs(f64(x))), rsqrt_=1 / np.sqrt(np.abs(f64(x)) + 1))

#--- binary element-wise, operators, scalars -----------------------------------
a, b, c = randn(3, 4), randn(4), randn(3, 1)
base, expo = rng.uniform(0.1, 3, (3, 4)).astype(np.float32), randn(3, 4)
case("binary", {"a": a, "b": b, "c": c, "base": base, "expo": expo}, """
    arith  = a + b * c - a / (b + 3)
    left   = a - b - c
    scal   = 2 * a + 1 - 0.5 / (abs(a) + 1)
    pow_   = pow(base, expo)
    sq     = pow(a, 2)
    maxmin = max(a, c) + min(b, 0)
""", arith=f64(a) + f64(b) * c - a / (f64(b) + 3), left=f64(a) - b - c,
     scal=2 * f64(a) + 1 - 0.5 / (np.abs(f64(a)) + 1), pow_=f64(base) ** f64(expo), sq=f64(a) ** 2,
     maxmin=np.maximum(f64(a), c) + np.minimum(f64(b), 0))


def trunc_div(p, q):  # integer division rounding toward zero, in int64
    p, q = p.astype(np.int64), q.astype(np.int64)
    return np.sign(p) * np.sign(q) * (np.abs(p) // np.abs(q))


# (Products beyond 2^53 before wrapping are in int32_overflow.py.)
p = np.array([7, -7, 7, -7, 0, 1, -1, 2**31 - 1, -2**31, -2**31, 13, -13], np.int32)
q = np.array([2, 2, -2, -2, 5, 3, 3, 2, -1, 1, 13, 4], np.int32)
n, e = ints(-5, 6, 4, 5), ints(0, 14, 4, 5)
big = np.array([2**31 - 1, -2**31, 65536, 46341, -123456], np.int32)
bases, exps = np.array([3, -3, 2, -2, 46341], np.int32), np.array([25, 33, 31, 32, 2], np.int32)
case("integer", {"p": p, "q": q, "n": n, "e": e, "big": big, "bases": bases, "exps": exps}, """
    div_   = p / q
    pow_   = pow(n, e)
    sq     = pow(n, 2)
    mix    = (n * 3 - 7) / 2
    neg_   = -p
    add_   = big + 1
    sub_   = big - 2
    sum_   = reduce_sum(big)
    mul_   = big * 3
    sqr    = slice(big, starts=[2], ends=[5]) * slice(big, starts=[2], ends=[5])
    powbig = pow(bases, exps)
""", div_=trunc_div(p, q).astype(np.int32),
     pow_=(n.astype(np.int64) ** e).astype(np.int32), sq=n * n,
     mix=trunc_div(n * 3 - 7, np.full_like(n, 2)).astype(np.int32),
     neg_=wrap32(-int(v) for v in p), add_=wrap32(int(v) + 1 for v in big),
     sub_=wrap32(int(v) - 2 for v in big), sum_=wrap32([sum(int(v) for v in big)])[0],
     mul_=wrap32(int(v) * 3 for v in big), sqr=wrap32(int(v) ** 2 for v in big[2:]),
     powbig=wrap32(int(b) ** int(k) for b, k in zip(bases, exps)))

#--- ops the .dlg vocabulary reaches through their ODS alone -------------------
x = np.concatenate([randn(40, scale=3), [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]]).astype(np.float32)
p = randn(3, 4, 5)
erf = np.vectorize(math.erf, otypes=[np.float64])
case("ods_ops", {"x": x, "p": p}, """
    sin_   = sin(x)
    cos_   = cos(x)
    erf_   = erf(x)
    atan_  = atan(x)
    floor_ = floor(x)
    ceil_  = ceil(x)
    round_ = round(x)
    chain  = floor(erf(sin(x)))
    prod   = reduce_prod(p, axes=[1])
    ge0    = compare(x, 0, predicate=ge)
""", sin_=np.sin(f64(x)), cos_=np.cos(f64(x)), erf_=erf(f64(x)), atan_=np.arctan(f64(x)),
     floor_=np.floor(f64(x)), ceil_=np.ceil(f64(x)), round_=np.round(f64(x)),  # halves to even
     chain=np.floor(erf(np.sin(f64(x)))), prod=f64(p).prod(1), ge0=x >= 0)

#--- matmul --------------------------------------------------------------------
a, b, bt, at = randn(2, 1, 3, 4), randn(5, 4, 2), randn(5, 2, 4), randn(4, 3)
case("matmul", {"a": a, "b": b, "bt": bt, "at": at}, """
    batched = a @ b
    tb      = matmul(a, bt, transpose_b=true)
    ta      = matmul(at, b, transpose_a=true)
    both    = matmul(at, bt, transpose_a=true, transpose_b=true)
""", batched=f64(a) @ f64(b), tb=f64(a) @ f64(bt).transpose(0, 2, 1), ta=f64(at).T @ f64(b),
     both=f64(at).T @ f64(bt).transpose(0, 2, 1))

#--- errors: exit 2 for what the frontend rejects, 3 for data-dependent faults ---
n4, f4, l3 = np.arange(4, dtype=np.int32), np.ones(4, np.float32), np.ones((2, 4), np.float32)
ERRORS = [  # (what, signature, statement, inputs, exit code, message)
    ("negative slice step", "x: f32[4]) -> (y: f32[2]", "slice(x, starts=[3], ends=[0], steps=[-2])",
     {}, 2, "steps must be at least 1"),
    ("integer division by zero", "n: i32[4]) -> (y: i32[4]", "n / (n - 1)", {"n": n4}, 3, "division by zero"),
    ("gather index past the end", "x: f32[4], n: i32[4]) -> (y: f32[4]", "gather(x, n + 1)",
     {"x": f4, "n": n4}, 3, "out of range"),
    ("gather index before the start", "x: f32[4], n: i32[4]) -> (y: f32[4]", "gather(x, n - 5)",
     {"x": f4, "n": n4}, 3, "out of range"),
    ("negative embedding id", "t: f32[2, 4], n: i32[4]) -> (y: f32[4, 4]", "embedding(t, n - 1)",
     {"t": l3, "n": n4}, 3, "out of range"),
    ("label out of range", "t: f32[2, 4], n: i32[2]) -> (y: f32[]", "cross_entropy(t, n + 3)",
     {"t": l3, "n": np.array([0, 1], np.int32)}, 3, "range"),
    ("label out of range beside an ignored one", "t: f32[2, 4], n: i32[2]) -> (y: f32[]",
     "cross_entropy(t, n + 4, ignore_index=4)", {"t": l3, "n": np.array([0, 1], np.int32)}, 3,
     "label 5 at position 1 out of range"),
    ("label smoothing of 1", "t: f32[2, 4], n: i32[2]) -> (y: f32[]",
     "cross_entropy(t, n, label_smoothing=1)", {"t": l3, "n": np.array([0, 1], np.int32)}, 2,
     "label_smoothing must be in [0, 1), got 1"),
]
for what, signature, statement, inputs, want_code, message in ERRORS:
    # A data-dependent fault is the compiled kernels' too (their data checks).
    for device in ["reference"] + (["cpu", "cuda-emu"] if want_code == 3 else []):
        ref.DEVICE = device
        code, err = dlc_error(f"graph g({signature}) {{\n  y = {statement}\n}}\n", inputs)
        first = err.strip().splitlines()[0] if err.strip() else ""
        print(f"{what} ({device}): exit {code}: {first}")
        if code != want_code or message not in err:
            print(f"FAILED {what} on {device}: expected exit {want_code} and {message!r}")
            failures.append(f"{what} ({device})")
ref.DEVICE = "reference"

if failures:
    print(f"{len(failures)} case(s) failed: {', '.join(failures)}")
    sys.exit(1)
print("all cases passed")
