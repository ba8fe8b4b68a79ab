#!/usr/bin/env bash
# Runs the jobs bench/scaling/prepare_gpu.sh made on this machine's GPU:
# 900 steps (batch 64) of the plain job and of the data-parallel job (one
# rank: NCCL's all-reduces on the device, bootstrapped over a world of
# one), each twice, printing wall times and both checkpoints' difference.
# NCCL is the one of this machine's PyTorch environment (nvidia-nccl-*),
# or $DLC_NCCL_LIBRARY.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-dp}
export LD_LIBRARY_PATH="$OUT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$OUT/bin/dlc-train-job" | grep -q "not found"; then
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$OUT/lib-debian"
fi
if [ -z "${DLC_NCCL_LIBRARY:-}" ]; then
  DLC_NCCL_LIBRARY=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))')
  export DLC_NCCL_LIBRARY
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "NCCL: $DLC_NCCL_LIBRARY"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for round in 1 2; do
  for job in plain dp1; do
    start=$(date +%s.%N)
    "$OUT/bin/dlc-train-job" "$OUT/job-$job" --data "$OUT/fashion-mnist" --max-steps 900 \
      --checkpoint-dir "$TMP/ck-$job-$round" > "$TMP/log-$job-$round" 2>&1 || {
        cat "$TMP/log-$job-$round"; exit 1; }
    end=$(date +%s.%N)
    echo "round $round, job $job: 900 steps in $(python3 -c "print(round($end - $start, 3))") s (wall, session start included)"
    tail -1 "$TMP/log-$job-$round"
  done
done
for m in plain mesh; do
  echo "strided-$m: $("$OUT/bin/dlc-embed-example" "$OUT/strided-$m.dlcm" --device cuda | tail -1)"
done
PYTHONPATH="$ROOT/test/e2e_lib" python3 - "$TMP/ck-plain-1/ckpt-900.safetensors" "$TMP/ck-dp1-1/ckpt-900.safetensors" <<'PY'
import sys
import numpy as np
from dlc_numpy import load_safetensors
a, b = load_safetensors(sys.argv[1]), load_safetensors(sys.argv[2])
for k in ("w1", "b1", "w2", "b2"):
    x, y = a[k].astype(np.float64), b[k].astype(np.float64)
    print(f"{k}: plain vs data-parallel rel {np.linalg.norm(x - y) / np.linalg.norm(x):.2e}")
PY
