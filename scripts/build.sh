#!/usr/bin/env bash
# Installs what is missing, then configures and builds dlc into build/
# (Ninja, Release, ccache when present). Extra arguments go to ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [[ ! -f build/build.ninja ]]; then
  # The tests run NumPy through the same python3 that setup.sh installed it for.
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
fi
# Quiet in logs and CI; ninja prints its own progress on a terminal.
if [[ -t 1 ]]; then
  ninja -C build "$@"
else
  ninja -C build "$@" >build/ninja.log 2>&1 || { tail -50 build/ninja.log; exit 1; }
fi
