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
ninja -C "$BUILD" dlc dlc-train-job dlc_runtime >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/lib-debian" "$OUT/fashion-mnist"
cp "$BUILD/bin/dlc-train-job" "$OUT/bin/"
cp -P "$BUILD"/lib/libdlc_runtime.so* "$OUT/lib/"
for lib in libzip.so.4 libbz2.so.1.0 libcrypto.so.3; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$OUT/lib-debian/"
done
cp /usr/share/datasets/fashion-mnist/*.gz "$OUT/fashion-mnist/"
MODEL=$ROOT/examples/fashion_mnist/mlp.dlg
DATA=/usr/share/datasets/fashion-mnist
"$BUILD/bin/dlc" train "$MODEL" --data "$DATA" --batch-size 64 --device cuda \
  --compile-only "$OUT/job-plain"
"$BUILD/bin/dlc" train "$MODEL" --data "$DATA" --batch-size 64 --device cuda \
  --compile-only "$OUT/job-dp1" --mesh data=1 --parallel data
du -sh "$OUT"
