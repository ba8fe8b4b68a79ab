#!/usr/bin/env bash
# Data-parallel training on a GPU through NCCL, prepared here (no GPU
# needed): the Fashion-MNIST MLP's train step compiled for cuda (sm_80 and
# sm_90 cubins by NVRTC) twice, as a plain training job and as a job
# partitioned for `--mesh data=1 --parallel data` (its gradients'
# all-reduces are collectives the runtime executes through NCCL on the
# session's device buffers), with dlc-train-job, the runtime library and the
# data, in one folder (default build/gpu-dp). On the GPU machine:
#
#   bench/scaling/run_gpu.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/gpu-dp}
BUILD=$ROOT/build
"$ROOT/bench/gpu_bundle.sh" "$OUT"
MODEL=$ROOT/examples/fashion_mnist/mlp.dlg
DATA=/usr/share/datasets/fashion-mnist
"$BUILD/bin/dlc" train "$MODEL" --data "$DATA" --batch-size 64 --device cuda \
  --compile-only "$OUT/job-plain"
"$BUILD/bin/dlc" train "$MODEL" --data "$DATA" --batch-size 64 --device cuda \
  --compile-only "$OUT/job-dp1" --mesh data=1 --parallel data
du -sh "$OUT"
