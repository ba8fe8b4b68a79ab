# REQUIRES: tmpfs-mount
# RUN: rm -rf %t && mkdir -p %t && unshare --user --map-root-user --mount %python %s %t
# A disk that fills up while `dlc train` writes a checkpoint: exit 3 with
# the reason and the file, the previous checkpoint intact, no temporary left
# behind; once space is freed, --resume continues from that checkpoint and
# ends where an uninterrupted run ends. The disk is a 64 KiB tmpfs in a
# private mount namespace (lit's tmpfs-mount feature). Uses --fake-step.
import os
import subprocess
import sys

import numpy as np

tmp = sys.argv[1]
disk = f"{tmp}/disk"
os.makedirs(disk)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", disk], check=True)

rng = np.random.default_rng(0)
x = rng.standard_normal((16, 3)).astype(np.float32)
np.savez(f"{tmp}/d.npz", x=x, y=(x @ np.float32([1, -2, 0.5])).astype(np.float32))
open(f"{tmp}/m.dlg", "w").close()
TRAIN = ["dlc", "train", f"{tmp}/m.dlg", "--fake-step=linear:3", "--data", f"{tmp}/d.npz",
         "--batch-size", "8", "--optimizer", "adamw", "--seed", "5", "--epochs", "6"]


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == expect, (args, p.returncode, p.stdout, p.stderr)
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


run(TRAIN + ["--checkpoint-dir", f"{tmp}/whole"])
expected = read(f"{tmp}/whole/ckpt-12.safetensors")

# One epoch on the small disk, then fill it to the last byte.
ckpt = f"{disk}/ckpt"
run(TRAIN + ["--checkpoint-dir", ckpt, "--max-steps", "2"])
first = read(f"{ckpt}/ckpt-2.safetensors")
fd = os.open(f"{disk}/filler", os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\0" * 512)
except OSError:
    pass
os.close(fd)

# The next checkpoint cannot be written: exit 3 naming the file and the reason.
p = run(TRAIN + ["--checkpoint-dir", ckpt, "--resume"], expect=3)
assert "writing a checkpoint" in p.stderr and "No space left on device" in p.stderr, p.stderr
assert f"cannot write '{ckpt}/.ckpt-4.safetensors.tmp'" in p.stderr, p.stderr
assert f"the previous one, {ckpt}/ckpt-2.safetensors, is intact" in p.stderr, p.stderr
assert sorted(os.listdir(ckpt)) == ["ckpt-2.safetensors"], os.listdir(ckpt)
assert read(f"{ckpt}/ckpt-2.safetensors") == first

# Space again: resuming continues from the intact checkpoint.
os.remove(f"{disk}/filler")
p = run(TRAIN + ["--checkpoint-dir", ckpt, "--resume"])
assert f"resuming from {ckpt}/ckpt-2.safetensors" in p.stderr, p.stderr
assert read(f"{ckpt}/ckpt-12.safetensors") == expected
print("full disk: exit 3, previous checkpoint intact, resumed to the end")
