#!/usr/bin/env python3
"""Runs every checked-in exported model (test/models/*.onnx) with dlc on each
device and compares its outputs with ONNX Runtime's, stored beside it.

  run_models.py [--dlc PATH] [--devices cpu,cuda-emu] [--jobs N] [--only SUBSTR ...]

For each `<name>-opset<N>.onnx`, `<name>-opset<N>.npz` holds the inputs
(`input:<name>`) and ONNX Runtime's outputs (`output:<name>`); export.py
made both. Each model runs as `dlc run MODEL --device D --input n=@n.npy ...
--output n=@out.npz`, and every output is compared here with

  |dlc - ort| <= ATOL + RTOL * |ort|   elementwise, RTOL = 1e-4, ATOL = 1e-5.

Why those: the models are float32 end to end; dlc and ONNX Runtime sum in
different orders (tiled/blocked GEMMs and convolutions, fused softmax and
layer norm, different exp/tanh/erf approximations), so results differ by a
few float32 ulps per op, compounded over at most ~20 layers: observed errors
are around 1e-6 relative. 1e-4 relative leaves room for that and still
catches any semantic error (a wrong axis, transpose, padding, mask or
epsilon shows up as O(1e-2) or worse). ATOL covers outputs near zero, where
the relative bound vanishes (values are O(1) here).

Prints one row per model and device, and exits 1 if any model that is not
listed in EXPECTED_FAILURES fails, or if one listed there passes (so the
list is kept current). Needs only NumPy.
"""

import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

RTOL = 1e-4
ATOL = 1e-5

HERE = os.path.dirname(os.path.abspath(__file__))

# (model file stem, device) -> reason. A listed pair must fail (and is
# reported XFAIL); if it passes the run fails, so the entry gets removed.
EXPECTED_FAILURES = {
}


def run_one(dlc, onnx_path, device, tmp):
    """Returns (status, detail, seconds)."""
    data = np.load(onnx_path[:-5] + ".npz")
    stem = os.path.basename(onnx_path)[:-5]
    cmd = [dlc, "run", onnx_path, "--device", device]
    expected = {}
    for key in data.files:
        kind, name = key.split(":", 1)
        if kind == "input":
            path = os.path.join(tmp, "%s.%s.in.npy" % (stem, name))
            np.save(path, data[key])
            cmd += ["--input", "%s=@%s" % (name, path)]
        else:
            expected[name] = data[key]
    out = os.path.join(tmp, "%s.%s.out.npz" % (stem, device))
    for name in expected:
        cmd += ["--output", "%s=@%s" % (name, out)]
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    secs = time.time() - start
    if proc.returncode != 0:
        lines = [l for l in proc.stdout.strip().splitlines() if l.strip()]
        return "FAIL", "exit %d: %s" % (proc.returncode, " | ".join(lines[-3:])), secs
    got = np.load(out)
    worst = 0.0
    for name, want in expected.items():
        if name not in got.files:
            return "FAIL", "output %s not saved" % name, secs
        have = got[name]
        if have.shape != want.shape:
            return "FAIL", "%s: shape %s, expected %s" % (name, have.shape, want.shape), secs
        if have.dtype.kind != want.dtype.kind:
            return "FAIL", "%s: dtype %s, expected %s" % (name, have.dtype, want.dtype), secs
        a, b = have.astype(np.float64), want.astype(np.float64)
        err = np.abs(a - b)
        bound = ATOL + RTOL * np.abs(b)
        if not np.all(np.isfinite(a)) or np.any(err > bound):
            i = np.unravel_index(np.argmax(np.where(np.isfinite(err), err - bound, np.inf)),
                                 err.shape)
            return "FAIL", "%s: max |err| %.3g, at %s: %r vs %r" % (
                name, float(np.nanmax(err)), tuple(int(x) for x in i),
                float(a[i]), float(b[i])), secs
        worst = max(worst, float((err / bound).max()))
    return "PASS", "max |err|/(atol+rtol*|ort|) %.2g" % worst, secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlc", default="dlc")
    ap.add_argument("--devices", default="cpu,cuda-emu")
    ap.add_argument("--jobs", type=int, default=2,
                    help="dlc processes at a time (default 2)")
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    models = sorted(glob.glob(os.path.join(HERE, "*.onnx")))
    if a.only:
        models = [m for m in models if any(s in os.path.basename(m) for s in a.only)]
    if not models:
        print("no models found in " + HERE)
        return 1
    devices = a.devices.split(",")
    bad = 0
    print("%-32s %-9s %-6s %6s  %s" % ("model", "device", "result", "time", "detail"))
    pairs = [(path, dev) for path in models for dev in devices]
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        runs = [pool.submit(run_one, a.dlc, path, dev, tmp) for path, dev in pairs]
        for (path, dev), run in zip(pairs, runs):
            stem = os.path.basename(path)[:-5]
            status, detail, secs = run.result()
            reason = EXPECTED_FAILURES.get((stem, dev))
            if reason is not None:
                if status == "FAIL":
                    status, detail = "XFAIL", reason + " (" + detail + ")"
                else:
                    status, detail = "XPASS", "listed as failing (" + reason + ") but passes"
                    bad += 1
            elif status == "FAIL":
                bad += 1
            print("%-32s %-9s %-6s %5.1fs  %s" % (stem, dev, status, secs, detail),
                  flush=True)
    print("%d model/device pairs, %d unexpected result(s)" % (len(pairs), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
