#!/usr/bin/env bash
# Everything the training benchmark needs on a GPU machine that has no dlc
# compiler, built here (no GPU needed): CUDA training jobs (`dlc train
# --compile-only --device cuda`: cubins for sm_80/sm_90 and PTX) as one
# jobs.tar.xz, dlc-train-job and the runtime library (with the Debian
# libraries they link that a CUDA image may lack), and the Fashion-MNIST
# files, in one folder (default build/gpu-train, ~40 MB for the MLP and the
# CNN; the GPT-2 block's job holds its 7M random initial weights, 52 MB
# compressed, so it is only built when MODELS names it).
# On the GPU machine, from a checkout of this repository:
#
#   bench/train/run_gpu.sh [OUT] [bench_train.py options]
#
#   MODELS=mlp,cnn bench/train/prepare_gpu.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-train}
BUILD=$ROOT/build
"$ROOT/bench/gpu_bundle.sh" "$OUT"
MODELS=${MODELS:-mlp,cnn}
python3 "$ROOT/bench/train/bench_train.py" --build "$BUILD" --device cuda \
  --models "$MODELS" --prepare-jobs "$OUT/jobs"
tar -C "$OUT" -cf - jobs | xz -T0 -6 > "$OUT/jobs.tar.xz"
rm -rf "$OUT/jobs"
echo "$MODELS" > "$OUT/models"
du -sh "$OUT"
