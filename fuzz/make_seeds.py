#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (checked in).

    python3 fuzz/make_seeds.py [--testgen BUILD/bin/dlc-runtime-testgen] [--dlc BUILD/bin/dlc]

Synthetic files for the weight and data readers (NumPy writes the .npy and
.npz ones), the .dlg files of examples/ and test/, a selection of small
models from Debian's ONNX node tests, and modules from dlc-runtime-testgen
(every variant) and `dlc compile` (small examples) for the .dlcm targets.
Seeds are named by content so that a rerun adds nothing twice.
"""
import argparse, glob, gzip, hashlib, io, json, os, shutil, struct, subprocess, tempfile, zipfile
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def put(target, data, name=None):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = name or hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a, allow_pickle=False)
    return b.getvalue()


def npy_seeds():
    arrays = [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array(7, dtype=np.int64),
        np.array([True, False, True]),
        np.arange(4, dtype=np.float16),
        np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
        np.arange(3, dtype=">i4"),
        np.zeros((0, 2), dtype=np.float32),
        np.arange(5, dtype=np.uint8),
        np.arange(-2, 2, dtype=np.int8),
        np.arange(4, dtype=np.int32).reshape(1, 2, 2, 1),
    ]
    for a in arrays:
        put("npy", npy_bytes(a))
    # Format 2.0 (a header length of 4 bytes).
    a = np.arange(2, dtype=np.float32)
    b = io.BytesIO()
    np.lib.format.write_array(b, a, version=(2, 0))
    put("npy", b.getvalue())


def npz_seeds():
    for compressed in (False, True):
        for n in (1, 3):
            b = io.BytesIO()
            x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
            y = np.arange(n, dtype=np.int32)
            (np.savez_compressed if compressed else np.savez)(b, x=x, y=y)
            put("npz", b.getvalue())
    b = io.BytesIO()
    np.savez(b, w=np.ones((2, 2), np.float16), b=np.array([1, 2], np.int64),
             m=np.array([True]))
    put("npz", b.getvalue())


ST_DTYPES = {np.float32: "F32", np.float64: "F64", np.float16: "F16", np.int64: "I64",
             np.int32: "I32", np.int8: "I8", np.uint8: "U8", np.bool_: "BOOL"}


def safetensors_bytes(tensors, metadata=None, raw=None):
    header, data, off = {}, b"", 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(payload)]}
        data += payload
        off += len(payload)
    h = json.dumps(header).encode() if raw is None else raw
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds():
    t = {}
    for dt, name in ST_DTYPES.items():
        a = np.arange(4).astype(dt).reshape(2, 2)
        t["t_" + name.lower()] = (name, [2, 2], a.tobytes())
    put("safetensors", safetensors_bytes(t, {"format": "pt", "step": "3"}))
    put("safetensors", safetensors_bytes({"w": ("BF16", [3], b"\x80\x3f\x00\x40\x40\x40")}))
    put("safetensors", safetensors_bytes({"s": ("F32", [], np.float32(2).tobytes())}))
    put("safetensors", safetensors_bytes({}))
    put("safetensors", safetensors_bytes({"e": ("F32", [0, 3], b"")}))


IDX_TYPES = {np.uint8: 0x08, np.int8: 0x09, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}


def idx_bytes(a):
    code = IDX_TYPES[a.dtype.type]
    head = bytes([0, 0, code, a.ndim]) + b"".join(struct.pack(">I", d) for d in a.shape)
    return head + a.astype(a.dtype.newbyteorder(">")).tobytes()


def idx_seeds():
    images = np.arange(2 * 2 * 2, dtype=np.uint8).reshape(2, 2, 2) * 30
    labels = np.array([3, 7], dtype=np.uint8)
    put("idx", idx_bytes(images) + idx_bytes(labels))
    put("idx", idx_bytes(np.arange(12, dtype=np.uint8).reshape(3, 4)) +
        idx_bytes(np.array([1, 2, 3], np.int32)))
    for dt in IDX_TYPES:
        put("idx", idx_bytes(np.arange(6).astype(dt).reshape(2, 3)))
    put("idx", gzip.compress(idx_bytes(images), mtime=0))


def dlg_seeds():
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.dlg"), recursive=True) +
                   glob.glob(os.path.join(ROOT, "test", "**", "*.dlg"), recursive=True))
    for f in files:
        data = open(f, "rb").read()
        if len(data) <= 8192:
            put("dlg", data)


def onnx_seeds():
    base = "/usr/share/libonnx-testdata/data/node"
    seen = set()
    for d in sorted(os.listdir(base)):
        model = os.path.join(base, d, "model.onnx")
        if not os.path.exists(model) or os.path.getsize(model) > 4096:
            continue
        # One model per op family: test_<op>..., the first two words.
        family = "_".join(d.split("_")[1:3])
        if family in seen:
            continue
        seen.add(family)
        put("onnx", open(model, "rb").read())


def dlcm_seeds(testgen, dlc):
    with tempfile.TemporaryDirectory() as tmp:
        if testgen:
            names = subprocess.run([testgen, "--list"], capture_output=True, text=True,
                                   check=True).stdout.split()
            for n in names:
                out = os.path.join(tmp, n + ".dlcm")
                subprocess.run([testgen, n, out], check=True)
                data = open(out, "rb").read()
                put("dlcm_load", data)
                if n in ("add", "mlp"):
                    put("dlcm_run", data)
        if dlc:
            for model in ("mnist_mlp.dlg",):
                out = os.path.join(tmp, "m.dlcm")
                try:
                    r = subprocess.run([dlc, "compile", os.path.join(ROOT, "examples", model),
                                        "--dim", "N=2", "-o", out], capture_output=True)
                except OSError as e:
                    print(f"dlc compile: {e}")
                    continue
                if r.returncode == 0:
                    put("dlcm_load", open(out, "rb").read())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--testgen")
    p.add_argument("--dlc")
    a = p.parse_args()
    npy_seeds(); npz_seeds(); safetensors_seeds(); idx_seeds(); dlg_seeds(); onnx_seeds()
    dlcm_seeds(a.testgen, a.dlc)
    for t in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, t))
        size = sum(os.path.getsize(os.path.join(CORPUS, t, f)) for f in files)
        print(f"{t}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    main()
