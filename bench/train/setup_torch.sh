#!/usr/bin/env bash
# Installs PyTorch from PyPI for bench/train on a machine without a GPU: the
# wheel and the few CUDA libraries `import torch` loads (never used on the
# CPU), without the multi-gigabyte CUDA dependency set. Prints the
# LD_LIBRARY_PATH to export before running bench_train.py.
set -euo pipefail
PYTHON=${PYTHON:-python3}
pip() { "$PYTHON" -m pip "$@" 2>/dev/null || "$PYTHON" -m pip "$@" --break-system-packages; }
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
  pip install -q --no-deps torch nvidia-cufile nvidia-cusparselt-cu13 nvidia-nvshmem-cu13 nvidia-nccl-cu13
  pip install -q filelock typing-extensions sympy networkx jinja2 fsspec
fi
site=$("$PYTHON" -c "import site; print(site.getsitepackages()[0])")
echo "export LD_LIBRARY_PATH=$site/nvidia/cu13/lib:/usr/local/cuda/lib64\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
