#!/usr/bin/env bash
# Everything a lent GPU machine runs, in one call of the device tool
# (which copies this repository's working tree and carried build paths
# there, and brings $OUT back):
#
#   bench/gpu/lent.sh pack     # here: prepare.sh + the GPU suite -> build/lent.tar.xz
#                              # (TRAIN=mlp: also the training benchmark's bundle)
#   bench/gpu/lent.sh run      # there, from the repository root (carry build/lent.tar.xz)
#
# `run` checks the tensor-core and f32 modules' results and profiles the
# GPT-2 block by kernel (check_gpu.py), runs the GPU suite (test/gpu/run.sh)
# and the benchmark table (bench_gpu.py), and when packed, the training
# benchmark (bench/train/run_gpu.sh), each under its own time limit so one
# stuck step still leaves the others' logs in $OUT.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
pack)
  set -e
  bash "$ROOT/bench/gpu/prepare.sh" "$ROOT/build/bench-gpu"
  ninja -C "$ROOT/build" dlc-gpu-suite >/dev/null
  parts="bench-gpu gpu-suite"
  if [ -n "${TRAIN:-}" ]; then
    MODELS=$TRAIN bash "$ROOT/bench/train/prepare_gpu.sh" "$ROOT/build/gpu-train"
    parts="$parts gpu-train"
  fi
  tar -C "$ROOT/build" -cf - $parts | xz -T0 -6 > "$ROOT/build/lent.tar.xz"
  ls -la "$ROOT/build/lent.tar.xz"
  ;;
run)
  OUT=${OUT:-$(mktemp -d)}
  WORK=$(mktemp -d)
  export LD_LIBRARY_PATH="$WORK/bench-gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$ROOT/build/lent.tar.xz" "$WORK"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu \
    --format=csv | tee "$OUT/gpu.txt"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$OUT/gpu.txt"
  step() {
    local name=$1 limit=$2
    shift 2
    echo "=== $name"
    (cd "$WORK/bench-gpu" && timeout "$limit" "$@") > "$OUT/$name.log" 2>&1
    echo "exit $?" >> "$OUT/$name.log"
    grep -v "^+ \|^ok\|^  " "$OUT/$name.log" | tail -n "${TAIL:-45}"
  }
  TAIL=60 step check 200 python3 check_gpu.py --dir .
  TAIL=6 step suite 60 ../gpu-suite/run.sh
  # Every GEMM module alone (tile variants a session adds to modules/ too).
  TAIL=30 step gemms 120 sh -c 'for m in modules/gemm_*.dlcm; do
    echo "$(basename "$m" .dlcm): $(./dlc-bench-gpu "$m" cuda:0 20) (median p10 p90 ms)"; done'
  TAIL=25 step bench 300 ./run.sh 50
  # GPT-2 small whole (its torch.compile takes minutes): a step of its own.
  TAIL=8 step gpt2_small 240 python3 bench_gpu.py --dir . --iterations 10 --only gpt2_small
  if [ -d "$WORK/gpu-train" ]; then
    TAIL=12 step train 180 bash "$ROOT/bench/train/run_gpu.sh" "$WORK/gpu-train" --epochs 3
  fi
  ;;
*)
  echo "usage: $0 pack|run" >&2
  exit 2
  ;;
esac
