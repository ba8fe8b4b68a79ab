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

# lit's summary lines look like "  Passed     : 250 (98.04%)".
count() {
  local n
  n=$(sed -n "s/^ *$1 *: *\([0-9]*\).*/\1/p" "$log" | head -1)
  echo "${n:-0}"
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count Unresolved) + $(count 'Unexpectedly Passed') + $(count 'Timed Out') ))
skipped=$(count Unsupported)

# The runtime alone (-DDLC_BUILD_COMPILER=OFF): it must configure, build and
# link without LLVM/MLIR (DESIGN §2). One check each: build, ldd.
echo "runtime-only build (build-runtime/)"
mkdir -p build-runtime build-asan
if cmake -G Ninja -S . -B build-runtime -DCMAKE_BUILD_TYPE=Release \
     -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=OFF >build-runtime/build.log 2>&1 &&
   ninja -C build-runtime >>build-runtime/build.log 2>&1; then
  passed=$((passed + 1))
  if ldd build-runtime/lib/libdlc_runtime.so | grep -i -E 'llvm|mlir'; then
    echo "FAIL: libdlc_runtime.so links LLVM/MLIR"; failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
else
  tail -30 build-runtime/build.log; echo "FAIL: runtime-only build"; failed=$((failed + 1)); status=1
fi

# The runtime's GoogleTests (corruption tests included) under ASan + UBSan,
# in a runtime-only build: compiles the runtime, not MLIR.
echo "runtime under ASan+UBSan (build-asan/)"
if cmake -G Ninja -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=ON -DDLC_SANITIZE=address,undefined \
     >build-asan/build.log 2>&1 &&
   ninja -C build-asan >>build-asan/build.log 2>&1; then
  for t in build-asan/bin/DlcRuntime*Tests; do
    out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$t" --gtest_brief=1 2>&1)
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [[ $rc -ne 0 ]]; then
      echo "$out" | tail -40; echo "FAIL: $t under sanitizers (exit $rc)"
      [[ -z $f ]] && failed=$((failed + 1))
      status=1
    fi
  done
else
  tail -30 build-asan/build.log; echo "FAIL: sanitizer build"; failed=$((failed + 1)); status=1
fi

echo "$passed passed, $failed failed, $skipped skipped"
if [[ $status -ne 0 || $failed -ne 0 ]]; then exit 1; fi
