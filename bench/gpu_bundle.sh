#!/usr/bin/env bash
# The runtime side of a GPU benchmark, for a GPU machine that has no dlc
# compiler: dlc-train-job and the runtime library (built here), the Debian
# libraries they link that a CUDA image may lack (lib-debian, used only
# where missing), and the Fashion-MNIST files, into OUT (emptied first).
#   bench/gpu_bundle.sh OUT
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$1
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
