#!/usr/bin/env bash
# Everything the training benchmark needs on a GPU machine that has no dlc
# compiler, built here (no GPU needed): CUDA training jobs (`dlc train
# --compile-only --device cuda`: cubins for sm_80/sm_90 and PTX) as one
# jobs.tar.xz, dlc-train-job and the runtime library (with the Debian
# libraries they link that a CUDA image may lack), and the Fashion-MNIST
# files, in one folder (default build/gpu-train, ~40 MB). The jobs hold no
# parameter values (module format 1.5: the session draws them), so the
# GPT-2 block's is as small as the MLP's; GPT2=B,T,SAMPLES sets its shape
# (run_gpu.sh reads it back).
# On the GPU machine, from a checkout of this repository:
#
#   bench/train/run_gpu.sh [OUT] [bench_train.py options, e.g. --torch-compile]
#
#   MODELS=mlp,cnn,gpt2 GPT2=8,512,64 bench/train/prepare_gpu.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-train}
BUILD=$ROOT/build
"$ROOT/bench/gpu_bundle.sh" "$OUT"
MODELS=${MODELS:-mlp,cnn}
GPT2=${GPT2:-8,32,256}
python3 "$ROOT/bench/train/bench_train.py" --build "$BUILD" --device cuda \
  --models "$MODELS" --gpt2-shape "$GPT2" --prepare-jobs "$OUT/jobs"
tar -C "$OUT" -cf - jobs | xz -T0 -6 > "$OUT/jobs.tar.xz"
rm -rf "$OUT/jobs"
echo "$MODELS" > "$OUT/models"
echo "$GPT2" > "$OUT/gpt2-shape"
du -sh "$OUT"
