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

# run_gtest WHAT LINES COMMAND...: runs a GoogleTest binary (brief output),
# adds its passed and failed tests to the totals; a failing run prints its
# last LINES lines and counts at least one failure.
run_gtest() {
  local what=$1 lines=$2 out rc p f
  shift 2
  out=$("$@" --gtest_brief=1 2>&1)
  rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' <<<"$out")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [[ $rc -ne 0 ]]; then
    echo "$out" | tail -"$lines"; echo "FAIL: ${*: -1} under $what (exit $rc)"
    [[ -z $f ]] && failed=$((failed + 1))
    status=1
  fi
}

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

sanitize_start=$(date +%s)
# Sanitizer runs (issue 18 item 2). What runs under ASan + UBSan:
#   - every GoogleTest that builds without LLVM: the runtime's (corruption
#     tests included), the weight files', the data loader's, the training
#     loop's and support's, in a runtime-only build (build-asan/, every
#     target instrumented: DLC_SANITIZE for the runtime, CMAKE_CXX_FLAGS for
#     the rest);
#   - the runtime's and the fuzz regressions' lit tests (test/runtime,
#     test/fuzz) that need no compiler tool, with build-asan's tools;
#   - the compiler's readers (.dlg, ONNX) through the fuzz targets below
#     (build-fuzz/), which instrument the frontends and the dialect.
# The compiler's own lit and end-to-end suites are not run under ASan: an
# instrumented build of the whole compiler (driver, passes, codegen) would
# add some 30 min on 2 cores.
echo "runtime, weights, data and training under ASan+UBSan (build-asan/)"
asan_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if cmake -G Ninja -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=ON -DDLC_SANITIZE=address,undefined \
     -DCMAKE_CXX_FLAGS="$asan_flags" -DCMAKE_C_FLAGS="$asan_flags" \
     -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
     -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
     >build-asan/build.log 2>&1 &&
   ninja -C build-asan >>build-asan/build.log 2>&1; then
  for t in build-asan/bin/Dlc*Tests; do
    run_gtest "sanitizers" 40 env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$t"
  done
  # The runtime's lit tests with the instrumented tools: a site config of
  # build-asan's own (the suite's lit.cfg.py, build-asan's bin/ on PATH).
  # Tests that run a compiler tool (dlc, dlc-opt, dlc-cuda-testgen) are left
  # out: build-asan has none. The MPI tests run without leak detection:
  # Open MPI leaks at exit in libmpi/libopen-pal (no dlc frame in the
  # reports); ASan and UBSan stay on.
  cat >build-asan/test/lit.site.cfg.py <<EOF
config.llvm_tools_dir = "/usr/lib/llvm-19/bin"
config.dlc_src_root = "$PWD"
config.dlc_obj_root = "$PWD/build-asan"
config.dlc_tools_dir = "$PWD/build-asan/bin"
config.python_executable = "$(command -v python3)"
config.lit_tools_dir = ""
import lit.llvm
lit.llvm.initialize(lit_config, config)
lit_config.load_config(config, "$PWD/test/lit.cfg.py")
EOF
  needs_compiler=$(grep -lE 'RUN:(.*[ |;(])?(dlc|dlc-opt|dlc-cuda-testgen)( |$)' test/runtime/*.test test/fuzz/*.test |
                   xargs -n1 basename | sed 's/\.test$//' | paste -sd'|')
  mpi_tests='comm-mpi|comm-schedule'
  asan_log=build-asan/lit.log
  ( ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      python3 "$LIT" -sv --filter-out "${needs_compiler:-^$}|$mpi_tests" build-asan/test/runtime build-asan/test/fuzz
    lit_rc=$?
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      python3 "$LIT" -sv --filter "$mpi_tests" build-asan/test/runtime
    exit $((lit_rc | $?)) ) >"$asan_log" 2>&1
  lit_rc=$?
  p=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$asan_log" | awk '{n += $1} END {print n + 0}')
  f=$(sed -n 's/^ *\(Failed\|Unresolved\|Timed Out\) *: *\([0-9]*\).*/\2/p' "$asan_log" |
      awk '{n += $1} END {print n + 0}')
  u=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$asan_log" | awk '{n += $1} END {print n + 0}')
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + u))
  echo "  runtime lit tests under ASan+UBSan: $p passed, $f failed, $u unsupported"
  if [[ $lit_rc -ne 0 || $f -ne 0 ]]; then
    grep -E '^(FAIL|UNRESOLVED|TIMEOUT):' "$asan_log"
    echo "FAIL: runtime lit tests under sanitizers (build-asan/lit.log)"
    [[ $f -eq 0 ]] && failed=$((failed + 1))
    status=1
  fi
else
  tail -30 build-asan/build.log; echo "FAIL: sanitizer build"; failed=$((failed + 1)); status=1
fi

# ThreadSanitizer (build-tsan/, runtime-only, every target instrumented):
# the GoogleTests that start threads: the CPU device's thread pool and
# sessions shared across threads (Executor, Api), the comm thread
# (CommQueue, in Comm), the data loader's prefetching thread (Data) and the
# training loop over it (Train). About two minutes cold, seconds warm.
echo "threads under TSan (build-tsan/)"
mkdir -p build-tsan
tsan_tests="DlcRuntimeExecutorTests DlcRuntimeApiTests DlcRuntimeCommTests DlcDataTests DlcTrainTests"
if cmake -G Ninja -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=ON -DDLC_SANITIZE=thread \
     -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
     -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
     >build-tsan/build.log 2>&1 &&
   ninja -C build-tsan $tsan_tests >>build-tsan/build.log 2>&1; then
  for t in $tsan_tests; do
    run_gtest "TSan" 60 env TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build-tsan/bin/$t
  done
else
  tail -30 build-tsan/build.log; echo "FAIL: TSan build"; failed=$((failed + 1)); status=1
fi

# libFuzzer targets (fuzz/README.md) under ASan + UBSan, in build-fuzz/
# (clang-19; only the libraries the targets link are built and
# instrumented). Per target, one check: every regression input once
# (fuzz/regressions/<target>/: inputs that once broke a reader), then 60 s
# of fuzzing on a copy of its seed corpus (dlcm_run's with the modules
# dlc-runtime-testgen writes, whose kernels it trusts); two targets at a
# time. A crash leaves its input in build-fuzz/fuzz-run/<target>/.
# The 60 s runs take a fixed seed ($DLC_FUZZ_SEED, default 1): the same
# inputs in the same order on every machine, a slower one running fewer of
# them, so that a clean run here is a clean run in CI. Finding new bugs is
# the long runs' work (fuzz/long_run.sh, random seeds).
fuzz_start=$(date +%s)
echo "fuzz targets under ASan+UBSan (build-fuzz/)"
mkdir -p build-fuzz
fuzz_targets="npy npz safetensors idx dlcm_load dlcm_run dlg onnx"
fuzz_one() { # prints "PASS <target> <libFuzzer's last line>" or "FAIL <target> [regressions]"
  local t=$1 dir=$PWD/build-fuzz/fuzz-run/$1 bin=$PWD/build-fuzz/bin/dlc-fuzz-$1 extra=()
  [[ -f fuzz/$t.dict ]] && extra+=(-dict="$PWD/fuzz/$t.dict")
  rm -rf "$dir"; mkdir -p "$dir/corpus"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
  if [[ $t == dlcm_run ]]; then
    for m in add mlp; do build-fuzz/bin/dlc-runtime-testgen $m "$dir/corpus/testgen-$m" >/dev/null; done
  fi
  local regressions=() r
  for r in fuzz/regressions/"$t"/*; do [[ -f $r ]] && regressions+=("$PWD/$r"); done
  if ((${#regressions[@]})) &&
     ! (cd "$dir" && "$bin" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}") >"$dir/regressions.log" 2>&1; then
    echo "FAIL $t regressions"; return
  fi
  if (cd "$dir" && "$bin" -seed="${DLC_FUZZ_SEED:-1}" -max_total_time="${DLC_FUZZ_SECONDS:-60}" \
        -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "${extra[@]}" corpus) >"$dir/fuzz.log" 2>&1; then
    echo "PASS $t $(grep -E '^#[0-9]+.*DONE' "$dir/fuzz.log" | tail -1)"
  else
    echo "FAIL $t"
  fi
}
if CC=clang-19 CXX=clang++-19 cmake -G Ninja -S . -B build-fuzz -DDLC_BUILD_FUZZERS=ON \
     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLC_BUILD_TESTS=ON \
     -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
     -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
     -DPython3_EXECUTABLE="$(command -v python3)" >build-fuzz/build.log 2>&1 &&
   ninja -C build-fuzz dlc-fuzzers >>build-fuzz/build.log 2>&1; then
  echo "  build-fuzz: built in $(( $(date +%s) - fuzz_start )) s"
  set -- $fuzz_targets
  while (($#)); do
    fuzz_one "$1" >build-fuzz/fuzz-a.txt & a=$!
    : >build-fuzz/fuzz-b.txt
    if (($# > 1)); then fuzz_one "$2" >build-fuzz/fuzz-b.txt & wait $!; fi
    wait $a
    for r in build-fuzz/fuzz-a.txt build-fuzz/fuzz-b.txt; do
      [[ -s $r ]] || continue
      read -r verdict t rest <"$r"
      if [[ $verdict == PASS ]]; then
        passed=$((passed + 1)); echo "  $t: $rest"
      else
        failed=$((failed + 1)); status=1
        log=build-fuzz/fuzz-run/$t/fuzz.log
        [[ $rest == regressions ]] && log=build-fuzz/fuzz-run/$t/regressions.log
        tail -40 "$log"; echo "FAIL: fuzz target $t${rest:+ ($rest)}"
      fi
    done
    shift $(( $# > 1 ? 2 : 1 ))
  done
else
  tail -30 build-fuzz/build.log; echo "FAIL: fuzz build"; failed=$((failed + 1)); status=1
fi
echo "sanitizers and fuzzing: $(( $(date +%s) - sanitize_start )) s (fuzz build and runs $(( $(date +%s) - fuzz_start )) s)"

echo "$passed passed, $failed failed, $skipped skipped"
if [[ $status -ne 0 || $failed -ne 0 ]]; then exit 1; fi
