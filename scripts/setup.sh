#!/usr/bin/env bash
# Installs what building and testing dlc needs on Debian 12, only what is
# missing: a second run with everything present takes well under a second.
# Used by both README commands and by .ci/run.
set -euo pipefail

DEBIAN_PACKAGES=(
  cmake ninja-build ccache g++ git python3 python3-pip
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libgtest-dev zlib1g-dev
  # ONNX import and its conformance data
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  # The runtime's module format and the CPU backend's GEMM/convolution
  libflatbuffers-dev flatbuffers-compiler libopenblas-dev libdnnl-dev
  # The runtime's C API takes DLPack tensors (dlpack/dlpack.h)
  libdlpack-dev
  # The runtime's MPI communicator (dlopen'ed libmpi.so.40) and mpirun for
  # the distributed tests (test/runtime/comm-*.test)
  libopenmpi-dev openmpi-bin
  # Weight files (support/weights): .npz through libzip (found by pkg-config),
  # the .safetensors header through nlohmann-json
  libzip-dev pkgconf nlohmann-json3-dev
  # `dlc train`'s IDX reader (gzip through zlib, above) and its test data
  dataset-fashion-mnist
  # The libFuzzer targets (fuzz/, build-fuzz/): clang with libFuzzer, ASan, UBSan
  clang-19 libclang-rt-19-dev
)
PYTHON_PACKAGES=(numpy onnx onnxruntime jax)  # onnxruntime: the baseline of bench/cpu; jax: the gradient oracle of test/e2e/grad_jax.py
# The Python module's build (`pip install --no-build-isolation .`) and its
# tests (test/python): PyPI name:import name.
PYTHON_PACKAGES+=(nanobind scikit-build-core:scikit_build_core pytest)

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
pymissing=()
for p in "${PYTHON_PACKAGES[@]}"; do
  "$PYTHON" -c "import ${p#*:}" 2>/dev/null || pymissing+=("${p%%:*}")
done
if ((${#pymissing[@]})); then
  echo "setup: installing Python packages: ${pymissing[*]}"
  "$PYTHON" -m pip install -q "${pymissing[@]}" 2>/dev/null ||
    "$PYTHON" -m pip install -q --break-system-packages "${pymissing[@]}"
fi
