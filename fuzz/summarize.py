#!/usr/bin/env python3
"""A markdown table of the long runs in build-fuzz/long/<target>/ (fuzz/long_run.sh).

    python3 fuzz/summarize.py [build-fuzz/long]

Per target, over every run there: executions (libFuzzer's final
stat::number_of_executed_units, or the last status line's #N while a run is
still going), the last cov:/ft: and corpus size, the CPU time (user +
system) the runs got (GNU time's lines in time.txt, or /proc for a run
still going), and the crash, leak, timeout and OOM files left.
"""
import glob, os, re, sys

base = sys.argv[1] if len(sys.argv) > 1 else "build-fuzz/long"
print("| target | runs | executions | cov | ft | corpus (files, KiB) | CPU s (user+sys) | wall s | crashes/leaks/timeouts/OOMs |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for d in sorted(glob.glob(os.path.join(base, "*"))):
    t = os.path.basename(d)
    logs = sorted(glob.glob(os.path.join(d, "fuzz*.log")), key=os.path.getmtime)
    execs = 0
    cov = ft = "?"
    for log in logs:
        text = open(log, errors="replace").read()
        m = re.findall(r"stat::number_of_executed_units: (\d+)", text)
        if m:
            execs += int(m[-1])
        else:
            n = re.findall(r"^#(\d+)\s", text, re.M)
            execs += int(n[-1]) if n else 0
        c = re.findall(r"cov: (\d+) ft: (\d+)", text)
        if c:
            cov, ft = c[-1]
    cpu = wall = 0.0
    tt = os.path.join(d, "time.txt")
    if os.path.exists(tt):
        for line in open(tt):
            m = re.search(r"user ([\d.]+) s, system ([\d.]+) s, wall ([\d.]+) s", line)
            if m:
                cpu += float(m.group(1)) + float(m.group(2))
                wall += float(m.group(3))
    # Runs still going: their CPU time so far from /proc.
    tick = os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
            if not cmd[0].endswith(f"dlc-fuzz-{t}".encode()) or os.path.realpath(d) != cwd:
                continue
            f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            cpu += (int(f[11]) + int(f[12])) / tick
        except (OSError, IndexError):
            continue
    corpus = glob.glob(os.path.join(d, "corpus", "*"))
    kib = sum(os.path.getsize(f) for f in corpus) / 1024
    bad = [os.path.basename(f) for f in glob.glob(os.path.join(d, "*"))
           if re.match(r"(crash|leak|timeout|oom|slow-unit)-", os.path.basename(f))]
    print(f"| {t} | {len(logs)} | {execs} | {cov} | {ft} | {len(corpus)}, {kib:.0f} | {cpu:.0f} | {wall:.0f} | {', '.join(bad) or 'none'} |")
