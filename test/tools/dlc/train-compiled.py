# RUN: rm -rf %t && mkdir -p %t && %python %s %t
# `dlc train` of the MNIST MLP (examples/mnist_mlp.dlg) on a small synthetic
# task, through the compiled train step and evaluator:
#  1. it learns (the loss falls, the evaluation accuracy rises);
#  2. cuda-emu (the CUDA kernels on the CPU) trains to the same losses as the
#     CPU, to the printed digits;
#  3. the final parameters are bit-reproducible, and stopping with
#     --max-steps then --resume ends bit for bit where one run ends, also
#     when a run is killed (SIGKILL) while writing a checkpoint;
#  4. `dlc run --params` of a checkpoint runs inference with the trained
#     weights, and refuses a checkpoint of another model, naming the tensors;
#  6. (below 5) a checkpoint records where it ran: resuming on another device
#     is refused under --deterministic and noted otherwise;
#  5. `--export` writes the trained model as a .dlcm that computes what the
#     checkpoint does, and so does `dlc compile --params`.
import os
import re
import subprocess
import sys
import time

import numpy as np

tmp = sys.argv[1]
root = os.environ.get("DLC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..")
model = os.path.join(root, "examples", "mnist_mlp.dlg")
rng = np.random.default_rng(0)
x = rng.standard_normal((600, 784)).astype(np.float32)
x[:, 10:] *= 0.05  # ten informative features, little noise elsewhere
label = x[:, :10].argmax(1).astype(np.int32)  # a task the MLP learns quickly
np.savez(f"{tmp}/train.npz", x=x[:500], label=label[:500])
np.savez(f"{tmp}/eval.npz", x=x[500:], label=label[500:])

BASE = ["dlc", "train", model, "--data", f"{tmp}/train.npz", "--eval", f"{tmp}/eval.npz",
        "--batch-size", "50", "--seed", "3"]


def run(args, expect=0, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    assert p.returncode == expect, (args, p.returncode, p.stdout, p.stderr)
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


def epochs(out):
    return [tuple(float(v) for v in re.findall(r"(?:train_loss|eval_loss|eval_accuracy) ([0-9.]+)", line))
            for line in out.splitlines() if line.startswith("epoch ")]


# 1. It learns.
cpu = run(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/cpu",
                  "--export", f"{tmp}/trained.dlcm"])
assert f"exported: {tmp}/trained.dlcm" in cpu.stdout, cpu.stdout
lines = epochs(cpu.stdout)
assert len(lines) == 4, cpu.stdout
assert lines[-1][0] < lines[0][0] and lines[-1][1] < lines[0][1], cpu.stdout
assert lines[-1][2] >= lines[0][2] + 0.2, cpu.stdout
print(cpu.stdout)

# 2. cuda-emu trains as the CPU does.
emu = run(BASE + ["--epochs", "4", "--device", "cuda-emu"])
assert epochs(emu.stdout) == lines, (emu.stdout, cpu.stdout)

# 3. Reproducible, and resumable bit for bit (10 steps an epoch).
final = read(f"{tmp}/cpu/ckpt-40.safetensors")
run(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/again"])
assert read(f"{tmp}/again/ckpt-40.safetensors") == final
run(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/resume", "--max-steps", "13"])
run(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/resume", "--resume"])
assert read(f"{tmp}/resume/ckpt-40.safetensors") == final
env = dict(os.environ, DLC_TEST_CHECKPOINT_PAUSE_MS="3000")
proc = subprocess.Popen(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/kill"], env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 120
while not os.path.exists(f"{tmp}/kill/.ckpt-20.safetensors.tmp"):
    assert time.time() < deadline and proc.poll() is None, "no second checkpoint"
    time.sleep(0.01)
proc.kill()
proc.wait()
assert sorted(n for n in os.listdir(f"{tmp}/kill") if n.startswith("ckpt-")) == ["ckpt-10.safetensors"]
run(BASE + ["--epochs", "4", "--checkpoint-dir", f"{tmp}/kill", "--resume"])
assert read(f"{tmp}/kill/ckpt-40.safetensors") == final

# 4. Inference with the trained weights.
np.save(f"{tmp}/x.npy", x[500:550])
run(["dlc", "run", model, "--dim", "N=50", "--params", f"{tmp}/cpu/ckpt-40.safetensors",
     "--input", f"x=@{tmp}/x.npy", "--output", f"logits=@{tmp}/logits.npy"])
accuracy = (np.load(f"{tmp}/logits.npy").argmax(1) == label[500:550]).mean()
assert abs(accuracy - lines[-1][2]) <= 0.2, (accuracy, lines[-1])
other = run(["dlc", "run", os.path.join(root, "examples", "lenet.dlg"), "--dim", "N=2",
             "--params", f"{tmp}/cpu/ckpt-40.safetensors"], expect=2)
assert "does not fit the model: 'conv1_w' (f32[6, 1, 5, 5]) is missing" in other.stderr, other.stderr

# 5. The exported module, and one compiled with --params, equal the checkpoint.
run(["dlc", "run", f"{tmp}/trained.dlcm", "--input", f"x=@{tmp}/x.npy",
     "--expected-output", f"logits=@{tmp}/logits.npy", "--rtol", "1e-6", "--atol", "1e-6"])
run(["dlc", "compile", model, "--dim", "N=50", "--params", f"{tmp}/cpu/ckpt-40.safetensors",
     "-o", f"{tmp}/compiled.dlcm"])
run(["dlc", "run", f"{tmp}/compiled.dlcm", "--input", f"x=@{tmp}/x.npy",
     "--expected-output", f"logits=@{tmp}/logits.npy", "--rtol", "1e-6", "--atol", "1e-6"])
bad = run(BASE + ["--epochs", "1", "--export", f"{tmp}/trained.onnx"], expect=2)
assert "writing ONNX is not supported" in bad.stderr, bad.stderr

# 6. Another execution configuration on resume.
run(BASE + ["--epochs", "2", "--checkpoint-dir", f"{tmp}/moved", "--max-steps", "5"])
refused = run(BASE + ["--epochs", "2", "--checkpoint-dir", f"{tmp}/moved", "--resume",
                      "--device", "cuda-emu", "--deterministic"], expect=2)
assert "where it ran (--deterministic) is 'cpu, " in refused.stderr, refused.stderr
assert "this run's 'cuda-emu'" in refused.stderr, refused.stderr
moved = run(BASE + ["--epochs", "2", "--checkpoint-dir", f"{tmp}/moved", "--resume",
                    "--device", "cuda-emu"])
assert "this run is on 'cuda-emu': it continues, but not bit for bit" in moved.stderr, moved.stderr
print("trained, cuda-emu equal, bit-exact resume, inference with the checkpoint, export, "
      "execution recorded: ok")
