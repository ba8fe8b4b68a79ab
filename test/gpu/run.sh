#!/bin/sh
# The GPU suite: runs the CUDA test modules on a real device and checks them
# against the CPU references (which cuda-emu was checked against when the
# modules were generated), CUDA-graph replay, the NVRTC JIT and its disk
# cache (a warm start compiles nothing), DLC_KERNEL_OVERRIDE_DIR, and
# device-memory (kDLCUDA) tensors.
#
# Needs no compiler: run it from the folder `ninja dlc-gpu-suite` makes
# (build/gpu-suite: bin/dlc-gpu-runner, lib/libdlc_runtime.so*, modules/,
# run.sh), copied to the GPU machine:
#
#   ninja -C build dlc-gpu-suite && tar -C build -czf gpu-suite.tgz gpu-suite
#   # on the GPU machine:
#   tar xzf gpu-suite.tgz && gpu-suite/run.sh [--device cuda:N]
#
# It also runs in place from a build folder: build/gpu-suite/run.sh.
# Exit 0 when every check passes, 1 when one fails, 3 when there is no GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
device=cuda:0
[ "${1:-}" = "--device" ] && device=$2
runner="$here/bin/dlc-gpu-runner"
modules="$here/modules"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A fresh kernel cache, so the cold/warm checks mean what they say.
cache=$(mktemp -d "${TMPDIR:-/tmp}/dlc-gpu-suite-cache.XXXXXX")
override=$(mktemp -d "${TMPDIR:-/tmp}/dlc-gpu-suite-override.XXXXXX")
trap 'rm -rf "$cache" "$override"' EXIT
export DLC_CACHE_DIR="$cache"

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || true
fi

passed=0 failed=0
check() {
  echo "+ $*"
  "$@"
  rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "  FAILED (exit $rc)"
    if [ $rc -eq 3 ] && [ $passed -eq 0 ]; then
      echo "no usable CUDA device: stopping"
      exit 3
    fi
  fi
}

# 1. Every module from its embedded cubin (or PTX for cuda-add-ptx); five
#    runs: the first eager, the second captured into a CUDA graph, all but
#    the first launched from the graph.
for m in cuda-add cuda-mlp cuda-softmax cuda-add-ptx; do
  check "$runner" "$modules" $m --device $device --repeat 5 --expect-graph-runs 4 --expect-compiles 0
done

# 2. Graphs off: the same results from plain launches.
DLC_CUDA_GRAPHS=0 check "$runner" "$modules" cuda-mlp --device $device --repeat 3 --expect-graph-runs 0

# 3. Inputs and outputs in device memory (kDLCUDA), used in place.
check "$runner" "$modules" cuda-mlp --device $device --repeat 3 --device-tensors
check "$runner" "$modules" cuda-softmax --device $device --repeat 3 --device-tensors --expect-graph-runs 2

# 4. A module with only the CUDA source: NVRTC at load time, then the disk
#    cache. A second process (a warm start) compiles nothing.
check "$runner" "$modules" cuda-add-source --device $device --expect-compiles 1 --expect-cache-hits 0
check "$runner" "$modules" cuda-add-source --device $device --expect-compiles 0 --expect-cache-hits 1

# 5. DLC_KERNEL_OVERRIDE_DIR swaps in a hand-edited kernel (compiled by NVRTC).
cat > "$override/add.cu" <<'CU'
// Hand-edited: a scalar grid-stride loop instead of float4 loads.
extern "C" __global__ void dlc_add(const float *a, const float *b, float *c) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 1000; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}
CU
DLC_KERNEL_OVERRIDE_DIR="$override" check "$runner" "$modules" cuda-add --device $device --expect-compiles 1

# 6. The same modules on cuda-emu on this machine (x86-64 hosts).
if [ "$(uname -m)" = x86_64 ]; then
  for m in cuda-add cuda-mlp cuda-softmax; do
    check "$runner" "$modules" $m --device cuda-emu --repeat 2 --expect-graph-runs 0
  done
fi

# 7. NCCL (runtime/comm/NcclComm, libnccl.so.2 through dlopen; set
#    DLC_NCCL_LIBRARY where it is not on the loader's path): every
#    collective on device buffers, a world of one GPU. Skipped where the
#    suite has no dlc-comm-check (a build older than runtime/comm).
if [ -x "$here/bin/dlc-comm-check" ]; then
  check "$here/bin/dlc-comm-check" --backend nccl
  check "$here/bin/dlc-comm-check" --backend nccl --count 1
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
