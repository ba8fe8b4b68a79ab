#!/usr/bin/env bash
# The training benchmark on a GPU machine, from the folder
# bench/train/prepare_gpu.sh made: dlc-train-job on cuda against PyTorch
# eager on the same GPU, one run (bench_train.py --device cuda --jobs).
#   bench/train/run_gpu.sh [OUT] [more bench_train.py options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-train}
shift || true
export LD_LIBRARY_PATH="$OUT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Debian's libzip (and what it links) only where this system lacks them.
if ldd "$OUT/bin/dlc-train-job" | grep -q "not found"; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$OUT/lib-debian"
fi
JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
xz -dc "$OUT/jobs.tar.xz" | tar -C "$JOBS" -xf -
python3 "$ROOT/bench/train/bench_train.py" --device cuda --jobs "$JOBS/jobs" \
  --build "$OUT" --fashion "$OUT/fashion-mnist" --models "$(cat "$OUT/models")" \
  --gpt2-shape "$(cat "$OUT/gpt2-shape" 2>/dev/null || echo 8,32,256)" "$@"
