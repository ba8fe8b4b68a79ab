#!/usr/bin/env python3
"""Writes the malformed-input catalogue into a folder.

Usage: gen.py DIR [--dlc PATH]

Each case is a command line run in DIR (argv[0] 'dlc' is the tool under
test), the exit codes it may end with (2: bad input or usage, 3: a runtime
fault such as an allocation too large) and a regular expression its output
must match, one that shows where the input is wrong: file:line:col for .dlg
text, the node (name and op) or initializer for ONNX, the section or file and
byte offset for binary files, the flag for command lines. The cases go to
DIR/cases.json; run.py runs them. Every case is generated, none is checked
in: numpy and the onnx package build the files (scripts/setup.sh installs
both).
"""
import io
import json
import os
import re
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = []
DLC = "dlc"  # the tool that compiles the modules the .dlcm cases corrupt


def case(cls, name, argv, regex, exit=(2,)):
    CASES.append({"class": cls, "name": f"{cls}/{name}", "argv": argv,
                  "exit": list(exit), "regex": regex})


def write(d, name, data):
    path = os.path.join(d, name)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return name


def loc(fname, line=None):
    """file:line:col of a .dlg error (on `line` when given)."""
    return re.escape(fname) + (f":{line}" if line else r":\d+") + r":\d+: error: "


# ---------------------------------------------------------------- .dlg text

BASE_DLG = """graph g(x: f32[2, 3]) -> (y: f32[2, 4]) {
  param w: f32[3, 4] = he(seed=1)
  param b: f32[4] = zeros
  h = x @ w + b
  y = relu(h)
}
"""


def dlg_graph(body, inputs="x: f32[2, 3]", outputs="y: f32[2, 3]"):
    return f"graph g({inputs}) -> ({outputs}) {{\n" + "".join(
        f"  {line}\n" for line in body) + "}\n"


def gen_dlg(d):
    # Truncation at every third byte: every prefix lacks the closing brace.
    for off in range(0, len(BASE_DLG) - 2, 3):
        f = write(d, f"trunc{off}.dlg", BASE_DLG[:off])
        case("dlg-truncation", f"at{off}", ["dlc", "check", f], loc(f))
    # A stray byte (control, non-ASCII, punctuation) inserted at a position.
    positions = [0, 5, 8, 12, 20, 30, 45, 52, 60, 70, 80, 95, 104, 110, 118, 125]
    junk = ["\x00", "\xff", "$", "`", "\x07", "?"]
    raw = BASE_DLG.encode()
    for i, pos in enumerate(positions):
        for j in (i % len(junk), (i + 3) % len(junk)):
            ch = junk[j].encode("latin-1")
            f = write(d, f"junk{pos}_{j}.dlg", raw[:pos] + ch + raw[pos:])
            case("dlg-stray-byte", f"at{pos}-{ord(ch)}", ["dlc", "check", f], loc(f))

    # Bad identifiers and names.
    bad_ids = {
        "digit-start": dlg_graph(["1y = relu(x)", "y = 1y"]),
        "undefined-name": dlg_graph(["y = relu(z)"]),
        "unknown-op": dlg_graph(["y = frobnicate(x)"]),
        "misspelt-op": dlg_graph(["y = rleu(x)"]),
        "unknown-dtype": dlg_graph(["y = relu(x)"], inputs="x: f31[2, 3]"),
        "unknown-cast": dlg_graph(["y = cast(x, to=f7)"]),
        "op-as-value": dlg_graph(["y = relu"]),
        "redefined": dlg_graph(["y = relu(x)", "y = relu(x)"]),
        "output-undefined": dlg_graph(["z = relu(x)"]),
        "input-twice": dlg_graph(["y = relu(x)"], inputs="x: f32[2, 3], x: f32[2, 3]"),
        "unicode-name": dlg_graph(["\u00e9 = relu(x)", "y = relu(\u00e9)"]),
        "keyword-unknown": dlg_graph(["y = softmax(x, dim=1)"]),
        "init-unknown": dlg_graph(["param w: f32[3] = gaussian", "y = relu(x)"]),
        "empty-name": dlg_graph([" = relu(x)", "y = relu(x)"]),
        "graph-no-name": "graph (x: f32[2]) -> (y: f32[2]) {\n  y = relu(x)\n}\n",
        "train-unknown-graph": BASE_DLG + "train h() {\n  loss = reduce_sum(y)\n  optimizer = sgd(lr=0.1)\n}\n",
        "string-unterminated": dlg_graph(['y = gelu(x, approximate="tanh)']),
        "bad-escape": dlg_graph(['y = gelu(x, approximate="ta\\qnh")']),
    }
    for n, text in bad_ids.items():
        f = write(d, f"id-{n}.dlg", text)
        case("dlg-bad-identifier", n, ["dlc", "check", f], loc(f))

    # Negative, zero-stride, huge dimensions in types.
    dims = {
        "negative": "f32[2, -3]",
        "negative-first": "f32[-1]",
        "huge-product": "f32[1099511627776, 1099511627776]",
        "int64-max": "f32[9223372036854775807, 2]",
        "over-int64": "f32[9223372036854775808]",
        "huge-three": "f32[4194304, 4194304, 4194304]",
        "float-dim": "f32[2.5, 3]",
        "rank-17": "f32[" + ", ".join(["1"] * 17) + "]",
        "rank-40": "f32[" + ", ".join(["1"] * 40) + "]",
    }
    for n, ty in dims.items():
        f = write(d, f"dim-{n}.dlg", dlg_graph(["y = relu(x)"], inputs=f"x: {ty}", outputs=f"y: {ty}"))
        case("dlg-bad-dims", n, ["dlc", "check", f], loc(f))
    # The same in a parameter.
    for n, ty in [("param-huge", "f32[1099511627776, 1099511627776]"),
                  ("param-int64-max", "f32[9223372036854775807]"),
                  ("param-rank-17", "f32[" + ", ".join(["1"] * 17) + "]")]:
        f = write(d, f"dim-{n}.dlg", dlg_graph([f"param w: {ty} = zeros", "y = relu(x)"]))
        case("dlg-bad-dims", n, ["dlc", "check", f], loc(f))

    # Element counts and shape arithmetic that overflow int64.
    big = 2 ** 62
    overflow = {
        "reshape-wrap": (["y = reshape(x, shape=[4611686018427387904, 4, 0])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "reshape-infer-wrap": (["y = reshape(x, shape=[-1, 4611686018427387904, 4])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "broadcast-wrap": (["y = broadcast_to(x, shape=[4611686018427387904, 4, 3])"], "x: f32[3]", "y: f32[3]"),
        "broadcast-huge": (["y = broadcast_to(x, shape=[1099511627776, 1099511627776])"], "x: f32[1]", "y: f32[1]"),
        "pad-wrap": (["y = pad(x, low=[0, 9223372036854775807], high=[0, 9223372036854775807])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "pad-high-max": (["y = pad(x, low=[0, 0], high=[0, 9223372036854775807])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "pad-low-min": (["y = pad(x, low=[0, -9223372036854775807], high=[0, 0])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "iota-huge": (["y = iota(shape=[4611686018427387904, 4])"], "x: f32[2]", "y: f32[2]"),
        "iota-wrap": (["y = iota(shape=[4294967296, 4294967296, 4])"], "x: f32[2]", "y: f32[2]"),
        "slice-steps-huge": (["y = slice(x, starts=[0, 0], ends=[2, 3], steps=[1, 0])"], "x: f32[2, 3]", "y: f32[2, 3]"),
        "conv-dilation-wrap": (["param w: f32[1, 1, 3, 3] = zeros",
                                "y = conv2d(x, w, dilation=[4611686018427387904, 1])"],
                               "x: f32[1, 1, 5, 5]", "y: f32[1, 1, 3, 3]"),
        "conv-padding-wrap": (["param w: f32[1, 1, 3, 3] = zeros",
                               "y = conv2d(x, w, padding=[9223372036854775807, 0])"],
                              "x: f32[1, 1, 5, 5]", "y: f32[1, 1, 3, 3]"),
        "pool-padding-wrap": (["y = max_pool2d(x, kernel=2, padding=9223372036854775807)"],
                              "x: f32[1, 1, 4, 4]", "y: f32[1, 1, 2, 2]"),
        "integer-literal-over": (["y = reshape(x, shape=[99999999999999999999])"], "x: f32[2, 3]", "y: f32[6]"),
        "concat-wrap": (["y = concat(broadcast_to(x, shape=[4611686018427387904]), x, axis=0)"], "x: f32[1]", "y: f32[1]"),
    }
    for n, (body, ins, outs) in overflow.items():
        f = write(d, f"ovf-{n}.dlg", dlg_graph(body, inputs=ins, outputs=outs))
        case("int64-overflow", n, ["dlc", "check", f], loc(f, len(body) + 1))
    # Python slicing with steps near 2^63: valid, one element (the count
    # must not wrap when the step is added).
    f = write(d, "ovf-slice-step-max.dlg", dlg_graph(
        ["y = slice(x, starts=[0, -9223372036854775807], ends=[2, 9223372036854775807], steps=[1, 9223372036854775807])"],
        outputs="y: f32[2, 1]"))
    case("int64-overflow", "slice-step-max-check", ["dlc", "check", f], r"y: f32\[2, 1\]", exit=(0,))
    # FLOPs past 2^63: a 2^22-square matmul of a broadcast (2^67 FLOPs).
    f = write(d, "ovf-matmul-flops.dlg", dlg_graph(["a = broadcast_to(x, shape=[4194304, 4194304])", "y = a @ a"],
                                                   inputs="x: f32[1]", outputs="y: f32[4194304, 4194304]"))
    case("int64-overflow", "matmul-flops-check", ["dlc", "check", f],
         r"FLOPs per run: over 2\^63 ", exit=(0,))
    case("absurd-allocation", "matmul-2^44-run", ["dlc", "run", f, "--random-inputs", "--device", "reference"],
         r"4194304|\bbytes\b|GiB|TiB", exit=(3,))

    # Symbolic dimensions bound on the command line past the limits.
    sym = dlg_graph(["y = relu(x)"], inputs="x: f32[N, N, 8]", outputs="y: f32[N, N, 8]")
    f = write(d, "sym.dlg", sym)
    for n, v in [("2^40", 2 ** 40), ("2^62", 2 ** 62), ("int64-max", 2 ** 63 - 1), ("2^31", 2 ** 31)]:
        case("int64-overflow", f"dim-flag-{n}", ["dlc", "check", f, "--dim", f"N={v}"],
             loc(f) + "|N")

    # Cycles / use before definition.
    cyc = {
        "self": ["y = relu(y)"],
        "pair": ["a = relu(b)", "b = relu(a)", "y = a"],
        "later": ["y = relu(a)", "a = relu(x)"],
        "three": ["a = relu(c)", "b = relu(a)", "c = relu(b)", "y = c"],
    }
    for n, body in cyc.items():
        f = write(d, f"cyc-{n}.dlg", dlg_graph(body))
        case("cycles", f"dlg-{n}", ["dlc", "check", f], loc(f, 2))

    # Axis and permutation out of range.
    axes = {
        "softmax-5": "y = softmax(x, axis=5)",
        "softmax--3": "y = softmax(x, axis=-3)",
        "softmax-max": "y = softmax(x, axis=9223372036854775807)",
        "softmax-min": "y = softmax(x, axis=-9223372036854775807)",
        "logsoftmax-2": "y = log_softmax(x, axis=2)",
        "reduce-2": "y = broadcast_to(reduce_sum(x, axes=[2]), shape=[2, 3])",
        "reduce-neg": "y = broadcast_to(reduce_sum(x, axes=[-4]), shape=[2, 3])",
        "reduce-dup": "y = broadcast_to(reduce_sum(x, axes=[0, 0]), shape=[2, 3])",
        "reduce-max-huge": "y = broadcast_to(reduce_max(x, axes=[4611686018427387904]), shape=[2, 3])",
        "concat-2": "y = concat(x, x, axis=2)",
        "concat-neg": "y = concat(x, x, axis=-7)",
        "slice-axes": "y = slice(x, starts=[0], ends=[1], axes=[3])",
        "slice-axes-neg": "y = slice(x, starts=[0], ends=[1], axes=[-9])",
        "iota-axis": "y = cast(iota(shape=[2, 3], axis=2), to=f32)",
        "iota-axis-neg": "y = cast(iota(shape=[2, 3], axis=-5), to=f32)",
        "layer-norm-axis": "y = layer_norm(x, axis=4)",
    }
    for n, stmt in axes.items():
        f = write(d, f"axis-{n}.dlg", dlg_graph([stmt]))
        case("axis-out-of-range", n, ["dlc", "check", f], loc(f, 2))
    perms = {
        "oob": "[0, 2]", "dup": "[0, 0]", "short": "[1]", "long": "[0, 1, 2]",
        "neg": "[-3, 0]", "huge": "[0, 9223372036854775807]", "empty": "[]",
    }
    for n, p in perms.items():
        f = write(d, f"perm-{n}.dlg", dlg_graph([f"y = transpose(x, perm={p})"], outputs="y: f32[3, 2]"))
        case("permutation-out-of-range", n, ["dlc", "check", f], loc(f, 2))

    # Zero or negative stride, kernel, dilation.
    conv_in = "x: f32[1, 1, 5, 5]"
    zero = {
        "conv-stride-0": ["param w: f32[1, 1, 3, 3] = zeros", "y = conv2d(x, w, stride=0)"],
        "conv-stride-neg": ["param w: f32[1, 1, 3, 3] = zeros", "y = conv2d(x, w, stride=[1, -1])"],
        "conv-dilation-0": ["param w: f32[1, 1, 3, 3] = zeros", "y = conv2d(x, w, dilation=0)"],
        "conv-kernel-0": ["param w: f32[1, 1, 0, 3] = zeros", "y = conv2d(x, w)"],
        "maxpool-kernel-0": ["y = max_pool2d(x, kernel=0)"],
        "maxpool-kernel-neg": ["y = max_pool2d(x, kernel=[2, -2])"],
        "maxpool-stride-0": ["y = max_pool2d(x, kernel=2, stride=0)"],
        "avgpool-kernel-0": ["y = avg_pool2d(x, kernel=[0, 0])"],
        "avgpool-stride-0": ["y = avg_pool2d(x, kernel=2, stride=[0, 1])"],
        "avgpool-stride-neg": ["y = avg_pool2d(x, kernel=2, stride=-1)"],
    }
    for n, body in zero.items():
        f = write(d, f"zero-{n}.dlg", dlg_graph(body, inputs=conv_in, outputs="y: f32[1, 1, 3, 3]"))
        case("zero-stride-or-kernel", f"dlg-{n}", ["dlc", "check", f], loc(f, len(body) + 1))

    # Padding larger than the input, windows larger than the input.
    padc = {
        "pool-pad-ge-kernel": ["y = max_pool2d(x, kernel=2, padding=3)"],
        "avgpool-pad-ge-kernel": ["y = avg_pool2d(x, kernel=3, padding=[5, 5])"],
        "pool-kernel-too-big": ["y = max_pool2d(x, kernel=9)"],
        "conv-kernel-too-big": ["param w: f32[1, 1, 7, 7] = zeros", "y = conv2d(x, w)"],
        "conv-pad-neg": ["param w: f32[1, 1, 3, 3] = zeros", "y = conv2d(x, w, padding=-3)"],
        "pad-low-neg-too-much": ["y = pad(x, low=[0, 0, -6, 0], high=[0, 0, 0, 0])"],
        "pad-both-neg": ["y = pad(x, low=[0, 0, -3, 0], high=[0, 0, -3, 0])"],
        "pad-rank": ["y = pad(x, low=[1], high=[1])"],
    }
    for n, body in padc.items():
        f = write(d, f"pad-{n}.dlg", dlg_graph(body, inputs=conv_in, outputs="y: f32[1, 1, 3, 3]"))
        case("padding-larger-than-input", n, ["dlc", "check", f], loc(f, len(body) + 1))

    # Reshape count mismatch, division by zero in shape arithmetic.
    rs = {
        "count": ("y = reshape(x, shape=[4, 2])", "x: f32[2, 3]"),
        "count-big": ("y = reshape(x, shape=[6, 6])", "x: f32[2, 3]"),
        "two-infer": ("y = reshape(x, shape=[-1, -1])", "x: f32[2, 3]"),
        "infer-not-divisible": ("y = reshape(x, shape=[-1, 4])", "x: f32[2, 3]"),
        "negative": ("y = reshape(x, shape=[-2, 3])", "x: f32[2, 3]"),
        "zero-count": ("y = reshape(x, shape=[0, 6])", "x: f32[2, 3]"),
        "empty-shape": ("y = reshape(x, shape=[])", "x: f32[2, 3]"),
        "sym-mismatch": ("y = reshape(x, shape=[N, 5])", "x: f32[N, 3]"),
    }
    for n, (stmt, ins) in rs.items():
        f = write(d, f"rs-{n}.dlg", dlg_graph([stmt], inputs=ins, outputs="y: f32[6]"))
        case("reshape-count-mismatch", n, ["dlc", "check", f] + (["--dim", "N=2"] if "N" in ins else []), loc(f, 2))
    divz = {
        "infer-from-zero": ("y = reshape(x, shape=[0, -1])", "x: f32[0, 3]"),
        "infer-zero-dim": ("y = reshape(x, shape=[-1, 0])", "x: f32[2, 3]"),
        "sym-zero-infer": ("y = reshape(x, shape=[N, -1])", "x: f32[N, 3]"),
    }
    for n, (stmt, ins) in divz.items():
        f = write(d, f"divz-{n}.dlg", dlg_graph([stmt], inputs=ins, outputs="y: f32[6]"))
        case("division-by-zero-in-shapes", f"dlg-{n}", ["dlc", "check", f] + (["--dim", "N=0"] if "N" in ins else []), loc(f, 2))

    # Element-type mismatches.
    dt = {
        "add": ("y = x + i", "x: f32[2, 3], i: i32[2, 3]"),
        "matmul": ("y = x @ h", "x: f32[2, 3], h: f16[3, 3]"),
        "gather-float-idx": ("y = gather(x, z)", "x: f32[2, 3], z: f32[2]"),
        "select-float-cond": ("y = select(x, x, x)", "x: f32[2, 3]"),
        "output-type": ("y = cast(x, to=i32)", "x: f32[2, 3]"),
        "relu-bool": ("y = relu(b)", "x: f32[2, 3], b: i1[2, 3]"),
        "exp-int": ("y = cast(exp(i), to=f32)", "x: f32[2, 3], i: i32[2, 3]"),
        "ce-float-labels": ("y = broadcast_to(cross_entropy(x, z), shape=[2, 3])", "x: f32[2, 3], z: f32[2]"),
        "concat-mixed": ("y = concat(x, i, axis=0)", "x: f32[2, 3], i: i32[2, 3]"),
        "float-literal-int": ("y = cast(i + 1.5, to=f32)", "x: f32[2, 3], i: i32[2, 3]"),
    }
    for n, (stmt, ins) in dt.items():
        f = write(d, f"dt-{n}.dlg", dlg_graph([stmt], inputs=ins))
        case("dtype-mismatch", f"dlg-{n}", ["dlc", "check", f], loc(f, 1 if n == "output-type" else 2))

    # Structure: braces, blocks, outputs.
    struct_cases = {
        "no-graph": "",
        "only-comment": "# nothing\n",
        "no-close-paren": "graph g(x: f32[2] -> (y: f32[2]) {\n  y = relu(x)\n}\n",
        "no-arrow": "graph g(x: f32[2]) (y: f32[2]) {\n  y = relu(x)\n}\n",
        "no-outputs": "graph g(x: f32[2]) -> () {\n  y = relu(x)\n}\n",
        "brace-not-alone": "graph g(x: f32[2]) -> (y: f32[2]) {\n  y = relu(x) }\n",
        "two-graphs-same": BASE_DLG + BASE_DLG,
        "nesting-deep": dlg_graph(["y = " + "(" * 300 + "x" + ")" * 300]),
        "minus-deep": dlg_graph(["y = " + "-" * 400 + "x"]),
        "call-deep": dlg_graph(["y = " + "relu(" * 300 + "x" + ")" * 300]),
        "list-deep": dlg_graph(["y = reshape(x, shape=" + "[" * 300 + "]" * 300 + ")"]),
        "long-line": dlg_graph(["y = x" + " + x" * 20000 + " +"]),
    }
    for n, text in struct_cases.items():
        f = write(d, f"st-{n}.dlg", text)
        case("dlg-structure", n, ["dlc", "check", f], loc(f))


# ---------------------------------------------------------------- weights

def npy_bytes(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def npy_with_header(header, data=b"", version=(1, 0)):
    h = header.encode("latin-1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(h)) + h + data


def weight_model(d, fname, loadexpr, ty="f32[3, 4]"):
    name = f"w-{fname}.dlg"
    write(d, name, dlg_graph([f"param w: {ty} = {loadexpr}", "y = x @ w"],
                             inputs="x: f32[2, 3]", outputs="y: f32[2, 4]"))
    return name


def gen_weights(d):
    good = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = npy_bytes(good)
    # .npy truncated at many offsets.
    for off in list(range(0, 128, 9)) + [130, 150, 170, len(g) - 1]:
        f = write(d, f"t{off}.npy", g[:off])
        m = weight_model(d, f"npy-trunc{off}", f'load("{f}")')
        case("npy-truncation", f"at{off}", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    # .npy with bad headers.
    hdrs = {
        "bad-magic": b"\x93NUMPX\x01\x00" + g[8:],
        "version-9": b"\x93NUMPY\x09\x00" + g[8:],
        "header-len-huge": g[:8] + b"\xff\xff" + g[10:],
        "not-dict": npy_with_header("[1, 2, 3]", bytes(48)),
        "no-shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, }", bytes(48)),
        "neg-shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }", bytes(48)),
        "huge-shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", bytes(48)),
        "wrap-shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", bytes(48)),
        "over-int64": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 4), }", bytes(48)),
        "bad-descr": npy_with_header("{'descr': '<q9', 'fortran_order': False, 'shape': (3, 4), }", bytes(48)),
        "object-descr": npy_with_header("{'descr': '|O', 'fortran_order': False, 'shape': (3, 4), }", bytes(96)),
        "fortran-not-bool": npy_with_header("{'descr': '<f4', 'fortran_order': 3, 'shape': (3, 4), }", bytes(48)),
        "wrong-dtype": npy_bytes(good.astype(np.int64)),
        "wrong-shape": npy_bytes(good.reshape(4, 3)),
        "wrong-rank": npy_bytes(good.reshape(12)),
        "big-endian-short": npy_with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4), }", bytes(47)),
        "short-data": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", bytes(20)),
        "header-garbage": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'shape': ((((", bytes(48)),
        "empty": b"",
    }
    for n, data in hdrs.items():
        f = write(d, f"h-{n}.npy", data)
        m = weight_model(d, f"npy-{n}", f'load("{f}")')
        case("npy-header", n, ["dlc", "check", m], loc(m) + ".*" + re.escape(f))

    # .npz: corrupt archives and zip bombs.
    def npz(members, compress=zipfile.ZIP_DEFLATED):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", compress) as z:
            for k, v in members.items():
                z.writestr(k, v)
        return b.getvalue()

    goodz = npz({"w.npy": g})
    for off in [0, 4, 10, 30, 50, 80, len(goodz) // 2, len(goodz) - 30, len(goodz) - 10, len(goodz) - 1]:
        f = write(d, f"t{off}.npz", goodz[:off])
        m = weight_model(d, f"npz-trunc{off}", f'load("{f}", key="w")')
        case("npz-corrupt", f"trunc{off}", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    for k, pos in enumerate([40, 60, 90, len(goodz) - 40]):
        bad = bytearray(goodz)
        bad[pos] ^= 0x10
        f = write(d, f"flip{k}.npz", bytes(bad))
        m = weight_model(d, f"npz-flip{k}", f'load("{f}", key="w")')
        case("npz-corrupt", f"flip{pos}", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    # Zip bombs: a member whose .npy header declares a huge array, compressed
    # to almost nothing; a member whose directory entry lies about its size.
    bomb_hdr = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }")
    bombs = {
        "zeros-512m": (bomb_hdr, 512),
        "huge-header-shape": (npy_with_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 4), }"), 64),
    }
    for n, (hdr, mib) in bombs.items():
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            with z.open("w.npy", "w", force_zip64=True) as member:
                member.write(hdr)
                chunk = bytes(1 << 20)
                for _ in range(mib):
                    member.write(chunk)
        f = write(d, f"bomb-{n}.npz", b.getvalue())
        m = weight_model(d, f"npz-bomb-{n}", f'load("{f}", key="w")')
        case("npz-zip-bomb", n, ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    # Directory entry claims 2^32-1 bytes uncompressed for a small member.
    small = bytearray(npz({"w.npy": g}))
    cd = small.rfind(b"PK\x01\x02")
    struct.pack_into("<I", small, cd + 24, 0xFFFFFFFF)
    lh = small.find(b"PK\x03\x04")
    struct.pack_into("<I", small, lh + 22, 0xFFFFFFFF)
    f = write(d, "bomb-lying-size.npz", bytes(small))
    m = weight_model(d, "npz-bomb-lying", f'load("{f}", key="w")')
    case("npz-zip-bomb", "lying-size", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    # Many members.
    many = npz({f"m{i}.npy": g for i in range(2000)} | {"w.npy": g}, zipfile.ZIP_STORED)
    f = write(d, "many.npz", many)
    m = weight_model(d, "npz-many-wrong-key", f'load("{f}", key="nope")')
    case("npz-corrupt", "missing-key-many", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    f = write(d, "notnpy.npz", npz({"w.npy": b"hello"}))
    m = weight_model(d, "npz-member-not-npy", f'load("{f}", key="w")')
    case("npz-corrupt", "member-not-npy", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))

    # .safetensors.
    def st(header, data):
        h = json.dumps(header).encode()
        return struct.pack("<Q", len(h)) + h + data

    w48 = good.tobytes()
    sts = {
        "overlap": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]},
                       "v": {"dtype": "F32", "shape": [2], "data_offsets": [40, 48]}}, w48),
        "gap": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [8, 56]}}, bytes(8) + w48),
        "past-end": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}, w48[:40]),
        "offset-huge": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [18446744073709551600, 18446744073709551615]}}, w48),
        "offset-negative": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [-48, 0]}}, w48),
        "offsets-reversed": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [48, 0]}}, w48),
        "size-disagrees-shape": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 44]}}, w48[:44]),
        "shape-huge": st({"w": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 48]}}, w48),
        "shape-negative": st({"w": {"dtype": "F32", "shape": [-3, -4], "data_offsets": [0, 48]}}, w48),
        "dtype-unknown": st({"w": {"dtype": "F33", "shape": [3, 4], "data_offsets": [0, 48]}}, w48),
        "dtype-wrong": st({"w": {"dtype": "I32", "shape": [3, 4], "data_offsets": [0, 48]}}, w48),
        "shape-wrong": st({"w": {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48]}}, w48),
        "not-object": st([1, 2, 3], w48),
        "entry-not-object": st({"w": 5}, w48),
        "no-offsets": st({"w": {"dtype": "F32", "shape": [3, 4]}}, w48),
        "offsets-strings": st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": ["0", "48"]}}, w48),
        "header-len-huge": struct.pack("<Q", 1 << 62) + b"{}",
        "header-len-past-end": struct.pack("<Q", 1000) + b"{}",
        "too-short": b"\x05\x00",
        "missing-key": st({"v": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}, w48),
        "bad-json": struct.pack("<Q", 10) + b"{\"w\": [1,2" + w48,
        "metadata-not-strings": st({"__metadata__": {"a": 5}, "w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}, w48),
    }
    for n, data in sts.items():
        f = write(d, f"s-{n}.safetensors", data)
        m = weight_model(d, f"st-{n}", f'load("{f}", key="w")')
        case("safetensors-offsets" if "offset" in n or n in ("overlap", "gap", "past-end", "size-disagrees-shape") else "safetensors-header",
             n, ["dlc", "check", m], loc(m) + ".*" + re.escape(f))
    goodst = sts["overlap"]
    goodst = st({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}, w48)
    for off in [0, 3, 8, 20, 40, 60, len(goodst) - 48, len(goodst) - 20, len(goodst) - 1]:
        f = write(d, f"t{off}.safetensors", goodst[:off])
        m = weight_model(d, f"st-trunc{off}", f'load("{f}", key="w")')
        case("safetensors-truncation", f"at{off}", ["dlc", "check", m], loc(m) + ".*" + re.escape(f))

    # Paths: missing, directory, absolute into /proc, traversal.
    for n, p in [("missing", "nope.npy"), ("directory", "."), ("dev-zero", "/dev/zero"),
                 ("proc", "/proc/self/mem"), ("traversal-missing", "../../../../nonexistent/x.npy")]:
        m = weight_model(d, f"path-{n}", f'load("{p}")')
        case("weight-file-paths", n, ["dlc", "check", m], loc(m))


# ---------------------------------------------------------------- ONNX

def onnx_base(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8, producer_name="malformed")


def vi(name, shape, et=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, et, shape)


def good_onnx():
    W = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    B = numpy_helper.from_array(np.zeros((4,), np.float32), "B")
    nodes = [helper.make_node("MatMul", ["X", "W"], ["H"], name="mm"),
             helper.make_node("Add", ["H", "B"], ["A"], name="add"),
             helper.make_node("Relu", ["A"], ["Y"], name="act")]
    return onnx_base(nodes, [vi("X", [2, 3])], [vi("Y", [2, 4])], [W, B])


def save_onnx(d, fname, model):
    data = model.SerializeToString()
    write(d, fname, data)
    return fname


def nodeloc(node, op):
    """The node named: dlc's own wording, the unsupported-op list, or the
    ONNX checker's 'Name: ... OpType: ...'."""
    n = re.escape(node)
    return rf"(?:node '{n}' \({op}\)|{op} \(\d+ nodes?\): .*'{n}'|Name: {n} OpType: {op})"


def gen_onnx(d):
    good = good_onnx()
    raw = good.SerializeToString()
    gbytes = good.graph.SerializeToString()
    gstart = raw.find(gbytes)
    assert gstart > 0
    # Truncations inside the graph field: the protobuf cannot parse.
    step = max(1, len(gbytes) // 30)
    for off in range(gstart + 1, gstart + len(gbytes) - 1, step):
        f = write(d, f"t{off}.onnx", raw[:off])
        case("onnx-truncation", f"at{off}", ["dlc", "check", f],
             re.escape(f) + r".*(not an ONNX model|protobuf)")
    f = write(d, "empty.onnx", b"")
    case("onnx-truncation", "empty", ["dlc", "check", f], re.escape(f))
    f = write(d, "garbage.onnx", bytes(range(256)) * 4)
    case("onnx-truncation", "garbage", ["dlc", "check", f], re.escape(f))

    X = vi("X", [2, 3])

    def add(cls, n, model, regex):
        f = save_onnx(d, f"{cls}-{n}.onnx", model)
        case(cls, n, ["dlc", "check", f], regex)

    # Graph structure.
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X], [])
    add("onnx-structure", "no-outputs", m, re.escape("onnx-structure-no-outputs.onnx") + "|output")
    m = onnx_base([helper.make_node("Relu", ["Z"], ["Y"], name="r")], [X], [vi("Y", [2, 3])])
    add("onnx-structure", "undefined-input", m, r"'Z'|node 'r'")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X], [vi("Q", [2, 3])])
    add("onnx-structure", "output-not-produced", m, r"'Q'")
    m = onnx_base([helper.make_node("Frob", ["X"], ["Y"], name="fr")], [X], [vi("Y", [2, 3])])
    add("onnx-structure", "unknown-op", m, nodeloc("fr", "Frob") + "|Frob")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r"),
                   helper.make_node("Relu", ["X"], ["Y"], name="r2")], [X], [vi("Y", [2, 3])])
    add("onnx-structure", "output-twice", m, r"'Y'|node 'r2?'")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X], [vi("Y", [2, 3])], opset=99)
    add("onnx-structure", "opset-99", m, r"opset 99")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X], [vi("Y", [2, 3])], opset=0)
    add("onnx-structure", "opset-0", m, r"opset")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r", domain="com.evil")], [X], [vi("Y", [2, 3])])
    add("onnx-structure", "unknown-domain", m, r"com\.evil|node 'r'")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X, X], [vi("Y", [2, 3])])
    add("onnx-structure", "input-twice", m, r"'X'")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [vi("X", [2, 3], TensorProto.STRING)], [vi("Y", [2, 3], TensorProto.STRING)])
    add("onnx-structure", "string-input", m, r"'X'|node 'r'")

    # Cycles.
    m = onnx_base([helper.make_node("Relu", ["B"], ["A"], name="ra"),
                   helper.make_node("Relu", ["A"], ["B"], name="rb"),
                   helper.make_node("Relu", ["A"], ["Y"], name="ry")], [X], [vi("Y", [2, 3])])
    add("cycles", "onnx-pair", m, r"node '?r[ab]'?|'[AB]'")
    m = onnx_base([helper.make_node("Add", ["X", "A"], ["A"], name="self")], [X], [vi("A", [2, 3])])
    add("cycles", "onnx-self", m, r"node '?self'?|'A'")
    m = onnx_base([helper.make_node("Relu", ["C"], ["A"], name="n1"),
                   helper.make_node("Relu", ["A"], ["B"], name="n2"),
                   helper.make_node("Relu", ["B"], ["C"], name="n3"),
                   helper.make_node("Relu", ["C"], ["Y"], name="n4")], [X], [vi("Y", [2, 3])])
    add("cycles", "onnx-three", m, r"node '?n[1-4]'?|'[ABC]'")

    # Negative, zero, huge dims in value infos and initializers.
    for n, shape in [("negative", [2, -4]), ("negative-first", [-1]), ("huge", [1 << 40, 1 << 40]),
                     ("int64-max", [(1 << 63) - 1, 2]), ("rank-17", [1] * 17)]:
        m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [vi("X", shape)], [vi("Y", shape)])
        add("onnx-bad-dims", f"input-{n}", m, r"'X'|node 'r'")
    for n, dims in [("negative", [-3, 4]), ("huge", [1 << 40, 1 << 40]), ("wrap", [1 << 62, 4]),
                    ("zero-with-data", [0, 4]), ("rank-17", [1] * 17)]:
        t = TensorProto()
        t.name = "W"
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        t.raw_data = np.ones(12, np.float32).tobytes()
        m = onnx_base([helper.make_node("Relu", ["W"], ["Y"], name="r")], [], [vi("Y", ["d"])], [t])
        add("onnx-bad-dims", f"init-{n}", m, r"'W'|tensor name: W\b")
    # Initializer whose data disagrees with its dims, with the graph input.
    t = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    t.raw_data = t.raw_data[:20]
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "short-raw-data", m, r"'W'|tensor name: W\b")
    t = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X, vi("W", [4, 4])], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "disagrees-with-input", m, r"'W'|tensor name: W\b")
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X, vi("W", [3, 4], TensorProto.INT64)], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "dtype-disagrees-with-input", m, r"'W'|tensor name: W\b")
    t = TensorProto()
    t.name = "W"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([3, 4])
    t.float_data.extend([1.0] * 5)
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "float-data-short", m, r"'W'|tensor name: W\b")
    t = TensorProto()
    t.name = "W"
    t.data_type = 99
    t.dims.extend([3, 4])
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "dtype-99", m, r"'W'|tensor name: W\b")
    t = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    t.data_type = TensorProto.STRING
    m = onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X], [vi("Y", [2, 4])], [t])
    add("onnx-initializer", "string-tensor", m, r"'W'|tensor name: W\b|node 'mm'")

    # Zero stride or kernel, contradictory kernel_shape, padding larger than input.
    Xi = vi("X", [1, 1, 5, 5])
    Wc = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "Wc")
    conv_attrs = {
        "conv-stride-0": ("Conv", {"strides": [0, 0]}),
        "conv-stride-neg": ("Conv", {"strides": [1, -2]}),
        "conv-dilation-0": ("Conv", {"dilations": [0, 1]}),
        "conv-kernel-shape-contradicts": ("Conv", {"kernel_shape": [5, 5]}),
        "conv-kernel-shape-0": ("Conv", {"kernel_shape": [0, 0]}),
        "conv-pads-neg": ("Conv", {"pads": [-9, 0, 0, 0]}),
        "conv-pads-short": ("Conv", {"pads": [1, 1]}),
        "conv-group-0": ("Conv", {"group": 0}),
        "conv-group-3": ("Conv", {"group": 3}),
        "conv-strides-long": ("Conv", {"strides": [1, 1, 1]}),
        "maxpool-stride-0": ("MaxPool", {"kernel_shape": [2, 2], "strides": [0, 0]}),
        "maxpool-kernel-0": ("MaxPool", {"kernel_shape": [0, 2]}),
        "maxpool-kernel-neg": ("MaxPool", {"kernel_shape": [-2, 2]}),
        "maxpool-no-kernel": ("MaxPool", {}),
        "maxpool-pad-ge-kernel": ("MaxPool", {"kernel_shape": [2, 2], "pads": [4, 4, 4, 4]}),
        "maxpool-kernel-too-big": ("MaxPool", {"kernel_shape": [9, 9]}),
        "maxpool-dilation-0": ("MaxPool", {"kernel_shape": [2, 2], "dilations": [0, 0]}),
        "avgpool-stride-0": ("AveragePool", {"kernel_shape": [2, 2], "strides": [0, 1]}),
        "avgpool-kernel-0": ("AveragePool", {"kernel_shape": [0, 0]}),
        "avgpool-pad-ge-kernel": ("AveragePool", {"kernel_shape": [3, 3], "pads": [3, 3, 3, 3]}),
        "avgpool-kernel-rank": ("AveragePool", {"kernel_shape": [2, 2, 2]}),
        "lppool-stride-0": ("LpPool", {"kernel_shape": [2, 2], "strides": [0, 0]}),
        "conv-auto-pad-bad": ("Conv", {"auto_pad": "SIDEWAYS"}),
        "maxpool-pads-huge": ("MaxPool", {"kernel_shape": [2, 2], "pads": [(1 << 63) - 1, 0, (1 << 63) - 1, 0]}),
        "conv-dilation-huge": ("Conv", {"dilations": [1 << 62, 1]}),
        "conv-pads-huge": ("Conv", {"pads": [(1 << 63) - 1, 0, (1 << 63) - 1, 0]}),
    }
    for n, (op, attrs) in conv_attrs.items():
        ins = ["X", "Wc"] if op == "Conv" else ["X"]
        node = helper.make_node(op, ins, ["Y"], name=n, **attrs)
        m = onnx_base([node], [Xi], [vi("Y", ["d"])], [Wc] if op == "Conv" else [])
        cls = ("zero-stride-or-kernel" if ("-0" in n or "neg" in n or "no-kernel" in n or "contradicts" in n)
               else "int64-overflow" if "huge" in n
               else "padding-larger-than-input" if ("pad" in n or "too-big" in n) else "onnx-attributes")
        add(cls, f"onnx-{n}", m, nodeloc(n, op))

    # Axes and permutations out of range.
    X3 = vi("X", [2, 3, 4])
    axes = {
        "softmax-3": ("Softmax", ["X"], {"axis": 3}),
        "softmax--4": ("Softmax", ["X"], {"axis": -4}),
        "concat-5": ("Concat", ["X", "X"], {"axis": 5}),
        "concat-huge": ("Concat", ["X", "X"], {"axis": (1 << 63) - 1}),
        "gather-3": ("Gather", ["X", "I"], {"axis": 3}),
        "flatten-9": ("Flatten", ["X"], {"axis": 9}),
        "reducesum-axes-7": ("ReduceMax", ["X"], {"axes": [7]}),
        "argmax-5": ("ArgMax", ["X"], {"axis": 5}),
        "split-axis-4": ("Split", ["X"], {"axis": 4}),
        "cumsum-hmm": ("LogSoftmax", ["X"], {"axis": -10}),
        "layernorm-axis": ("LayerNormalization", ["X", "S"], {"axis": 3}),
        "transpose-perm-oob": ("Transpose", ["X"], {"perm": [0, 1, 3]}),
        "transpose-perm-dup": ("Transpose", ["X"], {"perm": [0, 0, 1]}),
        "transpose-perm-short": ("Transpose", ["X"], {"perm": [1, 0]}),
        "transpose-perm-neg": ("Transpose", ["X"], {"perm": [-1, 0, 1]}),
        "transpose-perm-huge": ("Transpose", ["X"], {"perm": [0, 1, 1 << 62]}),
        "depthtospace-blocksize-0": ("DepthToSpace", ["X4"], {"blocksize": 0}),
    }
    I = numpy_helper.from_array(np.array([0, 1], np.int64), "I")
    S = numpy_helper.from_array(np.ones((4,), np.float32), "S")
    for n, (op, ins, attrs) in axes.items():
        inputs = [X3] if "X4" not in ins else [vi("X4", [1, 4, 2, 2])]
        node = helper.make_node(op, ins, ["Y"], name=n, **attrs)
        inits = [t for t in (I, S) if t.name in ins]
        opset = 17 if op == "LayerNormalization" else 11 if op == "ReduceMax" or op == "Split" else 13
        m = onnx_base([node], inputs, [vi("Y", ["d"])], inits, opset=opset)
        cls = "permutation-out-of-range" if "perm" in n else "zero-stride-or-kernel" if "blocksize" in n else "axis-out-of-range"
        add(cls, f"onnx-{n}", m, nodeloc(n, op))
    # Axis given through an input tensor.
    for n, op, vals in [("squeeze-axes-input", "Squeeze", [5]), ("unsqueeze-axes-input", "Unsqueeze", [9]),
                        ("unsqueeze-axes-dup", "Unsqueeze", [0, 0])]:
        A = numpy_helper.from_array(np.array(vals, np.int64), "A")
        m = onnx_base([helper.make_node(op, ["X", "A"], ["Y"], name=n)], [X3], [vi("Y", ["d"])], [A])
        add("axis-out-of-range", f"onnx-{n}", m, nodeloc(n, op) + ("" if "dup" not in n else ".*listed twice"))
    Sl = {k: numpy_helper.from_array(np.array(v, np.int64), k) for k, v in
          {"st": [0], "en": [1], "ax": [5], "step0": [0]}.items()}
    m = onnx_base([helper.make_node("Slice", ["X", "st", "en", "ax"], ["Y"], name="slice_axes")], [X3], [vi("Y", ["d"])],
                  [Sl["st"], Sl["en"], Sl["ax"]])
    add("axis-out-of-range", "onnx-slice-axes", m, nodeloc("slice_axes", "Slice"))
    for n, (st, en, step) in {"slice-step-max": (0, 4, (1 << 63) - 1),
                              "slice-step-min": (-1, -(1 << 63), -(1 << 63))}.items():
        consts = [numpy_helper.from_array(np.array([v], np.int64), k) for k, v in
                  (("s0", st), ("s1", en), ("s2", 2), ("s3", step))]
        m = onnx_base([helper.make_node("Slice", ["X", "s0", "s1", "s2", "s3"], ["Y"], name=n)], [X3],
                      [vi("Y", [2, 3, 1])], consts)
        f = save_onnx(d, f"int64-overflow-onnx-{n}.onnx", m)
        case("int64-overflow", f"onnx-{n}-check", ["dlc", "check", f], r"Y: f32\[2, 3, 1\]", exit=(0,))
    ax0 = numpy_helper.from_array(np.array([0], np.int64), "ax0")
    m = onnx_base([helper.make_node("Slice", ["X", "st", "en", "ax0", "step0"], ["Y"], name="slice_step0")], [X3], [vi("Y", ["d"])],
                  [Sl["st"], Sl["en"], ax0, Sl["step0"]])
    add("zero-stride-or-kernel", "onnx-slice-step-0", m, nodeloc("slice_step0", "Slice"))

    # Reshape count mismatch and shape arithmetic.
    def shape_const(name, vals):
        return numpy_helper.from_array(np.array(vals, np.int64), name)
    X6 = vi("X", [2, 3])
    for n, vals in [("count", [4, 2]), ("two-infer", [-1, -1]), ("not-divisible", [-1, 4]),
                    ("negative", [-3, 2]), ("huge", [1 << 40, 1 << 40]), ("wrap", [1 << 62, 4, 0]),
                    ("infer-wrap", [-1, 1 << 62, 4])]:
        m = onnx_base([helper.make_node("Reshape", ["X", "shp"], ["Y"], name=f"rs_{n}")], [X6], [vi("Y", ["d"])],
                      [shape_const("shp", vals)])
        cls = "int64-overflow" if n in ("huge", "wrap", "infer-wrap") else "reshape-count-mismatch"
        add(cls, f"onnx-{n}", m, nodeloc(f"rs_{n}", "Reshape"))
    # Zero-sized input with an inferred dimension: 0 / 0.
    m = onnx_base([helper.make_node("Reshape", ["X", "shp"], ["Y"], name="rs_zero")], [vi("X", [0, 3])], [vi("Y", ["d"])],
                  [shape_const("shp", [0, -1])])
    add("division-by-zero-in-shapes", "onnx-reshape-zero-infer", m, nodeloc("rs_zero", "Reshape"))
    m = onnx_base([helper.make_node("Reshape", ["X", "shp"], ["Y"], name="rs_zero2", allowzero=1)], [vi("X", [2, 3])], [vi("Y", ["d"])],
                  [shape_const("shp", [-1, 0])], opset=14)
    add("division-by-zero-in-shapes", "onnx-reshape-infer-with-zero", m, nodeloc("rs_zero2", "Reshape"))
    # Shape computed by Div by zero, then Reshape.
    nodes = [helper.make_node("Shape", ["X"], ["s"], name="shape"),
             helper.make_node("Div", ["s", "zero"], ["q"], name="div_by_zero"),
             helper.make_node("Reshape", ["X", "q"], ["Y"], name="rs_div")]
    m = onnx_base(nodes, [X6], [vi("Y", ["d"])], [shape_const("zero", [0, 0])])
    add("division-by-zero-in-shapes", "onnx-shape-div-zero", m, r"node '(div_by_zero|rs_div)' \((Div|Reshape)\)")
    nodes = [helper.make_node("Shape", ["X"], ["s"], name="shape"),
             helper.make_node("Mod", ["s", "zero"], ["q"], name="mod_by_zero"),
             helper.make_node("Reshape", ["X", "q"], ["Y"], name="rs_mod")]
    m = onnx_base(nodes, [X6], [vi("Y", ["d"])], [shape_const("zero", [0, 0])])
    add("division-by-zero-in-shapes", "onnx-shape-mod-zero", m, r"node '(mod_by_zero|rs_mod)' \((Mod|Reshape)\)")
    # Range with delta 0, Range of 2^62 elements, Tile of huge.
    for n, (start, limit, delta) in {"range-delta-0": (0, 10, 0), "range-huge": (0, 1 << 62, 1),
                                      "range-wrap": (-(1 << 62), 1 << 62, 1)}.items():
        consts = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in
                  (("r0", start), ("r1", limit), ("r2", delta))]
        m = onnx_base([helper.make_node("Range", ["r0", "r1", "r2"], ["Y"], name=n)], [], [vi("Y", ["d"], TensorProto.INT64)], consts, opset=13)
        cls = "division-by-zero-in-shapes" if "delta" in n else "absurd-allocation"
        add(cls, f"onnx-{n}", m, nodeloc(n, "Range"))
    for n, reps in {"tile-huge": [1 << 40, 1 << 40], "tile-wrap": [1 << 62, 8], "tile-neg": [-1, 2]}.items():
        m = onnx_base([helper.make_node("Tile", ["X", "reps"], ["Y"], name=n)], [X6], [vi("Y", ["d"])],
                      [shape_const("reps", reps)])
        add("absurd-allocation" if "neg" not in n else "onnx-attributes", f"onnx-{n}", m, nodeloc(n, "Tile"))
    for n, shp in {"expand-huge": [1 << 40, 1 << 40, 3], "expand-neg": [-2, 3], "constofshape-huge": None}.items():
        if shp is None:
            m = onnx_base([helper.make_node("ConstantOfShape", ["shp"], ["Y"], name=n)], [], [vi("Y", [1 << 40, 10])],
                          [shape_const("shp", [1 << 40, 10])])
            f = save_onnx(d, f"absurd-allocation-{n}.onnx", m)
            for dev in ("reference", "cpu"):
                case("absurd-allocation", f"onnx-{n}-run-{dev}", ["dlc", "run", f, "--device", dev],
                     r"1099511627776|\bbytes\b|GiB|TiB", exit=(3,))
            continue
        m = onnx_base([helper.make_node("Expand", ["X", "shp"], ["Y"], name=n)], [X6], [vi("Y", ["d"])],
                      [shape_const("shp", shp)])
        add("absurd-allocation" if "huge" in n else "onnx-attributes", f"onnx-{n}", m, nodeloc(n, "Expand"))
    m = onnx_base([helper.make_node("Pad", ["X", "pads"], ["Y"], name="pad_wrap")], [X6], [vi("Y", ["d"])],
                  [shape_const("pads", [0, (1 << 63) - 1, 0, (1 << 63) - 1])])
    add("int64-overflow", "onnx-pad-wrap", m, nodeloc("pad_wrap", "Pad"))
    m = onnx_base([helper.make_node("Pad", ["X", "pads"], ["Y"], name="pad_neg")], [X6], [vi("Y", ["d"])],
                  [shape_const("pads", [0, -5, 0, 0])])
    add("padding-larger-than-input", "onnx-pad-negative", m, nodeloc("pad_neg", "Pad"))

    # Element-type mismatches.
    Xi32 = vi("I", [2, 3], TensorProto.INT32)
    m = onnx_base([helper.make_node("Add", ["X", "I"], ["Y"], name="add_mixed")], [X6, Xi32], [vi("Y", ["d"])])
    add("dtype-mismatch", "onnx-add", m, nodeloc("add_mixed", "Add") + "|node 'add_mixed'")
    m = onnx_base([helper.make_node("MatMul", ["X", "H"], ["Y"], name="mm_mixed")], [X6, vi("H", [3, 3], TensorProto.FLOAT16)], [vi("Y", ["d"])])
    add("dtype-mismatch", "onnx-matmul", m, r"node 'mm_mixed'")
    m = onnx_base([helper.make_node("Gather", ["X", "F"], ["Y"], name="gather_float")], [X6, vi("F", [2])], [vi("Y", ["d"])])
    add("dtype-mismatch", "onnx-gather-float", m, r"node 'gather_float'")
    m = onnx_base([helper.make_node("Relu", ["X"], ["Y"], name="r")], [X6], [vi("Y", [2, 3], TensorProto.INT64)])
    add("dtype-mismatch", "onnx-output-type", m, r"'Y'|node 'r'")

    # External data: traversal, absolute paths, offsets.
    def ext_model(location, offset=None, length=None, extra=()):
        t = TensorProto()
        t.name = "W"
        t.data_type = TensorProto.FLOAT
        t.dims.extend([3, 4])
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", location
        if offset is not None:
            e = t.external_data.add()
            e.key, e.value = "offset", str(offset)
        if length is not None:
            e = t.external_data.add()
            e.key, e.value = "length", str(length)
        for k, v in extra:
            e = t.external_data.add()
            e.key, e.value = k, v
        return onnx_base([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [X6], [vi("Y", [2, 4])], [t])
    write(d, "w.bin", np.ones(12, np.float32).tobytes())
    ext = {
        "traversal": ext_model("../../../../../../etc/passwd"),
        "traversal-mid": ext_model("sub/../../w.bin"),
        "absolute": ext_model("/etc/passwd"),
        "absolute-dev": ext_model("/dev/zero"),
        "missing": ext_model("nope.bin"),
        "directory": ext_model("."),
        "offset-past-end": ext_model("w.bin", offset=1000),
        "offset-huge": ext_model("w.bin", offset=(1 << 63) - 1),
        "offset-negative": ext_model("w.bin", offset=-8),
        "length-short": ext_model("w.bin", length=20),
        "length-past-end": ext_model("w.bin", offset=8, length=48),
        "length-huge": ext_model("w.bin", length=1 << 62),
        "length-text": ext_model("w.bin", length="12abc"),
        "empty-location": ext_model(""),
        "no-location": ext_model("w.bin", extra=()) if False else None,
        "nul-in-location": ext_model("w.bin\x00.evil"),
    }
    for n, m in ext.items():
        if m is None:
            continue
        if n == "nul-in-location":
            # protobuf strings may hold NUL; the serializer accepts it.
            pass
        add("external-data-paths", n, m, r"'W'|tensor name: W\b")


# ---------------------------------------------------------------- .dlcm

def gen_dlcm(d):
    src = write(d, "tiny.dlg", dlg_graph(["y = relu(x)"], inputs="x: f32[2, 3]", outputs="y: f32[2, 3]"))
    subprocess.run([DLC, "compile", src, "-o", "tiny.dlcm"], check=True, cwd=d,
                   stdout=subprocess.DEVNULL)
    raw = open(os.path.join(d, "tiny.dlcm"), "rb").read()
    n = len(raw)
    offs = sorted(set([0, 3, 4, 8, 16, 24, 32, 40, 63, 64, 65, 100, 200, 400, 800]
                      + [n * k // 24 for k in range(1, 24)] + [n - 1]))
    sect = r"section '[^']+' at byte \d+"
    for off in offs:
        if off >= n:
            continue
        f = write(d, f"t{off}.dlcm", raw[:off])
        case("dlcm-truncation", f"at{off}", ["dlc", "run", f, "--random-inputs"], re.escape(f) + ".*" + sect)
    flips = sorted(set([0, 1, 4, 6, 8, 12, 16, 20, 28, 36, 44, 52, 60, 64, 70, 90, 130, 260, 520]
                       + [n * k // 36 for k in range(1, 36)] + [n - 1, n - 8]))
    for k, off in enumerate(flips):
        if off >= n:
            continue
        bad = bytearray(raw)
        bad[off] ^= 1 << (k % 8)
        f = write(d, f"f{off}.dlcm", bytes(bad))
        case("dlcm-bit-flip", f"at{off}-bit{k % 8}", ["dlc", "run", f, "--random-inputs"], re.escape(f) + ".*" + sect)
    f = write(d, "extra.dlcm", raw + b"\x00" * 16)
    case("dlcm-truncation", "trailing-bytes", ["dlc", "run", f, "--random-inputs"], re.escape(f) + ".*" + sect)
    # Modules given where a model is read.
    for verb in ("plan", "compile"):  # dlc check reads modules
        case("command-line", f"dlcm-to-{verb}", ["dlc", verb, "tiny.dlcm"] + (["-o", "again.dlcm"] if verb == "compile" else []),
             r"tiny\.dlcm")


# ---------------------------------------------------------------- IDX data

def idx(dtype_code, dims, data):
    return b"\x00\x00" + bytes([dtype_code, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + data


def gen_idx(d):
    model = write(d, "idx-model.dlg", """graph g(x: u8[N, 4, 4]) -> (logits: f32[N, 10]) {
  param w: f32[16, 10] = zeros
  logits = reshape(cast(x, to=f32), shape=[N, 16]) @ w
}

train g(label: u8[N]) {
  loss = cross_entropy(logits, cast(label, to=i32))
  optimizer = sgd(lr=0.1)
}
""")
    good_x = idx(0x08, [8, 4, 4], bytes(range(128)))
    good_y = idx(0x08, [8], bytes([1, 2, 3, 4, 5, 6, 7, 8]))
    bad = {
        "bad-magic": (b"\x01\x02" + good_x[2:], good_y),
        "bad-type": (idx(0x42, [8, 4, 4], bytes(128)), good_y),
        "rank-0": (idx(0x08, [], b""), good_y),
        "rank-200": (b"\x00\x00\x08\xc8" + b"\x00\x00\x00\x01" * 200, good_y),
        "truncated-dims": (good_x[:9], good_y),
        "truncated-data": (good_x[:100], good_y),
        "huge-dims": (idx(0x08, [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], bytes(128)), good_y),
        "count-mismatch": (good_x, idx(0x08, [7], bytes(7))),
        "labels-rank-2": (good_x, idx(0x08, [8, 2], bytes(16))),
        "empty": (b"", good_y),
        "zero-samples": (idx(0x08, [0, 4, 4], b""), idx(0x08, [0], b"")),
        "sample-shape": (idx(0x08, [8, 5, 5], bytes(200)), good_y),
    }
    for n, (xs, ys) in bad.items():
        sub = os.path.join(d, f"idx-{n}")
        os.makedirs(sub, exist_ok=True)
        write(sub, "train-images-idx3-ubyte", xs)
        write(sub, "train-labels-idx1-ubyte", ys)
        write(sub, "t10k-images-idx3-ubyte", good_x)
        write(sub, "t10k-labels-idx1-ubyte", good_y)
        case("idx-data", n, ["dlc", "train", model, "--data", f"idx-{n}", "--batch-size", "4", "--max-steps", "1"],
             r"idx-" + re.escape(n) + r"/train-(images|labels)-idx[13]-ubyte")


# ---------------------------------------------------------------- command lines

def gen_cli(d):
    m = write(d, "cli.dlg", BASE_DLG)
    sym = write(d, "cli-sym.dlg", dlg_graph(["y = relu(x)"], inputs="x: f32[N, 3]", outputs="y: f32[N, 3]"))
    x = write(d, "x.npy", npy_bytes(np.zeros((2, 3), np.float32)))
    write(d, "x64.npy", npy_bytes(np.zeros((2, 3), np.float64)))
    write(d, "xshape.npy", npy_bytes(np.zeros((3, 2), np.float32)))
    write(d, "xrank.npy", npy_bytes(np.zeros((6,), np.float32)))
    write(d, "xs.npz", b"")
    cl = {
        "unknown-verb": (["dlc", "frobnicate", m], r"frobnicate"),
        "no-model": (["dlc", "check"], r"model|MODEL"),
        "missing-model": (["dlc", "check", "nope.dlg"], r"nope\.dlg"),
        "model-directory": (["dlc", "check", "."], r"'\.'|\. "),
        "unknown-extension": (["dlc", "check", "x.npy"], r"x\.npy"),
        "unknown-flag": (["dlc", "check", m, "--frob"], r"--frob|frob"),
        "dim-no-size": (["dlc", "check", sym, "--dim", "N"], r"--dim"),
        "dim-negative": (["dlc", "check", sym, "--dim", "N=-3"], r"--dim"),
        "dim-text": (["dlc", "check", sym, "--dim", "N=abc"], r"--dim"),
        "dim-over-int64": (["dlc", "check", sym, "--dim", "N=99999999999999999999"], r"--dim"),
        "dim-unknown-name": (["dlc", "check", sym, "--dim", "N=2", "--dim", "Q=3"], r"--dim|'Q'"),
        "dim-twice-differs": (["dlc", "check", sym, "--dim", "N=2", "--dim", "N=3"], r"--dim|'N'"),
        "rtol-nan": (["dlc", "run", m, "--random-inputs", "--rtol", "nan"], r"--rtol"),
        "rtol-negative": (["dlc", "run", m, "--random-inputs", "--rtol", "-1"], r"--rtol"),
        "atol-inf": (["dlc", "run", m, "--random-inputs", "--atol", "inf"], r"--atol"),
        "atol-text": (["dlc", "run", m, "--random-inputs", "--atol", "x"], r"--atol|atol"),
        "target-sm-unknown": (["dlc", "compile", m, "--target", "cuda:sm_13", "-o", "o.dlcm"], r"--target|sm_13"),
        "target-sm-text": (["dlc", "compile", m, "--target", "cuda:sm_xx", "-o", "o.dlcm"], r"--target|sm_xx"),
        "target-unknown": (["dlc", "compile", m, "--target", "tpu", "-o", "o.dlcm"], r"--target|tpu"),
        "device-unknown": (["dlc", "run", m, "--random-inputs", "--device", "tpu"], r"--device|tpu"),
        "device-cuda-index": (["dlc", "run", m, "--random-inputs", "--device", "cuda:-1"], r"--device|cuda:-1"),
        "threads-zero": (["dlc", "run", m, "--random-inputs", "--threads", "0"], r"--threads"),
        "threads-huge": (["dlc", "run", m, "--random-inputs", "--threads", "100000000"], r"--threads"),
        "emit-unknown": (["dlc", "compile", m, "--emit", "nonsense"], r"--emit|nonsense"),
        "mesh-bad": (["dlc", "plan", m, "--mesh", "data=0"], r"--mesh"),
        "mesh-text": (["dlc", "plan", m, "--mesh", "data"], r"--mesh"),
        "mesh-huge": (["dlc", "plan", m, "--mesh", "data=99999999999999999999"], r"--mesh"),
        "parallel-unknown": (["dlc", "plan", m, "--mesh", "data=2", "--parallel", "sideways"], r"--parallel|sideways"),
        "input-unknown-name": (["dlc", "run", m, "--input", f"q=@{x}"], r"--input q|'q'"),
        "input-no-at": (["dlc", "run", m, "--input", "x=x.npy"], r"--input"),
        "input-missing-file": (["dlc", "run", m, "--input", "x=@nope.npy"], r"--input x"),
        "input-wrong-dtype": (["dlc", "run", m, "--input", "x=@x64.npy"], r"--input x"),
        "input-wrong-shape": (["dlc", "run", m, "--input", "x=@xshape.npy"], r"--input x|cli\.dlg:1:9: error: input 'x'"),
        "input-wrong-rank": (["dlc", "run", m, "--input", "x=@xrank.npy"], r"--input x|cli\.dlg:1:9: error: input 'x'"),
        "input-empty-npz": (["dlc", "run", m, "--input", "x=@xs.npz"], r"--input x"),
        "input-twice": (["dlc", "run", m, "--input", f"x=@{x}", "--input", f"x=@{x}"], r"--input x"),
        "input-not-given": (["dlc", "run", m], r"'x'|input x|--input"),
        "input-directory": (["dlc", "run", m, "--input", "x=@."], r"--input x"),
        "output-unknown": (["dlc", "run", m, "--random-inputs", "--output", "q=@q.npy"], r"--output q|'q'"),
        "output-bad-ext": (["dlc", "run", m, "--random-inputs", "--output", "y=@y.txt"], r"--output|y\.txt"),
        "output-unwritable": (["dlc", "run", m, "--random-inputs", "--output", "y=@/proc/nope/y.npy"], r"--output|/proc/nope"),
        "expected-missing": (["dlc", "run", m, "--random-inputs", "--expected-output", "y=@nope.npy"], r"--expected-output"),
        "expected-not-npy": (["dlc", "run", m, "--random-inputs", "--expected-output", "y=@cli.dlg"], r"--expected-output|cli\.dlg"),
        "compile-out-unwritable": (["dlc", "compile", m, "-o", "/proc/nope/m.dlcm"], r"/proc/nope|-o"),
        "params-missing": (["dlc", "run", m, "--random-inputs", "--params", "nope.safetensors"], r"--params|nope\.safetensors"),
        "params-wrong-file": (["dlc", "run", m, "--random-inputs", "--params", "x.npy"], r"--params|x\.npy"),
        "seed-negative": (["dlc", "run", m, "--seed", "-1"], r"--seed|seed"),
        "show-text": (["dlc", "run", m, "--random-inputs", "--show", "many"], r"--show|show"),
        "train-no-data": (["dlc", "train", m], r"--data|train"),
        "train-data-missing": (["dlc", "train", m, "--data", "nope.npz"], r"--data|nope\.npz|train"),
        "batch-size-zero": (["dlc", "train", m, "--data", "nope.npz", "--batch-size", "0"], r"--batch-size|--data|train"),
        "collective-timeout-neg": (["dlc", "run", m, "--random-inputs", "--collective-timeout", "-5"], r"--collective-timeout"),
        "microbatches-zero": (["dlc", "plan", m, "--train", "--mesh", "pipe=2", "--parallel", "pipeline", "--device-spec", "cpu", "--microbatches", "0"], r"--microbatches"),
        "device-spec-missing": (["dlc", "plan", m, "--mesh", "data=2", "--device-spec", "nope.json"], r"--device-spec|nope\.json"),
        "device-spec-garbage": (["dlc", "plan", m, "--mesh", "data=2", "--device-spec", x], r"--device-spec|x\.npy"),
    }
    for n, (argv, rx) in cl.items():
        case("command-line", n, argv, rx)

    # Data the ops are not defined on, on the float64 oracle (--device
    # reference) only: the compiled kernels' checks are tested elsewhere.
    write(d, "df-x.npy", npy_bytes(np.ones((4, 3), np.float32)))
    write(d, "df-logits.npy", npy_bytes(np.ones((2, 5), np.float32)))
    gather = write(d, "df-gather.dlg", dlg_graph(["y = gather(x, i)"], inputs="x: f32[4, 3], i: i32[2]"))
    ce = write(d, "df-ce.dlg", dlg_graph(["y = cross_entropy(x, l)"], inputs="x: f32[2, 5], l: i32[2]", outputs="y: f32[]"))
    div = write(d, "df-div.dlg", dlg_graph(["y = a / b"], inputs="a: i32[2], b: i32[2]", outputs="y: i32[2]"))
    emb = write(d, "df-emb.dlg", dlg_graph(["y = embedding(x, i)"], inputs="x: f32[4, 3], i: i64[2]", outputs="y: f32[2, 3]"))
    data = {
        "gather-index-4": (gather, {"x": "df-x.npy", "i": np.array([0, 4], np.int32)}),
        "gather-index-huge": (gather, {"x": "df-x.npy", "i": np.array([2147483647, 0], np.int32)}),
        "gather-index-below": (gather, {"x": "df-x.npy", "i": np.array([0, -5], np.int32)}),
        "label-5": (ce, {"x": "df-logits.npy", "l": np.array([1, 5], np.int32)}),
        "label-negative": (ce, {"x": "df-logits.npy", "l": np.array([-1, 0], np.int32)}),
        "div-by-zero": (div, {"a": np.array([5, 6], np.int32), "b": np.array([1, 0], np.int32)}),
        "embedding-index-huge": (emb, {"x": "df-x.npy", "i": np.array([0, 1 << 40], np.int64)}),
        "embedding-index-negative": (emb, {"x": "df-x.npy", "i": np.array([-1, 0], np.int64)}),
    }
    for n, (model, inputs) in data.items():
        argv = ["dlc", "run", model, "--device", "reference"]
        for k, v in inputs.items():
            if not isinstance(v, str):
                v = write(d, f"df-{n}-{k}.npy", npy_bytes(v))
            argv += ["--input", f"{k}=@{v}"]
        case("data-errors-reference", n, argv, loc(model, 2), exit=(3,))

    # Absurd allocation requests: well-formed sizes too large to run.
    huge = write(d, "huge-out.dlg", dlg_graph(["y = broadcast_to(x, shape=[1099511627776, 10])"],
                                              inputs="x: f32[10]", outputs="y: f32[1099511627776, 10]"))
    for dev in ("reference", "cpu"):
        case("absurd-allocation", f"broadcast-2^40-{dev}", ["dlc", "run", huge, "--random-inputs", "--device", dev],
             re.escape(huge) + r"|1099511627776|bytes", exit=(2, 3))
    subprocess.run([DLC, "compile", huge, "-o", "huge-out.dlcm"], check=True, cwd=d, stdout=subprocess.DEVNULL)
    case("absurd-allocation", "module-output-2^40", ["dlc", "run", "huge-out.dlcm", "--random-inputs"],
         r"output y \(f32\[1099511627776, 10\]\) needs \d+ bytes", exit=(3,))
    case("absurd-allocation", "dim-2^40-run", ["dlc", "run", sym, "--random-inputs", "--dim", f"N={1 << 40}", "--device", "reference"],
         r"'x'|\bx\b|N|1099511627776", exit=(2, 3))
    case("absurd-allocation", "dim-2^40-plan", ["dlc", "plan", sym, "--dim", f"N={1 << 40}"],
         r"'x'|\bx\b|N|1099511627776", exit=(0, 2, 3))
    io_ = write(d, "iota-huge.dlg", dlg_graph(["i = iota(shape=[4611686018427387904], dtype=i64)", "y = reduce_sum(i, axes=[0])"],
                                              inputs="x: f32[2]", outputs="y: i64[]"))
    case("absurd-allocation", "iota-2^62-run", ["dlc", "run", io_, "--random-inputs", "--device", "reference"],
         loc(io_) + r"|4611686018427387904", exit=(2, 3))


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    d = args[0]
    global DLC
    if "--dlc" in args:
        dlc = args[args.index("--dlc") + 1]
        DLC = os.path.abspath(dlc) if os.sep in dlc else dlc
    os.makedirs(d, exist_ok=True)
    gen_dlg(d)
    gen_weights(d)
    gen_onnx(d)
    gen_dlcm(d)
    gen_idx(d)
    gen_cli(d)
    names = [c["name"] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    with open(os.path.join(d, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases in {len({c['class'] for c in CASES})} classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
