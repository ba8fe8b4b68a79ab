#!/usr/bin/env python3
"""Writes a damaged copy of a module for the lit tests.

  corrupt.py truncate SIZE IN OUT     keep the first SIZE bytes
  corrupt.py flip OFFSET IN OUT       flip bit 0 of the byte at OFFSET (negative: from the end)
"""
import sys


def main() -> int:
    if len(sys.argv) != 5 or sys.argv[1] not in ("truncate", "flip"):
        print(__doc__, file=sys.stderr)
        return 2
    op, arg, src, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    data = bytearray(open(src, "rb").read())
    if op == "truncate":
        data = data[:arg]
    else:
        data[arg] ^= 1
    open(dst, "wb").write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
