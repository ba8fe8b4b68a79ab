#!/usr/bin/env python3
"""Runs the malformed-input catalogue that gen.py wrote.

Usage: run.py DIR [--jobs N] [--timeout S] [--filter REGEX] [--verbose]

Each case runs in DIR with a timeout. It passes when the tool ends with one
of the case's exit codes (never by a signal, never 70, never 0 unless the
case allows it), its output matches the case's regular expression (the
message names where the input is wrong) and the output holds no sign of a
crash: no "LLVM ERROR", no stack dump, no "PLEASE submit a bug report", no
sanitizer report. A timeout is a hang, and a failure. Prints a summary per
class and every failure with its output; exits 1 when any case fails.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time

CRASH = re.compile(r"LLVM ERROR|PLEASE submit a bug report|Stack dump|#\d+ 0x[0-9a-f]+|"
                   r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|"
                   r"terminate called|Assertion .* failed|Segmentation fault")


def run_case(d, c, timeout):
    start = time.monotonic()
    env = dict(os.environ)
    env.setdefault("DLC_CACHE_DIR", os.path.join(d, ".cache"))
    try:
        p = subprocess.run(c["argv"], cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout, env=env,
                           start_new_session=True)
        out = p.stdout.decode("utf-8", "replace")
        rc = p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return c, "hang", f"no exit after {timeout} s", out, time.monotonic() - start
    dt = time.monotonic() - start
    if rc < 0:
        return c, "crash", f"killed by signal {signal.Signals(-rc).name}", out, dt
    m = CRASH.search(out)
    if m:
        return c, "crash", f"exit {rc}, output shows a crash ({m.group(0)!r})", out, dt
    if rc not in c["exit"]:
        return c, "exit", f"exit {rc}, expected {' or '.join(map(str, c['exit']))}", out, dt
    if not re.search(c["regex"], out):
        return c, "unlocated", f"exit {rc}, but the message does not match /{c['regex']}/", out, dt
    return c, "ok", "", out, dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--filter", default="")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    cases = json.load(open(os.path.join(a.dir, "cases.json")))
    if a.filter:
        cases = [c for c in cases if re.search(a.filter, c["name"])]
    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda c: run_case(a.dir, c, a.timeout), cases):
            results.append(r)
    by_class = collections.OrderedDict()
    for c, status, _, _, _ in sorted(results, key=lambda r: r[0]["class"]):
        by_class.setdefault(c["class"], collections.Counter())[status] += 1
    failures = [r for r in results if r[1] != "ok"]
    for c, status, why, out, dt in failures:
        print(f"FAIL [{status}] {c['name']}: {why}")
        print("  $ " + " ".join(c["argv"]))
        for line in out.strip().splitlines()[:12]:
            print("  | " + line[:300])
    if a.verbose:
        for c, status, why, out, dt in results:
            first = next((l for l in out.splitlines() if "error" in l), out.strip()[:200])
            print(f"{status:9s} {dt:5.1f}s {c['name']}: {first[:240]}")
    print(f"{'class':32s} {'cases':>5s} {'ok':>4s} {'crash':>5s} {'hang':>4s} {'exit':>4s} {'unloc':>5s}")
    for cls, cnt in by_class.items():
        print(f"{cls:32s} {sum(cnt.values()):5d} {cnt['ok']:4d} {cnt['crash']:5d} {cnt['hang']:4d} "
              f"{cnt['exit']:4d} {cnt['unlocated']:5d}")
    total = collections.Counter(r[1] for r in results)
    print(f"{len(results)} cases in {len(by_class)} classes: {total['ok']} ok, {total['crash']} crashed, "
          f"{total['hang']} hung, {total['exit']} wrong exit code, {total['unlocated']} unlocated "
          f"({time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
