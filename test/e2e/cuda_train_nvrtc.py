# RUN: %python %s %dlc_src
# Every kernel of the train steps (forward, backward, optimizer update) of
# the examples with a train block compiles with NVRTC for sm_80 and sm_90,
# with no GPU: `dlc compile --train --target cuda:sm_80,sm_90 -o M.dlcm`
# fails when NVRTC rejects the module's source. The module holds state
# (parameters, moments, step) besides its cubins, PTX and cuda-emu object.
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
MODELS = {
    "examples/mnist_mlp.dlg": ["--dim=N=8"],
    "examples/lenet.dlg": ["--dim=N=2"],
    "examples/fashion_mnist/mlp.dlg": ["--dim=N=8"],
    "examples/fashion_mnist/cnn.dlg": ["--dim=N=2"],
    "examples/char_lm/char_lm.dlg": ["--dim=N=2"],
}

with tempfile.TemporaryDirectory() as tmp:
    for model, dims in MODELS.items():
        out = os.path.join(tmp, os.path.basename(model) + ".dlcm")
        cmd = ["dlc", "compile", os.path.join(ROOT, model), "--train",
               "--target=cuda:sm_80,sm_90", "-o", out] + dims
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0, f"{' '.join(cmd)}:\n{result.stderr}"
        assert os.path.getsize(out) > 0
        print(f"{model}: train step compiled for sm_80 and sm_90")
