#!/usr/bin/env python3
"""Runs ONNX's node conformance tests through `dlc run` and classifies them.

Each test folder of Debian's libonnx-testdata holds `model.onnx` and
`test_data_set_*/{input,output}_N.pb`. For every device asked for, every data
set is run with `dlc run model.onnx --device D --input ... --output ...` and
each output compared with ONNX's own tolerances (rtol 1e-3, atol 1e-7; NaN
equals NaN; integer and boolean outputs exactly; dtype and shape must match).

Every test gets one class per device:

  pass         every data set matches
  fail         dlc ran but a value, shape or dtype differs; or it crashed,
               timed out, or rejected a model it should import (the reason
               is recorded)
  unsupported  dlc said, by design, that it does not take the model: an op
               type it does not support (the importer lists them all), an
               element type, attribute or output it does not support, or a
               value it needs at import time (dlc builds static shapes) that
               the graph computes from its inputs
  excluded     the test is outside what dlc is meant to run (EXCLUSION RULE)

EXCLUSION RULE (also in bench/results/onnx-conformance.md). A test is
excluded when its model
  1. imports an opset of the default domain outside 1..21, or any other
     domain (ai.onnx.preview.training, ai.onnx.ml, ...);
  2. has a graph input or output that is not a tensor (sequence, optional,
     map), or a string tensor;
  3. uses a sequence, optional, string or control-flow-over-sequences op
     (Sequence*, Optional*, SplitToSequence, ConcatFromSequence,
     StringNormalizer, TfIdfVectorizer, RegexFullMatch, ...);
  4. uses a quantized op (QuantizeLinear, DequantizeLinear,
     DynamicQuantizeLinear, QLinearConv, QLinearMatMul, ConvInteger,
     MatMulInteger);
  5. uses a training op (Adagrad, Adam, Momentum, Gradient);
  6. uses a random op whose outputs are not fixed (Bernoulli, RandomNormal,
     RandomNormalLike, RandomUniform, RandomUniformLike, Multinomial), or
     Dropout given a training_mode input.
Everything else is applicable: pass rate = pass / (pass + fail + unsupported).

Modes:
  (default)             run every test, print totals per device
  --enforce FILE        run the tests listed in FILE (the must-pass list) and
                        fail, listing them, if any does not pass
  --write-must-pass F   write the tests that pass on the first device to F
  --markdown F          write the counts, failure reasons and unsupported ops
                        ranked by how many tests they block, as Markdown

--data takes one folder of test folders or several, comma-separated (the
model sets pytorch-converted, pytorch-operator and simple beside node/);
with several, a test is named <set>/<test>. --onnxruntime adds ONNX Runtime
as one more "device", run in this process on the same tests, data sets,
exclusions and tolerances, so that dlc and ONNX Runtime are measured in the
same run.

Progress is shown on a terminal (stderr) and nothing is printed per test
otherwise. Runs with --jobs workers (default 2).

cpu compiles every test's kernels with the host compiler (no kernel cache);
cuda-emu's compiled kernels are cached in a temporary $DLC_CACHE_DIR the
runner makes for the run (unless one is set). A generated source that does
not compile is a "compile error in generated code" failure (a code-generator
bug; test/conformance/backend-bugs.md).
"""

import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
RTOL, ATOL = 1e-3, 1e-7

SEQUENCE_OPS = {
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
    "SequenceInsert", "SequenceLength", "SequenceMap", "SplitToSequence",
    "ConcatFromSequence", "Optional", "OptionalGetElement",
    "OptionalHasElement", "StringNormalizer", "TfIdfVectorizer",
    "RegexFullMatch", "StringConcat", "StringSplit",
}
QUANTIZED_OPS = {
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
    "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
}
TRAINING_OPS = {"Adagrad", "Adam", "Momentum", "Gradient"}
RANDOM_OPS = {
    "Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
    "RandomUniformLike", "Multinomial",
}


def load_onnx():
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        sys.exit(f"run_conformance: needs the Python packages onnx and numpy "
                 f"(scripts/setup.sh installs them): {e}")


def all_nodes(graph):
    """Every node of a graph and of its subgraphs (If/Loop/Scan bodies)."""
    import onnx
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from all_nodes(g)


def exclusion(model, test_dir):
    """The reason a test is excluded (see EXCLUSION RULE), or None."""
    import onnx
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            if not 1 <= opset.version <= 21:
                return f"opset {opset.version} outside 1..21"
        else:
            return f"domain {opset.domain}"
    initializers = {t.name for t in model.graph.initializer}
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name in initializers:
            continue
        kind = value.type.WhichOneof("value")
        if kind != "tensor_type":
            return f"{kind} input/output"
        if value.type.tensor_type.elem_type == onnx.TensorProto.STRING:
            return "string tensor"
    for node in all_nodes(model.graph):
        op = node.op_type
        if op in SEQUENCE_OPS:
            return f"sequence/optional/string op {op}"
        if op in QUANTIZED_OPS:
            return f"quantized op {op}"
        if op in TRAINING_OPS:
            return f"training op {op}"
        if op in RANDOM_OPS:
            return f"random op {op}"
        if op == "Dropout" and len(node.input) >= 3 and node.input[2]:
            return "random op Dropout (training_mode given)"
    return None


def data_sets(test_dir):
    return sorted(d for d in os.listdir(test_dir)
                  if d.startswith("test_data_set_"))


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.name, numpy_helper.to_array(tensor)


def is_bf16(array):
    return array.dtype.name == "bfloat16"


def bf16_bits(array):
    """The uint16 bit patterns of a bfloat16 array (ml_dtypes or uint16)."""
    import numpy as np
    return np.ascontiguousarray(array).view(np.uint16)


def bf16_to_f32(bits):
    import numpy as np
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write_tensor(path_stem, name, array, bf16=False):
    """Writes an input for `dlc run`: .npy, or .safetensors for bfloat16
    (NumPy has no bfloat16 dtype). Returns the path."""
    import json
    import numpy as np
    if not (bf16 or is_bf16(array)):
        np.save(path_stem + ".npy", array)
        return path_stem + ".npy"
    data = bf16_bits(array).tobytes()
    header = json.dumps({name: {"dtype": "BF16", "shape": list(array.shape),
                                "data_offsets": [0, len(data)]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(path_stem + ".safetensors", "wb") as f:
        f.write(len(header).to_bytes(8, "little") + header + data)
    return path_stem + ".safetensors"


def read_output(path, name):
    """An output `dlc run` wrote (.npy, or .safetensors holding bf16 bits)."""
    import json
    import numpy as np
    if path.endswith(".npy"):
        return np.load(path)
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        entry = header[name]
        f.seek(8 + size + entry["data_offsets"][0])
        raw = f.read(entry["data_offsets"][1] - entry["data_offsets"][0])
    if entry["dtype"] != "BF16":
        raise ValueError(f"unexpected dtype {entry['dtype']} in {path}")
    return bf16_to_f32(np.frombuffer(raw, np.uint16).reshape(entry["shape"]))


def compare(actual, expected):
    """None when `actual` matches `expected`, else a short reason."""
    import numpy as np
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} vs expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)} vs expected {list(expected.shape)}"
    if expected.dtype.kind in "fc":
        ok = np.isclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        ok = actual == expected
    if not np.all(ok):
        bad = int(np.size(ok) - np.count_nonzero(ok))
        return f"values differ ({bad} of {np.size(ok)} elements)"
    return None


UNSUPPORTED_PATTERNS = [
    ("op", re.compile(r"op types? that dlc does not support")),
    ("element type", re.compile(r"which dlc does not support|is not one dlc computes with"
                                r"|npy header .* dtype .* is not supported")),
    ("attribute", re.compile(r"attribute '[^']*' is not supported")),
    ("output", re.compile(r"output '[^']*' is not supported")),
    ("window rank", re.compile(r"-D windows are not supported")),
    ("value needed at import time", re.compile(r"must be known at import time")),
    ("training mode", re.compile(r"training-mode dropout|exists only in training mode")),
]


def classify_error(code, text):
    """(class, reason) of a failed `dlc run`."""
    first = next((line for line in text.splitlines() if "error" in line),
                 text.strip().splitlines()[0] if text.strip() else "")
    if code == 2:
        if "is not available yet" in text:
            return "unavailable", "device not available"
        for kind, pattern in UNSUPPORTED_PATTERNS:
            if pattern.search(text):
                return "unsupported", kind
        return "fail", "import error: " + normalize(first)
    if code == 3:
        return "fail", "runtime fault: " + normalize(first)
    if code == 70 and "host compiler failed" in text:
        # The generated C++ (cpu) or CUDA (cuda-emu) does not compile: a
        # code-generator bug. The compiler's first error names it.
        cc = re.search(r"^\S+:\d+:\d+: error: (.*)$", text, re.M)
        return "fail", ("compile error in generated code: " +
                        normalize(cc.group(1) if cc else first))
    if code in (70, -6, 134, -11, 139):
        return "fail", f"internal error (exit {code}): " + normalize(first)
    return "fail", f"exit {code}: " + normalize(first)


def normalize(message):
    """A message with names and numbers blanked, to group failures."""
    message = re.sub(r"^.*?error: ", "", message)
    message = re.sub(r"'[^']*'", "'…'", message)
    message = re.sub(r"\b\d+(\.\d+)?\b", "N", message)
    message = re.sub(r"‘[^’]*’", "‘…’", message)  # GCC's quotes
    return message.strip()[:160]


def unsupported_ops(text):
    """Op types the importer's one error lists."""
    return re.findall(r"^\s+([\w.]+) \(\d+ nodes?\):", text, re.M)


def specialised_model(model, constants, tmp):
    """A copy of `model` in which the graph inputs in `constants` (name ->
    array) are initializers holding those values; returns its path."""
    import onnx
    from onnx import numpy_helper
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for name, array in constants.items():
        copy.graph.initializer.append(numpy_helper.from_array(array, name))
    kept = [v for v in copy.graph.input if v.name not in constants]
    del copy.graph.input[:]
    copy.graph.input.extend(kept)
    path = os.path.join(tmp, "model.onnx")
    onnx.save(copy, path)
    return path


COMPILE_TIME_INPUT = re.compile(r"input '([^']*)' \([^)]*\) must be known at import time")


def run_data_set(args, model, model_path, set_dir, device, tmp):
    """(class, reason, unsupported ops, specialised) of one data set.

    dlc compiles for static shapes, so an input whose value decides a shape
    (Reshape's shape, Slice's starts, ...) must be known when it compiles.
    When dlc names such an input, the runner folds that input's value from
    the data set into the model as an initializer and runs again (when dlc
    names a value computed from inputs, every small integer input is
    folded); a test that passes this way counts as a pass "with
    compile-time inputs"."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [v.name for v in model.graph.input if v.name not in initializers]
    outputs = [v.name for v in model.graph.output]
    declared = {v.name: v.type.tensor_type.elem_type for v in model.graph.input}
    arrays, bf16_inputs = {}, set()
    for i, name in enumerate(inputs):
        pb = os.path.join(set_dir, f"input_{i}.pb")
        if os.path.exists(pb):
            arrays[name] = read_pb(pb)[1]
            if declared.get(name) == 16:  # bfloat16, held as bits in 1.12's data
                bf16_inputs.add(name)
    constants = {}
    while True:
        path = specialised_model(model, constants, tmp) if constants else model_path
        # Inputs the test data leaves out (optional ones) are seeded random.
        cmd = [args.dlc, "run", path, "--device", device, "--show", "0", "--random-inputs"]
        for i, name in enumerate(inputs):
            if name in arrays and name not in constants:
                file = write_tensor(os.path.join(tmp, f"input_{i}"), name, arrays[name],
                                    name in bf16_inputs)
                cmd += ["--input", f"{name}=@{file}"]
        files = []
        for i, (name, info) in enumerate(zip(outputs, model.graph.output)):
            bf16 = info.type.tensor_type.elem_type == 16  # TensorProto.BFLOAT16
            files.append(os.path.join(tmp, f"output_{i}" + (".safetensors" if bf16 else ".npy")))
            cmd += ["--output", f"{name}=@{files[-1]}"]
        try:
            result = subprocess.run(cmd, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return "fail", f"timeout after {args.timeout} s", [], bool(constants)
        text = result.stdout.decode(errors="replace")
        if result.returncode != 0:
            named = COMPILE_TIME_INPUT.findall(text)
            needed = [n for n in named if n in arrays and n not in constants]
            if named and not needed:
                # A value computed from inputs: fold every small integer input.
                needed = [n for n, a in arrays.items() if n not in constants
                          and a.dtype.kind in "iu" and a.size <= 64]
            if result.returncode == 2 and needed:
                constants.update({n: arrays[n] for n in needed})
                continue
            cls, why = classify_error(result.returncode, text)
            return (cls, why, unsupported_ops(text) if cls == "unsupported" else [],
                    bool(constants))
        for i, name in enumerate(outputs):
            _, expected = read_pb(os.path.join(set_dir, f"output_{i}.pb"))
            if files[i].endswith(".safetensors"):  # bfloat16, as bits or ml_dtypes
                expected = bf16_to_f32(bf16_bits(expected))
            problem = compare(read_output(files[i], name), expected)
            if problem:
                return "fail", f"output {i}: {problem}", [], bool(constants)
        return "pass", "", [], bool(constants)


ORT_UNSUPPORTED = re.compile(r"NOT_IMPLEMENTED|not implemented|No Op registered|"
                             r"is not supported|Unsupported", re.I)


def run_onnxruntime(model_path, model, test_dir):
    """(class, reason, []) of one test under ONNX Runtime, every data set
    compared with the same tolerances as dlc's outputs."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - ORT raises its own exception types
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        return ("unsupported" if ORT_UNSUPPORTED.search(str(e)) else "fail",
                "load error: " + normalize(text), [])
    names = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in model.graph.output]
    for s in data_sets(test_dir):
        set_dir = os.path.join(test_dir, s)
        feeds = {}
        for i, name in enumerate(names):
            pb = os.path.join(set_dir, f"input_{i}.pb")
            if os.path.exists(pb):
                feeds[name] = read_pb(pb)[1]
        try:
            got = session.run(outputs, feeds)
        except Exception as e:  # noqa: BLE001
            text = str(e).splitlines()[0] if str(e) else type(e).__name__
            return "fail", "run error: " + normalize(text), []
        for i, value in enumerate(got):
            _, expected = read_pb(os.path.join(set_dir, f"output_{i}.pb"))
            import numpy as np
            problem = compare(np.asarray(value), expected)
            if problem:
                return "fail", f"output {i}: {problem}", []
    return "pass", "", []


def run_test(args, test_dir, device):
    """(class, reason, unsupported op types) of one test on one device; a
    pass that needed compile-time inputs has the reason "compile-time
    inputs"."""
    import onnx
    model_path = os.path.join(test_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    reason = exclusion(model, test_dir)
    if reason:
        return "excluded", reason, []
    sets = data_sets(test_dir)
    if not sets:
        return "excluded", "no test data", []
    if device == "onnxruntime":
        return run_onnxruntime(model_path, model, test_dir)
    specialised = False
    with tempfile.TemporaryDirectory(prefix="dlc-conf-") as tmp:
        for s in sets:
            cls, why, ops, spec = run_data_set(args, model, model_path,
                                               os.path.join(test_dir, s), device, tmp)
            specialised |= spec
            if cls != "pass":
                return cls, why, ops
    return "pass", "compile-time inputs" if specialised else "", []


def find_dlc(explicit):
    if explicit:
        return explicit
    found = shutil.which("dlc")
    if found:
        return found
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "bin", "dlc")


def markdown(results, tests, devices):
    lines = []
    lines.append("| device | tests | excluded | applicable | pass | of which with compile-time inputs "
                 "| fail | unsupported | pass rate |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for device in devices:
        counts = collections.Counter(results[(t, device)][0] for t in tests)
        folded = sum(1 for t in tests if results[(t, device)][:2] == ("pass", "compile-time inputs"))
        applicable = counts["pass"] + counts["fail"] + counts["unsupported"]
        rate = 100.0 * counts["pass"] / applicable if applicable else 0.0
        lines.append(f"| {device} | {len(tests)} | {counts['excluded']} | {applicable} | "
                     f"{counts['pass']} | {folded} | {counts['fail']} | {counts['unsupported']} "
                     f"| {rate:.1f}% |")
    first = devices[0]
    for device in devices:
        lines.append("")
        lines.append(f"### Failures on {device}, by reason")
        lines.append("")
        reasons = collections.Counter()
        examples = {}
        for t in tests:
            cls, why, _ = results[(t, device)]
            if cls == "fail":
                key = re.sub(r"^output \d+: ", "", why)
                key = re.sub(r"\(\d+ of \d+ elements\)", "", key).strip()
                reasons[key] += 1
                examples.setdefault(key, []).append(t)
        lines.append("| tests | reason | examples |")
        lines.append("|---:|---|---|")
        for why, count in reasons.most_common():
            ex = ", ".join(e.replace("test_", "") for e in examples[why][:4])
            lines.append(f"| {count} | {why} | {ex} |")
    lines.append("")
    lines.append(f"### Unsupported on {first}, by kind")
    lines.append("")
    kinds = collections.Counter(results[(t, first)][1] for t in tests
                                if results[(t, first)][0] == "unsupported")
    lines.append("| tests | kind |")
    lines.append("|---:|---|")
    for kind, count in kinds.most_common():
        lines.append(f"| {count} | {kind} |")
    lines.append("")
    lines.append("### Unsupported op types, ranked by the tests they block")
    lines.append("")
    blocked = collections.defaultdict(list)
    for t in tests:
        for op in results[(t, first)][2]:
            blocked[op].append(t)
    lines.append("| tests | op type | examples |")
    lines.append("|---:|---|---|")
    for op, ts in sorted(blocked.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ex = ", ".join(e.replace("test_", "") for e in ts[:3])
        lines.append(f"| {len(ts)} | {op} | {ex} |")
    lines.append("")
    lines.append("### Excluded, by rule")
    lines.append("")
    excl = collections.Counter(results[(t, first)][1] for t in tests
                               if results[(t, first)][0] == "excluded")
    lines.append("| tests | rule |")
    lines.append("|---:|---|")
    for why, count in excl.most_common():
        lines.append(f"| {count} | {why} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dlc", help="the dlc binary (default: on PATH, else build/bin/dlc)")
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help="folder of test folders, or several, comma-separated")
    parser.add_argument("--devices", default="reference",
                        help="comma-separated devices for `dlc run --device` (default reference)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test data set")
    parser.add_argument("--filter", help="only tests whose name matches this regular expression")
    parser.add_argument("--enforce", metavar="FILE", help="run the listed tests; fail on any that does not pass")
    parser.add_argument("--write-must-pass", metavar="FILE")
    parser.add_argument("--markdown", metavar="FILE")
    parser.add_argument("--onnxruntime", action="store_true",
                        help="also run every test under ONNX Runtime, as one more device")
    parser.add_argument("--verbose", action="store_true", help="print every test's class and reason")
    args = parser.parse_args()
    load_onnx()
    args.dlc = find_dlc(args.dlc)
    devices = [d for d in args.devices.split(",") if d]
    if args.onnxruntime:
        try:
            import onnxruntime  # noqa: F401
        except ImportError as e:
            sys.exit(f"run_conformance: --onnxruntime needs the Python package onnxruntime: {e}")
        devices.append("onnxruntime")
    folders = [d for d in args.data.split(",") if d]
    for folder in folders:
        if not os.path.isdir(folder):
            sys.exit(f"run_conformance: no test data in {folder} (install libonnx-testdata)")
    # One folder: tests by name; several: <set>/<test>, relative to the
    # folders' common parent.
    root = folders[0] if len(folders) == 1 else os.path.commonpath(folders)
    tests = sorted(os.path.relpath(os.path.join(folder, d), root)
                   for folder in folders for d in os.listdir(folder)
                   if os.path.exists(os.path.join(folder, d, "model.onnx")))
    args.data = root
    must_pass = None
    if args.enforce:
        with open(args.enforce) as f:
            must_pass = [line.strip() for line in f
                         if line.strip() and not line.startswith("#")]
        missing = sorted(set(must_pass) - set(tests))
        if missing:
            sys.exit("run_conformance: must-pass tests missing from the data: " + ", ".join(missing))
        tests = must_pass
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]

    # cuda-emu caches the shared objects it compiles under $DLC_CACHE_DIR
    # (default ~/.cache/dlc): keep this run's in a temporary folder, shared
    # by its workers (the data sets of one test compile the same source) and
    # removed at the end. The CPU backend has no kernel cache: every run
    # compiles its kernels.
    cache = None
    if not os.environ.get("DLC_CACHE_DIR"):
        cache = tempfile.mkdtemp(prefix="dlc-conf-cache-")
        os.environ["DLC_CACHE_DIR"] = cache

    jobs = [(t, d) for d in devices for t in tests]
    results = {}
    tty = sys.stderr.isatty()
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_test, args, os.path.join(args.data, t), d): (t, d)
                   for t, d in jobs}
        done = collections.Counter()
        for k, future in enumerate(concurrent.futures.as_completed(futures), 1):
            key = futures[future]
            try:
                results[key] = future.result()
            except Exception as e:  # a broken test folder is a failure, not a crash
                results[key] = ("fail", f"runner error: {e}", [])
            done[results[key][0]] += 1
            if args.verbose:
                print(f"{key[1]:10} {results[key][0]:12} {key[0]}  {results[key][1]}", flush=True)
            if tty:
                sys.stderr.write(f"\r[{k}/{len(jobs)}] " +
                                 " ".join(f"{c} {n}" for c, n in sorted(done.items())) +
                                 f"  {time.time() - start:.0f} s ")
                sys.stderr.flush()
    if tty:
        sys.stderr.write("\n")
    if cache:
        shutil.rmtree(cache, ignore_errors=True)

    for device in devices:
        counts = collections.Counter(results[(t, device)][0] for t in tests)
        applicable = counts["pass"] + counts["fail"] + counts["unsupported"]
        rate = 100.0 * counts["pass"] / applicable if applicable else 0.0
        folded = sum(1 for t in tests if results[(t, device)] [:2] == ("pass", "compile-time inputs"))
        print(f"{device}: {len(tests)} tests, {counts['excluded']} excluded, "
              f"{applicable} applicable: {counts['pass']} pass ({folded} with compile-time "
              f"inputs), {counts['fail']} fail, "
              f"{counts['unsupported']} unsupported ({rate:.1f}% pass)"
              + (f", {counts['unavailable']} device unavailable" if counts["unavailable"] else ""))

    if args.write_must_pass:
        passing = [t for t in tests if results[(t, devices[0])][0] == "pass"]
        with open(args.write_must_pass, "w") as f:
            f.write(f"# ONNX node tests that must pass on {devices[0]} "
                    "(test/conformance/run_conformance.py --enforce).\n")
            f.write("# Regenerate with --write-must-pass after making more pass.\n")
            f.write("\n".join(passing) + "\n")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results, tests, devices))

    if must_pass is not None:
        regressions = [(t, d, results[(t, d)]) for d in devices for t in tests
                       if results[(t, d)][0] != "pass"]
        if regressions:
            print(f"{len(regressions)} must-pass test(s) no longer pass:")
            for t, d, (cls, why, _) in regressions:
                print(f"  {t} [{d}]: {cls}: {why}")
            return 1
        print(f"all {len(tests)} must-pass tests pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
