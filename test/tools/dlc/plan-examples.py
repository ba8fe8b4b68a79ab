# RUN: %python %s %dlc_src
# Every example goes through the dlc-compile pipeline, whose last pass proves
# the memory plan (dlc-verify-memory-plan), at its dimensions taken as 1 and
# as 3: `dlc plan` succeeds and reports an arena no smaller than the lower
# bound and no larger than the naive sum; and the IR `dlc compile
# --emit=mlir` prints passes `dlc-opt --dlc-compile` (the verifier again).
# An example with a train block has its train step planned and proved too
# (`dlc plan --train`), also with every recomputation that helps
# (`--memory-budget=1`: dlc-rematerialize, then the verifier).
import glob
import os
import re
import subprocess
import sys

examples = sorted(glob.glob(os.path.join(sys.argv[1], "examples", "*.dlg")))
assert examples, "no examples found"


def number(report, name):
    match = re.search(rf"^{re.escape(name)}: ([0-9,]+) bytes", report, re.M)
    assert match, (name, report)
    return int(match.group(1).replace(",", ""))


for path in examples:
    plan = subprocess.run(["dlc", "plan", path], capture_output=True, text=True)
    assert plan.returncode == 0, (path, plan.stderr)
    dims = re.findall(r"(\w+)=1 \(unbound, taken as 1\)", plan.stdout)
    for size in (1, 3):
        args = [f"--dim={d}={size}" for d in dims]
        plan = subprocess.run(["dlc", "plan", path] + args, capture_output=True, text=True)
        assert plan.returncode == 0, (path, size, plan.stderr)
        arena, bound = number(plan.stdout, "arena"), number(plan.stdout, "lower bound")
        naive = number(plan.stdout, "naive")
        assert 0 < bound <= arena <= naive, (path, size, plan.stdout)
        mlir = subprocess.run(["dlc", "compile", path, "--emit=mlir"] + args,
                              capture_output=True, text=True)
        assert mlir.returncode == 0, (path, size, mlir.stderr)
        planned = subprocess.run(["dlc-opt", "--dlc-compile"], input=mlir.stdout,
                                 capture_output=True, text=True)
        assert planned.returncode == 0, (path, size, planned.stderr)
        assert "dlc.arena_size" in planned.stdout, path
        with open(path) as f:
            if not re.search(r"^train ", f.read(), re.M):
                continue
        for budget in ([], ["--memory-budget=1"]):
            step = subprocess.run(["dlc", "plan", path, "--train"] + args + budget,
                                  capture_output=True, text=True)
            assert step.returncode == 0, (path, size, budget, step.stderr)
            arena, bound = number(step.stdout, "arena"), number(step.stdout, "lower bound")
            assert 0 < bound <= arena <= number(step.stdout, "naive"), (path, size, step.stdout)
    print(f"{os.path.basename(path)}: planned and proved at {dims or 'static shapes'}")
