#!/usr/bin/env bash
# README command (b), and all that .ci/run runs: install what is missing,
# build everything, run the whole test suite (lit: IR, frontend, tools,
# end-to-end and the GoogleTest unit tests), and end with `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

LIT=/usr/lib/llvm-19/build/utils/lit/lit.py
log=build/lit.log
python3 "$LIT" -sv --time-tests build/test build/test/unit 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary lines look like "  Passed: 250 (98.04%)".
count() {
  local n
  n=$(sed -n "s/^ *$1: *\([0-9]*\).*/\1/p" "$log" | head -1)
  echo "${n:-0}"
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count Unresolved) + $(count 'Unexpectedly Passed') + $(count 'Timed Out') ))
skipped=$(count Unsupported)
echo "$passed passed, $failed failed, $skipped skipped"
if [[ $status -ne 0 || $failed -ne 0 ]]; then exit 1; fi
