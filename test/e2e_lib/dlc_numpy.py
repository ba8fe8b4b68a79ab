"""NumPy helpers for dlc's end-to-end tests.

* run_dlc / run_source: evaluate a model (a file, or .dlg text) with
  `dlc run` on the float64 oracle; return its outputs and every parameter's
  value (--save-params).  model_info parses `dlc check`.
* check_graph: run a generated one-graph model and compare each output with
  a NumPy reference; dlc_error: run a model that should fail.
* rel_error (||a - b|| / ||b||, Frobenius, float64), check_close,
  check_equal, ulp_distance.
* Reference ops, written plainly in float64: layer_norm, rms_norm,
  gelu_tanh, gelu_erf, sigmoid, silu, softmax, log_softmax, conv2d_nchw,
  max_pool2d, avg_pool2d, cross_entropy, mse; round_bf16 and wrap32 for
  bfloat16 rounding and int32 wrapping.
* SplitMix64 / splitmix64_init: the parameter initialisers as documented in
  oracle/kernels/Kernels.h, re-implemented with 64-bit unsigned arithmetic.
* load_safetensors / save_safetensors (.npz cannot hold bfloat16).

Nothing here imports dlc code: the tests compare dlc with an independent
implementation.  The `dlc` on PATH is the one tested (lit puts the build's
bin/ first).
"""
import json
import math
import os
import re
import subprocess
import tempfile
import textwrap

import numpy as np

#===----------------------------------------------------------------------===#
# Running dlc
#===----------------------------------------------------------------------===#


# The device `dlc run` uses here. The tests of this folder check the oracle
# against NumPy, so `reference` unless a test (e.g. cpu_*.py) says otherwise.
DEVICE = os.environ.get("DLC_E2E_DEVICE", "reference")


def _dim_args(dims):
    return [f"--dim={name}={size}" for name, size in (dims or {}).items()]


def _run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\nexited with {result.returncode}\n"
                           f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result.stdout


def model_info(model, dims=None):
    """Output names and the parameter count, parsed from `dlc check`."""
    text = _run(["dlc", "check", str(model)] + _dim_args(dims))
    outputs, section, num_params = [], None, None
    for line in text.splitlines():
        if line in ("inputs:", "outputs:"):
            section = line
        elif line.startswith("parameters:"):
            section = None
            num_params = int(line.split()[1].replace(",", ""))
        elif section == "outputs:" and line.startswith("  "):
            outputs.append(line.strip().split(":")[0])
    return {"outputs": outputs, "num_params": num_params}


def run_dlc(model, inputs, dims=None, seed=0, outputs=None, params_file="params.npz"):
    """Runs `dlc run MODEL` with the given inputs (name -> array).

    Returns (outputs, params): dicts name -> np.ndarray of every graph output
    (or only the names in `outputs`) and of every parameter, from
    --save-params (params_file "params.safetensors" allows bf16, which is
    returned as float32).  Raises RuntimeError with dlc's messages if it fails.
    """
    if outputs is None:
        outputs = model_info(model, dims)["outputs"]
    with tempfile.TemporaryDirectory(prefix="dlc-e2e-") as tmp:
        cmd = ["dlc", "run", str(model), f"--seed={seed}", f"--device={DEVICE}"] + _dim_args(dims)
        for name, array in inputs.items():
            path = os.path.join(tmp, f"in_{name}.npy")
            np.save(path, np.asarray(array))
            cmd.append(f"--input={name}=@{path}")
        for name in outputs:
            cmd.append(f"--output={name}=@{os.path.join(tmp, 'out_' + name + '.npy')}")
        params_path = os.path.join(tmp, params_file)
        cmd.append(f"--save-params={params_path}")
        _run(cmd)
        results = {name: np.load(os.path.join(tmp, f"out_{name}.npy")) for name in outputs}
        if params_file.endswith(".safetensors"):
            params = load_safetensors(params_path)
        else:
            with np.load(params_path) as archive:
                params = {key: archive[key] for key in archive.files}
    return results, params


_SAFETENSORS_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
                       "I64": np.int64, "I32": np.int32, "BOOL": np.bool_, "BF16": np.uint16}


def load_safetensors(path):
    """A .safetensors file as name -> array; BF16 widened exactly to float32."""
    with open(path, "rb") as f:
        header_size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(header_size))
        data = f.read()
    arrays = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=np.dtype(_SAFETENSORS_DTYPES[info["dtype"]]).newbyteorder("<"))
        if info["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        arrays[name] = a.reshape(info["shape"])
    return arrays


def save_safetensors(path, arrays, bf16=()):
    """Writes name -> array as .safetensors; names in `bf16` are float32
    arrays already rounded to bfloat16, stored as BF16."""
    header, blobs, offset = {}, [], 0
    names = {v: k for k, v in _SAFETENSORS_DTYPES.items() if k != "BF16"}
    for name, a in arrays.items():
        a = np.ascontiguousarray(a)
        if name in bf16:
            blob, dtype = (a.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes(), "BF16"
        else:
            blob, dtype = a.astype(a.dtype.newbyteorder("<")).tobytes(), names[a.dtype.type]
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def run_source(source, inputs, **kwargs):
    """As run_dlc, for a model given as .dlg text."""
    with tempfile.TemporaryDirectory(prefix="dlc-e2e-") as tmp:
        path = os.path.join(tmp, "model.dlg")
        with open(path, "w") as f:
            f.write(source)
        return run_dlc(path, inputs, **kwargs)


def example(name):
    """Path of examples/NAME.dlg in the source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "examples", name + ".dlg")


def randomise_constant_params(source):
    """The .dlg text with every `zeros` / `ones` parameter drawn at random
    instead (normal(std=0.1) / uniform(0.5, 1.5), distinct seeds), so that a
    test also exercises the biases and normalisation scales."""
    count = iter(range(1000, 2000))

    def replace(match):
        init = ("normal(mean=0, std=0.1" if match.group(2) == "zeros"
                else "uniform(low=0.5, high=1.5")
        return f"{match.group(1)}{init}, seed={next(count)})"

    return re.sub(r"^(\s*param\s+\w+\s*:[^=]*=\s*)(zeros|ones)[ \t]*$", replace, source,
                  flags=re.MULTILINE)


#===----------------------------------------------------------------------===#
# Comparing
#===----------------------------------------------------------------------===#


def rel_error(a, b):
    """||a - b|| / ||b||, Frobenius norm in float64 (0 when both are 0)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"
    diff = np.linalg.norm((a - b).ravel())
    norm = np.linalg.norm(b.ravel())
    if norm == 0:
        return 0.0 if diff == 0 else math.inf
    return diff / norm


def check_close(name, got, want, tol=1e-6):
    """Asserts rel_error(got, want) <= tol and prints the error."""
    err = rel_error(got, want)
    print(f"{name}: rel_error = {err:.3e}")
    assert err <= tol, f"{name}: rel_error {err:.3e} > {tol:g}"
    return err


def check_equal(name, got, want):
    """Asserts an exact match (integer and boolean results, exact copies);
    NaNs match NaNs."""
    got, want = np.asarray(got), np.asarray(want)
    nan_ok = want.dtype.kind == "f"  # NaN equals NaN here
    ok = got.shape == want.shape and np.array_equal(got, want, equal_nan=nan_ok)
    print(f"{name}: {'exact' if ok else 'DIFFERS'}")
    assert ok, f"{name}: got {got!r}, want {want!r}"


DLG_TYPES = {np.float64: "f64", np.float32: "f32", np.float16: "f16",
             np.int64: "i64", np.int32: "i32", np.int8: "i8", np.uint8: "u8",
             np.bool_: "i1"}


def dlg_type(dtype, shape):
    """The .dlg type of an array: dlg_type(np.float32, (2, 3)) = "f32[2, 3]"."""
    return f"{DLG_TYPES[np.dtype(dtype).type]}[{', '.join(map(str, shape))}]"


def graph_source(name, inputs, body, outputs):
    """`graph NAME(inputs) -> (outputs) { body }`; inputs and outputs map
    names to arrays (or anything with .dtype and .shape)."""
    params = ", ".join(f"{k}: {dlg_type(v.dtype, v.shape)}" for k, v in inputs.items())
    results = ", ".join(f"{k}: {dlg_type(v.dtype, v.shape)}" for k, v in outputs.items())
    return f"graph {name}({params}) -> ({results}) {{\n{textwrap.dedent(body).strip()}\n}}\n"


def check_graph(name, inputs, body, **want):
    """Runs a graph of `body` whose outputs are the keywords of `want`, and
    compares each output with its reference value:
      * a float64 reference: the output is f32 and must be within 1e-6
        relative error (the reference is computed without rounding);
      * any other dtype (integers, bool, float16, float32 built bit by bit):
        the output has that dtype and must be equal.
    Prints every comparison; returns the names of those that failed."""
    want = {k: np.asarray(v) for k, v in want.items()}
    declared = {k: np.empty(v.shape, np.float32 if v.dtype == np.float64 else v.dtype)
                for k, v in want.items()}
    source = graph_source(name, inputs, body, declared)
    try:
        got, _ = run_source(source, inputs)
    except RuntimeError as e:
        print(f"FAILED {name}: {e}")
        return [name]
    failed = []
    for k, v in want.items():
        try:
            assert got[k].dtype == declared[k].dtype, f"dtype {got[k].dtype}, want {declared[k].dtype}"
            if v.dtype == np.float64:
                check_close(f"{name}.{k}", got[k], v)
            else:
                check_equal(f"{name}.{k}", got[k], v)
        except AssertionError as e:
            print(f"FAILED {name}.{k}: {e}\n{source}")
            failed.append(f"{name}.{k}")
    return failed


def dlc_error(source, inputs=None, args=()):
    """Runs `dlc run` on .dlg text that should be rejected; returns
    (exit code, stderr)."""
    with tempfile.TemporaryDirectory(prefix="dlc-e2e-") as tmp:
        path = os.path.join(tmp, "model.dlg")
        with open(path, "w") as f:
            f.write(source)
        cmd = ["dlc", "run", path, f"--device={DEVICE}", "--random-inputs"] + list(args)
        for name, array in (inputs or {}).items():
            np.save(os.path.join(tmp, name + ".npy"), array)
            cmd.append(f"--input={name}=@{os.path.join(tmp, name + '.npy')}")
        result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return result.returncode, result.stderr


#===----------------------------------------------------------------------===#
# Reference ops (float64)
#===----------------------------------------------------------------------===#


def f64(x):
    return np.asarray(x, np.float64)


def layer_norm(x, scale, bias=None, axis=-1, eps=1e-5):
    """Normalises over dims [axis, rank) with the biased variance."""
    x = f64(x)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * f64(scale)
    return y if bias is None else y + f64(bias)


def rms_norm(x, scale, axis=-1, eps=1e-6):
    x = f64(x)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps) * f64(scale)


# GELU's definitions in forms that do not cancel for x < 0:
# 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)), 1 + erf(z) = erfc(-z).
def gelu_tanh(x):
    x = f64(x)
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def gelu_erf(x):
    x = f64(x)
    return 0.5 * x * _erfc(-x / math.sqrt(2))


def sigmoid(x):
    return 1 / (1 + np.exp(-f64(x)))


def silu(x):
    return f64(x) * sigmoid(x)


def softmax(x, axis=-1):
    x = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    x = f64(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _window(xp, kh, kw, out_h, out_w, stride, dilation=(1, 1)):
    """xp[..., kh*dh + i*sh, kw*dw + j*sw] for all output positions i, j."""
    sh, sw = stride
    h0, w0 = kh * dilation[0], kw * dilation[1]
    return xp[..., h0:h0 + sh * (out_h - 1) + 1:sh, w0:w0 + sw * (out_w - 1) + 1:sw]


def _pad_hw(x, padding, value):
    top, left, bottom, right = padding
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def conv2d_nchw(x, w, b=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """x [N, C, H, W], w [O, C/groups, KH, KW]; padding (top, left, bottom, right)."""
    x, w = f64(x), f64(w)
    n, c, h, wd = x.shape
    o, cg, kh_, kw_ = w.shape
    assert c == cg * groups and o % groups == 0
    top, left, bottom, right = padding
    out_h = (h + top + bottom - dilation[0] * (kh_ - 1) - 1) // stride[0] + 1
    out_w = (wd + left + right - dilation[1] * (kw_ - 1) - 1) // stride[1] + 1
    xp = _pad_hw(x, padding, 0.0)
    out = np.zeros((n, o, out_h, out_w))
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        for ic in range(cg):
            for kh in range(kh_):
                for kw in range(kw_):
                    patch = _window(xp[:, g * cg + ic], kh, kw, out_h, out_w, stride, dilation)
                    out[:, oc] += w[oc, ic, kh, kw] * patch
    if b is not None:
        out += f64(b)[None, :, None, None]
    return out


def max_pool2d(x, kernel, stride=None, padding=(0, 0, 0, 0)):
    """Padding contributes -inf."""
    x = f64(x)
    stride = stride or kernel
    top, left, bottom, right = padding
    out_h = (x.shape[2] + top + bottom - kernel[0]) // stride[0] + 1
    out_w = (x.shape[3] + left + right - kernel[1]) // stride[1] + 1
    xp = _pad_hw(x, padding, -np.inf)
    out = np.full(x.shape[:2] + (out_h, out_w), -np.inf)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            out = np.maximum(out, _window(xp, kh, kw, out_h, out_w, stride))
    return out


def avg_pool2d(x, kernel, stride=None, padding=(0, 0, 0, 0), count_include_pad=False):
    """Padding contributes 0; divides by KH*KW or by the real elements."""
    x = f64(x)
    stride = stride or kernel
    top, left, bottom, right = padding
    out_h = (x.shape[2] + top + bottom - kernel[0]) // stride[0] + 1
    out_w = (x.shape[3] + left + right - kernel[1]) // stride[1] + 1
    xp = _pad_hw(x, padding, 0.0)
    real = _pad_hw(np.ones_like(x), padding, 0.0)
    total = np.zeros(x.shape[:2] + (out_h, out_w))
    count = np.zeros_like(total)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            total += _window(xp, kh, kw, out_h, out_w, stride)
            count += _window(real, kh, kw, out_h, out_w, stride)
    return total / (kernel[0] * kernel[1] if count_include_pad else count)


def _reduce(values, reduction):
    if reduction == "none":
        return values
    if reduction == "sum":
        return values.sum()
    assert reduction == "mean"
    return values.mean()


def cross_entropy(logits, labels, reduction="mean", label_smoothing=0.0, ignore_index=-100):
    """PyTorch's F.cross_entropy with class-index targets: per position the
    cross-entropy against (1 - e) onehot(label) + e / C, 0 where the label
    is ignore_index; `mean` divides by the positions not ignored."""
    lsm = log_softmax(logits, axis=-1)
    labels = np.asarray(labels, np.int64)
    kept = labels != ignore_index
    picked = np.take_along_axis(lsm, np.where(kept, labels, 0)[..., None], axis=-1)[..., 0]
    e = label_smoothing
    losses = np.where(kept, -(1 - e) * picked - e * lsm.mean(axis=-1), 0.0)
    if reduction == "mean":
        return losses.sum() / kept.sum() if kept.sum() else np.float64("nan")
    return _reduce(losses, reduction)


def mse(pred, target, reduction="mean"):
    return _reduce((f64(pred) - f64(target)) ** 2, reduction)


def wrap32(values):
    """Python ints (exact) wrapped to int32 like hardware, as an int32 array."""
    return np.array([(int(v) + 2**31) % 2**32 - 2**31 for v in values], np.int32)


def round_bf16(x):
    """float32 values rounded to bfloat16 (round to nearest, ties to even),
    returned as float32: keep the top 16 bits of the float32 pattern."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1
    bits = ((bits + 0x7FFF + lsb) & 0xFFFF0000).astype(np.uint32)
    return bits.view(np.float32)


#===----------------------------------------------------------------------===#
# Parameter initialisers (oracle/kernels/Kernels.h)
#===----------------------------------------------------------------------===#

MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


class SplitMix64:
    """The generator, one draw at a time, with Python ints masked to 64 bits."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53

    def normal(self):
        u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2)


def splitmix64_draws(seed, count):
    """The first `count` outputs of SplitMix64(seed), as a uint64 array.

    The state after k steps is seed + k * GOLDEN_GAMMA (mod 2^64), so all
    draws can be computed at once; numpy's uint64 arithmetic wraps."""
    with np.errstate(over="ignore"):
        k = np.arange(1, count + 1, dtype=np.uint64)
        z = np.uint64(seed & MASK64) + k * np.uint64(GOLDEN_GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def splitmix64_uniform(seed, count):
    """`count` uniforms in [0, 1): (next() >> 11) * 2^-53."""
    return (splitmix64_draws(seed, count) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def splitmix64_normal(seed, count):
    """`count` normals, Box-Muller (cosine branch), two uniforms per normal."""
    u = splitmix64_uniform(seed, 2 * count)
    u1, u2 = u[0::2], u[1::2]
    return np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)


def fans(shape):
    """(fan_in, fan_out) as dlc computes them (weights [in, out] and OIHW)."""
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = int(np.prod(shape[2:]))
    return float(shape[1] * receptive), float(shape[0] * receptive)


def splitmix64_init(kind, shape, seed=0, mean=0.0, std=1.0, low=0.0, high=1.0,
                    dtype=np.float32):
    """The value dlc gives a parameter `kind(...)` of `shape`, in row-major
    order with one draw per element, rounded to `dtype`."""
    shape = tuple(shape)
    n = int(np.prod(shape))
    fan_in, fan_out = fans(shape)
    if kind == "zeros":
        values = np.zeros(n)
    elif kind == "ones":
        values = np.ones(n)
    elif kind == "normal":
        values = mean + std * splitmix64_normal(seed, n)
    elif kind == "uniform":
        values = low + (high - low) * splitmix64_uniform(seed, n)
    elif kind == "xavier":
        a = math.sqrt(6.0 / (fan_in + fan_out))
        values = -a + 2.0 * a * splitmix64_uniform(seed, n)
    elif kind == "he":
        values = math.sqrt(2.0 / fan_in) * splitmix64_normal(seed, n)
    else:
        raise ValueError(f"unknown initialiser {kind!r}")
    return values.reshape(shape).astype(dtype)


def ulp_distance(a, b):
    """Elementwise distance in units in the last place between two float32
    (or float64, float16) arrays of the same dtype; +0 and -0 are 0 apart."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.dtype.kind == "f"
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]

    def ordered(x):  # monotonic integer key: -magnitude for negative floats
        i = x.view(ints).astype(object if ints is np.int64 else np.int64)
        sign_bit = 1 << (8 * a.dtype.itemsize - 1)
        return np.where(i < 0, -(i + sign_bit), i)

    return np.abs(ordered(a) - ordered(b))
