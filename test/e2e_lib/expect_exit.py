#!/usr/bin/env python3
"""Runs a command and fails unless it exits with the given code.

Usage in lit: RUN: %expect_exit 2 dlc check %s 2>&1 | FileCheck %s
The command's stdout and stderr pass through (stderr merged into stdout), so
the caller can FileCheck the message as well as the exit code.
"""
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: expect_exit.py CODE COMMAND...", file=sys.stderr)
        return 2
    expected = int(sys.argv[1])
    result = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sys.stdout.buffer.write(result.stdout)
    sys.stdout.flush()
    if result.returncode != expected:
        print(f"expect_exit: exit code {result.returncode}, expected {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
