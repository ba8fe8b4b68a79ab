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
# Strided collectives on the device (a reduce-scatter and an all-gather
# along axis 1 of [4, 16]: pieces moved on NCCL's stream through scratch),
# beside the same graph unpartitioned, both run by dlc-embed-example.
ninja -C "$BUILD" dlc-embed-example >/dev/null
cp "$BUILD/bin/dlc-embed-example" "$OUT/bin/"
STRIDED=$ROOT/test/partition/Inputs/strided.dlg
"$BUILD/bin/dlc" compile "$STRIDED" --mesh model=1 --target cuda:sm_80,sm_90 -o "$OUT/strided-mesh.dlcm"
"$BUILD/bin/dlc" compile "$STRIDED" --target cuda:sm_80,sm_90 -o "$OUT/strided-plain.dlcm"
du -sh "$OUT"
