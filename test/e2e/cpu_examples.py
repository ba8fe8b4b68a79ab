# RUN: %python %s
# Every example on the compiled CPU backend against the float64 oracle
# (f32: relative error <= 1e-5), and the same module run from its .dlg
# (compiled in memory) and from its .dlcm: identical bytes out.
import os
import subprocess
import tempfile

import numpy as np
from dlc_numpy import example, rel_error

CASES = [("mnist_mlp", {"N": 16}, "logits"),
         ("lenet", {"N": 4}, "logits"),
         ("gpt2_block", {"B": 2, "T": 32}, "y"),
         ("fashion_mnist/mlp", {"N": 4}, "logits"),  # u8 images
         ("fashion_mnist/cnn", {"N": 4}, "logits")]


def run(args):
    r = subprocess.run(["dlc"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, f"dlc {' '.join(args)}: exit {r.returncode}\n{r.stderr}"


failures = []
with tempfile.TemporaryDirectory(prefix="dlc-cpu-") as tmp:
    for name, dims, output in CASES:
        model = str(example(name))
        dim_args = [f"--dim={k}={v}" for k, v in dims.items()]
        stem = os.path.join(tmp, name.replace("/", "-"))
        paths = {}
        for device in ("cpu", "reference"):
            paths[device] = f"{stem}-{device}.npy"
            run(["run", model, "--seed=3", f"--device={device}",
                 f"--output={output}=@{paths[device]}"] + dim_args)
        module = f"{stem}.dlcm"
        run(["compile", model, "-o", module] + dim_args)
        paths["dlcm"] = f"{stem}-dlcm.npy"
        run(["run", module, "--seed=3", f"--output={output}=@{paths['dlcm']}"])
        cpu, ref, dlcm = (np.load(paths[k]) for k in ("cpu", "reference", "dlcm"))
        err = rel_error(cpu, ref)
        same = cpu.tobytes() == dlcm.tobytes()
        print(f"{name}: cpu vs reference rel_error = {err:.3e}; .dlg vs .dlcm "
              f"{'identical' if same else 'DIFFER'}")
        if err > 1e-5 or not same:
            failures.append(name)
assert not failures, failures
