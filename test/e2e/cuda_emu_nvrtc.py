# RUN: %python %s %dlc_src/examples %dlc_src/test/e2e/cuda_emu.py
# Every generated kernel of every example and fusion pattern compiles with
# NVRTC for sm_80 and sm_90 (no GPU needed): `dlc compile --target
# cuda:sm_80,sm_90 -o M.dlcm` fails when NVRTC rejects the module's source.
# The module then carries a cubin and PTX per architecture and the cuda-emu
# object. The tensor-core kernels of --precision tf32, bf16 and f16 compile
# too. Without a GPU, `dlc run --device cuda` exits 3 with a message.
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

EXAMPLES, PATTERN_FILE = sys.argv[1], sys.argv[2]
DIMS = {"N": 3, "B": 2, "T": 16}

# The fusion patterns of the cuda-emu test, without running it.
source = open(PATTERN_FILE).read()
PATTERNS = {}
exec(source[source.index("PATTERNS = {"):source.index("\n\n\ndef run(")], {}, ns := {})
PATTERNS = ns["PATTERNS"]


def run(cmd, expect=0):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert result.returncode == expect, (
        f"{' '.join(cmd)} exited with {result.returncode}, not {expect}:\n"
        f"{result.stderr.decode(errors='replace')}")
    return result


def dims(model):
    text = run(["dlc", "check", model]).stdout.decode()
    names = re.findall(r" (\w+)=\d+", (re.findall(r"^dimensions:.*$", text, re.M) or [""])[0])
    return [f"--dim={n}={DIMS.get(n, 2)}" for n in names]


models = {}
with tempfile.TemporaryDirectory() as tmp:
    for example in sorted(glob.glob(os.path.join(EXAMPLES, "*.dlg")) +
                          glob.glob(os.path.join(EXAMPLES, "fashion_mnist", "*.dlg"))):
        models[os.path.splitext(os.path.basename(example))[0]] = example
    for name, text in PATTERNS.items():
        path = os.path.join(tmp, name + ".dlg")
        with open(path, "w") as f:
            f.write(text.strip() + "\n")
        models[name] = path
    for name, model in models.items():
        out = os.path.join(tmp, name + ".dlcm")
        run(["dlc", "compile", model, "--target=cuda:sm_80,sm_90", "-o", out] + dims(model))
        data = open(out, "rb").read()
        for arch in ("sm_80", "sm_90"):
            assert f"kernels.{arch}.cubin".encode() in data, f"{name}: no {arch} cubin"
            assert f"kernels.{arch}.ptx".encode() in data, f"{name}: no {arch} PTX"
        print(f"ok {name}: NVRTC sm_80 and sm_90")
    # The tensor-core GEMM in each instruction it uses (mma.sync m16n8k8.tf32,
    # m16n8k16.bf16, m16n8k16.f16), as --precision makes them.
    for name in ("mnist_mlp", "gpt2_block", "contraction_bias_gelu",
                 "contraction_transposed_operands", "contraction_layout_tail",
                 "conv_implicit_gemm"):
        model = models[name]
        for precision in ("tf32", "bf16", "f16"):
            out = os.path.join(tmp, f"{name}_{precision}.dlcm")
            run(["dlc", "compile", model, "--target=cuda:sm_80,sm_90", f"--precision={precision}",
                 "-o", out] + dims(model))
            emitted = run(["dlc", "compile", model, "--target=cuda:sm_90", f"--precision={precision}",
                           "--emit=cuda"] + dims(model)).stdout.decode()
            assert f"dlc_mma_{precision}(acc" in emitted, f"{name}: no {precision} mma.sync kernel"
            print(f"ok {name} --precision {precision}: NVRTC sm_80 and sm_90")
    if not os.path.exists("/dev/nvidia0"):
        result = run(["dlc", "run", models["mnist_mlp"], "--device=cuda", "--random-inputs"] + dims(models["mnist_mlp"]),
                     expect=3)
        assert b"CUDA" in result.stderr, result.stderr
        print("ok no GPU: --device cuda exits 3")
print(f"{len(models)} modules compiled by NVRTC for sm_80 and sm_90")
