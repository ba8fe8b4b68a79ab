#!/usr/bin/env python3
"""Training speed: dlc against PyTorch, same model, data, batch and threads.

For each model, `dlc train` runs E epochs (its JSON log gives each epoch's
seconds) and the same network, loss and optimizer run in PyTorch eagerly
(torch.optim, tensors preloaded in memory, batches by a seeded
permutation: the fastest plain PyTorch loop, no DataLoader workers), with
the same number of threads; both in this one run, interleaved model by
model. Both evaluate the test set after each epoch, inside the epoch's
time (dlc train's epoch_seconds includes its evaluation). The table gives the median epoch time of each (the first epoch
excluded from the median: it includes dlc's compilation and PyTorch's
warm-up), steps per second, their ratio, and for the classifiers the final
test accuracy.

    bench/train/bench_train.py [--build build] [--threads 2] [--epochs 5]
        [--models mlp,cnn,gpt2] [--gpt2-shape B,T,SAMPLES] [--torch-compile]
        [--out bench/results/train.md]

With --torch-compile PyTorch also trains the model wrapped in
torch.compile (default mode; its first epoch, excluded from the median,
holds the compilation), a third column next to eager.

PyTorch comes from PyPI: `bench/train/setup_torch.sh` installs it (CPU use;
its CUDA libraries are only loaded, never used).

On a GPU machine without the compiler, dlc runs training jobs compiled here
(`dlc train --compile-only`) with `dlc-train-job`:

    bench/train/prepare_gpu.sh OUT      # here: jobs, runtime, data, scripts
    OUT/run.sh                          # there: --device cuda --jobs OUT/jobs
"""
import argparse
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path) as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


#--- dlc ---------------------------------------------------------------------


def dlc_train(build, model, data, eval_data, epochs, batch, threads, extra=(), job=None,
              device="cpu"):
    with tempfile.TemporaryDirectory(prefix="dlc-bench-train-") as tmp:
        log = os.path.join(tmp, "log.json")
        if job:  # compiled ahead: the runtime-only runner, on `device`
            cmd = [os.path.join(build, "bin", "dlc-train-job"), job, "--data", data,
                   "--epochs", str(epochs), "--log-json", log, "--seed", "1",
                   "--device", device]
        else:
            cmd = [os.path.join(build, "bin", "dlc"), "train", model, "--data", data,
                   "--epochs", str(epochs), "--batch-size", str(batch), "--log-json", log,
                   "--seed", "1", "--device", device] + list(extra)
        if eval_data:
            cmd += ["--eval", eval_data]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode:
            sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout}{done.stderr}")
        epochs_log = [json.loads(line) for line in open(log)]
    return ([e["epoch_seconds"] for e in epochs_log],
            epochs_log[-1].get("eval_accuracy"), epochs_log[-1].get("train_loss"))


#--- PyTorch ------------------------------------------------------------------


def torch_train(build_model, x, y, xt, yt, epochs, batch, threads, loss_fn, lr, classify,
                device="cpu", compiled=False):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = build_model().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    if compiled:  # the parameters stay the module's: the optimizer holds them
        model = torch.compile(model)
    x, y = x.to(device), y.to(device)
    if xt is not None:
        xt, yt = xt.to(device), yt.to(device)
    seconds = []
    for epoch in range(epochs):
        start = time.perf_counter()
        perm = torch.randperm(len(x), device=device)
        total = 0.0
        for i in range(0, len(x), batch):
            rows = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(x[rows]), y[rows])
            loss.backward()
            opt.step()
            total += loss.item() * len(rows)
        # Evaluation after each epoch, batch by batch, as the classic loop
        # does and as dlc train's epoch_seconds includes it.
        accuracy = None
        if xt is not None:
            with torch.no_grad():
                correct, eval_loss = 0, 0.0
                for i in range(0, len(xt), batch):
                    out = model(xt[i:i + batch])
                    eval_loss += loss_fn(out, yt[i:i + batch]).item() * len(out)
                    if classify:
                        correct += (out.argmax(1) == yt[i:i + batch]).sum().item()
                accuracy = correct / len(xt) if classify else None
        if device != "cpu":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds, accuracy, total / len(x)


def fashion_tensors(shape, folder=FASHION):
    import torch
    norm = lambda a: torch.tensor(a).float().div(255).sub(0.5).div(0.5).reshape((-1,) + shape)
    return (norm(idx(f"{folder}/train-images-idx3-ubyte.gz")),
            torch.tensor(idx(f"{folder}/train-labels-idx1-ubyte.gz")).long(),
            norm(idx(f"{folder}/t10k-images-idx3-ubyte.gz")),
            torch.tensor(idx(f"{folder}/t10k-labels-idx1-ubyte.gz")).long())


GPT2_SHAPE = (8, 32, 256)  # batch, T, samples: --gpt2-shape's default


def gpt2_data(folder, shape=GPT2_SHAPE):
    """The GPT-2 block's model file and random data (the same on every machine)."""
    b, t_len, samples = shape
    rng = np.random.default_rng(0)
    data = os.path.join(folder, "gpt2.npz")
    xs = rng.standard_normal((samples, t_len, 768)).astype(np.float32)
    ts = rng.standard_normal((samples, t_len, 768)).astype(np.float32)
    np.savez(data, x=xs, target=ts)
    model = os.path.join(folder, "gpt2_block.dlg")
    with open(model, "w") as f:
        f.write(open(os.path.join(ROOT, "examples", "gpt2_block.dlg")).read() + GPT2_TRAIN)
    return model, data, xs, ts


def prepare_jobs(build, out, models, device, gpt2_shape=GPT2_SHAPE):
    """Training jobs for `device` (dlc train --compile-only) in out/<model>."""
    with tempfile.TemporaryDirectory(prefix="dlc-bench-train-") as tmp:
        for name in models:
            if name in ("mlp", "cnn"):
                model = os.path.join(ROOT, "examples", "fashion_mnist", name + ".dlg")
                extra, data, batch = [], FASHION, 64
            else:
                model, data, _, _ = gpt2_data(tmp, gpt2_shape)
                extra, batch = ["--dim", f"T={gpt2_shape[1]}"], gpt2_shape[0]
            subprocess.run([os.path.join(build, "bin", "dlc"), "train", model, "--data", data,
                            "--batch-size", str(batch), "--device", device,
                            "--compile-only", os.path.join(out, name)] + extra, check=True)


def torch_mlp():
    import torch.nn as nn
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def torch_cnn():
    import torch.nn as nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


class TorchGpt2Block:
    """examples/gpt2_block.dlg in PyTorch (pre-LN, causal, tanh GELU)."""

    def __new__(cls, t):
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln_1, self.ln_2 = nn.LayerNorm(768), nn.LayerNorm(768)
                self.qkv, self.o = nn.Linear(768, 3 * 768), nn.Linear(768, 768)
                self.fc, self.proj = nn.Linear(768, 3072), nn.Linear(3072, 768)
                self.register_buffer("mask", torch.tril(torch.ones(t, t, dtype=torch.bool)))

            def forward(self, x):
                b = x.shape[0]
                q, k, v = self.qkv(self.ln_1(x)).split(768, dim=-1)
                heads = lambda z: z.reshape(b, t, 12, 64).transpose(1, 2)
                s = heads(q) @ heads(k).transpose(-1, -2) * 0.125
                p = torch.softmax(s.masked_fill(~self.mask, -1e9), dim=-1)
                r = x + self.o((p @ heads(v)).transpose(1, 2).reshape(b, t, 768))
                return r + self.proj(nn.functional.gelu(self.fc(self.ln_2(r)), approximate="tanh"))

        return Block()


GPT2_TRAIN = """
train gpt2_block(target: f32[B, T, 768]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.0001)
}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--models", default="mlp,cnn,gpt2")
    parser.add_argument("--out")
    parser.add_argument("--device", default="cpu",
                        help="cpu, or cuda (with --jobs: dlc-train-job runs them)")
    parser.add_argument("--jobs", help="a folder of training jobs by model name "
                        "(from --prepare-jobs): dlc-train-job instead of dlc train")
    parser.add_argument("--prepare-jobs", metavar="OUT",
                        help="write the models' training jobs for --device to OUT, and stop")
    parser.add_argument("--fashion", default=FASHION, help="the Fashion-MNIST IDX folder")
    parser.add_argument("--gpt2-shape", default=",".join(map(str, GPT2_SHAPE)),
                        metavar="B,T,SAMPLES",
                        help="the GPT-2 block's batch, sequence length and samples an epoch")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time PyTorch with the model under torch.compile")
    args = parser.parse_args()
    gpt2_shape = tuple(int(v) for v in args.gpt2_shape.split(","))
    if len(gpt2_shape) != 3 or min(gpt2_shape) < 1 or gpt2_shape[2] % gpt2_shape[0]:
        parser.error("--gpt2-shape: three positive numbers, SAMPLES a multiple of B")
    if args.prepare_jobs:
        prepare_jobs(args.build, args.prepare_jobs, args.models.split(","), args.device,
                     gpt2_shape)
        return
    import torch
    torch.set_num_threads(args.threads)
    tdev = "cuda" if args.device.startswith("cuda") and args.device != "cuda-emu" else "cpu"
    job = lambda name: os.path.join(args.jobs, name) if args.jobs else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-bench-train-") as tmp:
        for name in args.models.split(","):
            if name in ("mlp", "cnn"):
                model = os.path.join(ROOT, "examples", "fashion_mnist", name + ".dlg")
                batch, lr = 64, 1e-3
                shape = (784,) if name == "mlp" else (1, 28, 28)
                x, y, xt, yt = fashion_tensors(shape, args.fashion)
                d = dlc_train(args.build, model, args.fashion, None, args.epochs, batch,
                              args.threads, job=job(name), device=args.device)
                run_torch = lambda compiled: torch_train(
                    torch_mlp if name == "mlp" else torch_cnn, x, y, xt, yt, args.epochs, batch,
                    args.threads, torch.nn.functional.cross_entropy, lr, True, tdev, compiled)
                steps = (len(x) + batch - 1) // batch
                label = ("MLP 784-128-10" if name == "mlp" else "LeNet-style CNN") + \
                    ", Fashion-MNIST, Adam"
            else:
                b, t_len, samples = gpt2_shape
                model, data, xs, ts = gpt2_data(tmp, gpt2_shape)
                d = dlc_train(args.build, model, data, None, args.epochs, b, args.threads,
                              ["--dim", f"T={t_len}"], job=job(name), device=args.device)
                run_torch = lambda compiled: torch_train(
                    lambda: TorchGpt2Block(t_len), torch.tensor(xs), torch.tensor(ts), None,
                    None, args.epochs, b, args.threads, torch.nn.functional.mse_loss, 1e-4,
                    False, tdev, compiled)
                steps = samples // b
                label = f"GPT-2 block (B={b}, T={t_len}), MSE, Adam"
            t = run_torch(False)
            c = run_torch(True) if args.torch_compile else None
            median = lambda run: statistics.median(run[0][1:] or run[0])
            dm, tm = median(d), median(t)
            cm = median(c) if c else None
            rows.append((label, dm, tm, cm, steps, d[1], t[1]))
            compiled = f", torch.compile {cm:.3f} s/epoch (ratio {dm / cm:.2f})" if c else ""
            print(f"{label}: dlc {dm:.3f} s/epoch, PyTorch {tm:.3f} s/epoch, ratio {dm / tm:.2f}"
                  f"{compiled}", file=sys.stderr)
    where = "CPU"
    if tdev == "cuda":
        where = f"{torch.cuda.get_device_name()}, dlc-train-job" if args.jobs else torch.cuda.get_device_name()
    peers = "eager and torch.compile" if args.torch_compile else "eager"
    lines = [f"# Training speed: dlc vs PyTorch {torch.__version__} {peers} ({where})", "",
             f"Machine: {machine()}; {args.threads} threads for both; {args.epochs} epochs each,",
             "median epoch time over epochs 2.. (epoch 1 includes compilation and warm-up).",
             "Measured by `bench/train/bench_train.py`, all in one run.", ""]
    compile_head = (" torch.compile s/epoch | dlc / torch.compile |" if args.torch_compile
                    else "")
    lines += ["| model | dlc s/epoch | PyTorch s/epoch | dlc / PyTorch |" + compile_head +
              " dlc steps/s | PyTorch steps/s | dlc accuracy | PyTorch accuracy |",
              "|---|---:|---:|---:|" + ("---:|---:|" if args.torch_compile else "") +
              "---:|---:|---:|---:|"]
    for label, dm, tm, cm, steps, da, ta in rows:
        acc = lambda a: f"{a:.4f}" if a is not None else "—"
        compiled = f" {cm:.3f} | {dm / cm:.2f} |" if cm else ""
        lines.append(f"| {label} | {dm:.3f} | {tm:.3f} | {dm / tm:.2f} |{compiled} "
                     f"{steps / dm:.0f} | {steps / tm:.0f} | {acc(da)} | {acc(ta)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
