#!/usr/bin/env bash
# The GPU benchmark, one command, in the folder bench/gpu/prepare.sh made:
# dlc's prebuilt modules on cuda:0 against PyTorch (eager, torch.compile,
# cuBLAS) and the device's copy bandwidth, at the same shapes and dtype.
#   ./run.sh [ITERATIONS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$HERE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec python3 "$HERE/bench_gpu.py" --dir "$HERE" --iterations "${1:-50}"
