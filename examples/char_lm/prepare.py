#!/usr/bin/env python3
"""Turns a text file into the character language model's data sets.

Usage: prepare.py TEXT... OUT_DIR [--context 64]

Writes OUT_DIR/train.npz and OUT_DIR/eval.npz with arrays `tokens` and
`targets` (int32 [windows, context]): the text's bytes (ASCII codes, 0..127;
any other byte becomes `?`) in windows of `context` characters, each
target the character that follows its token. Non-overlapping windows; the
last tenth of the text is the evaluation set.
"""
import argparse
import os

import numpy as np


def windows(codes, context):
    count = (len(codes) - 1) // context
    tokens = codes[: count * context].reshape(count, context)
    targets = codes[1 : count * context + 1].reshape(count, context)
    return tokens, targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="text files (concatenated), then OUT_DIR")
    parser.add_argument("--context", type=int, default=64)
    args = parser.parse_args()
    if len(args.paths) < 2:
        parser.error("give one or more text files, then the output folder")
    args.text, args.out_dir = args.paths[:-1], args.paths[-1]
    data = np.frombuffer(b"".join(open(t, "rb").read() for t in args.text),
                         dtype=np.uint8).astype(np.int32)
    data[data > 127] = ord("?")
    split = len(data) * 9 // 10
    os.makedirs(args.out_dir, exist_ok=True)
    for name, part in (("train", data[:split]), ("eval", data[split:])):
        tokens, targets = windows(part, args.context)
        np.savez(os.path.join(args.out_dir, f"{name}.npz"), tokens=tokens, targets=targets)
        print(f"{name}: {len(tokens)} windows of {args.context} characters")


if __name__ == "__main__":
    main()
