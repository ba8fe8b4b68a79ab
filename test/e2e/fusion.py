# RUN: %python %s %dlc_src/examples
# Fusion changes where values live, never what they are: for every example
# (as written, and with its zero/one parameters drawn at random so that
# biases and norm scales count), the oracle's outputs on the fused IR
# (`dlc run --stage=fused`: canonicalise, fold constants, CSE, dlc-fuse)
# equal its outputs on the graph as built, from the same seed. Also counts
# kernels: every op but params and constants ends up in exactly one
# dlc.fusion, and the GPT-2 block needs at most 0.35 kernels per op.
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from dlc_numpy import model_info, randomise_constant_params, rel_error

EXAMPLES = sys.argv[1]
# Small sizes for the symbolic dimensions of the examples.
DIMS = {"N": 3, "B": 2, "T": 8}
TOP_LEVEL_OP = re.compile(r"^    %\S+ = (\S+)", re.MULTILINE)


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 0, f"{' '.join(cmd)} exited with {result.returncode}:\n{result.stderr}"
    return result.stdout


def dim_args(model):
    text = run(["dlc", "check", model])
    names = re.findall(r" (\w+)=\d+", (re.findall(r"^dimensions:.*$", text, re.M) or [""])[0])
    return [f"--dim={n}={DIMS.get(n, 2)}" for n in names]


def outputs_at(model, stage, tmp):
    names = model_info(model)["outputs"]
    cmd = ["dlc", "run", model, "--seed=5", f"--stage={stage}"] + dim_args(model)
    paths = {n: os.path.join(tmp, f"{stage}_{n}.npy") for n in names}
    cmd += [f"--output={n}=@{p}" for n, p in paths.items()]
    run(cmd)
    return {n: np.load(p) for n, p in paths.items()}


def top_level_ops(model, emit):
    text = run(["dlc", "compile", model, f"--emit={emit}"] + dim_args(model))
    return TOP_LEVEL_OP.findall(text)


with tempfile.TemporaryDirectory(prefix="dlc-fusion-") as tmp:
    models = sorted(glob.glob(os.path.join(EXAMPLES, "*.dlg")))
    assert len(models) >= 3, models
    for path in models:
        name = os.path.basename(path)[:-4]
        random_path = os.path.join(tmp, name + "_random.dlg")
        with open(path) as f, open(random_path, "w") as out:
            out.write(randomise_constant_params(f.read()))
        for variant, model in (("as written", path), ("random params", random_path)):
            graph = outputs_at(model, "graph", tmp)
            fused = outputs_at(model, "fused", tmp)
            for out in graph:
                a, b = fused[out], graph[out]
                assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
                err = rel_error(a, b)
                identical = np.array_equal(a, b, equal_nan=True)
                print(f"{name} ({variant}) {out}: fused vs graph rel error {err:.3g}"
                      f"{' (bit-identical)' if identical else ''}")
                assert err <= 1e-12, f"{name} ({variant}) {out}: rel error {err}"

        ops = [op for op in top_level_ops(path, "mlir") if op not in ("dlc.param", "dlc.constant")]
        fused_ops = top_level_ops(path, "fused")
        strays = sorted(set(fused_ops) - {"dlc.param", "dlc.constant", "dlc.fusion"})
        assert not strays, f"{name}: ops outside fusion regions after dlc-fuse: {strays}"
        kernels = fused_ops.count("dlc.fusion")
        print(f"{name}: {len(ops)} ops before fusion, {kernels} kernels after "
              f"({kernels / len(ops):.2f} per op)")
        if name == "gpt2_block":
            assert kernels <= 0.35 * len(ops), f"gpt2_block: {kernels} kernels for {len(ops)} ops"
