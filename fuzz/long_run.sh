#!/usr/bin/env bash
# A long fuzzing run of one target, at nice 19, in build-fuzz/long/<target>/:
#   fuzz/long_run.sh TARGET SECONDS
# (SECONDS of wall time; at nice 19 the CPU time is what the machine spares)
# The corpus there starts as a copy of fuzz/corpus/TARGET (dlcm_run's with
# dlc-runtime-testgen's modules) and grows; crashes land next to it.
# -timeout=60, not scripts/test.sh's 10: at nice 19 on a loaded machine a
# process can wait seconds for the CPU, and libFuzzer's timeout is wall
# time (three 10-second "timeouts" ran in under a second each alone).
# libFuzzer's log is fuzz-<start time>.log (a later run goes on from the
# grown corpus); time.txt gets one line per run with the CPU time the
# process got (GNU time: user, system, wall, peak RSS);
# bench/results/fuzz.md is written from these. Minimise afterwards with
#   build-fuzz/bin/dlc-fuzz-TARGET -merge=1 NEW_DIR build-fuzz/long/TARGET/corpus
set -uo pipefail
cd "$(dirname "$0")/.."
t=$1 seconds=$2
dir=build-fuzz/long/$t
mkdir -p "$dir/corpus"
cp -n fuzz/corpus/"$t"/* "$dir/corpus/"
if [[ $t == dlcm_run ]]; then
  for m in add mlp; do build-fuzz/bin/dlc-runtime-testgen $m "$dir/corpus/testgen-$m" >/dev/null; done
fi
extra=()
[[ -f fuzz/$t.dict ]] && extra+=(-dict="$PWD/fuzz/$t.dict")
cd "$dir"
# A finding ends libFuzzer's run: it is left as crash-*/leak-*/... here and
# the run goes on from the grown corpus for the rest of the time (each run
# one log and one line of time.txt; summarize.py adds them up).
end=$((SECONDS + seconds))
while (( end - SECONDS > 10 )); do
  log=fuzz-$(date +%H%M%S).log
  /usr/bin/time -a -f "$log: user %U s, system %S s, wall %e s, max RSS %M KiB" -o time.txt \
    nice -n 19 "../../bin/dlc-fuzz-$t" -max_total_time=$((end - SECONDS)) -rss_limit_mb=2048 \
    -timeout=60 -print_final_stats=1 "${extra[@]}" corpus >"$log" 2>&1
  echo "$log: exit $?" >>time.txt
  sleep 1
done
