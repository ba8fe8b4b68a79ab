# RUN: %python %s %dlc_src
# `dlc plan --train --memory-budget` trades FLOPs for memory: for LeNet and
# a GPT-2 block with an MSE train block (test/e2e/grad_jax.py's), a budget 5%
# below the plan without one makes dlc-rematerialize recompute activations
# in the backward pass, and the report adds up: the plan's arena is the
# "after" one, smaller than the "before" one, which is the arena without a
# budget; the FLOPs grow by exactly the recomputation's; the budget is met
# exactly when the arena fits it; the peak's parts sum to the peak and the
# state's kinds to the state.
import os
import re
import subprocess
import sys
import tempfile

source_root = sys.argv[1]


def number(text, pattern):
    match = re.search(pattern, text, re.M)
    assert match, (pattern, text)
    return [int(g.replace(",", "")) for g in match.groups()]


def plan(model, dims, budget=None):
    cmd = ["dlc", "plan", model, "--train"] + [f"--dim={k}={v}" for k, v in dims.items()]
    if budget is not None:
        cmd.append(f"--memory-budget={budget}")
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, (cmd, done.stderr)
    return done.stdout, done.stderr


def check(name, model, dims):
    report, _ = plan(model, dims)
    (arena,) = number(report, r"^arena: ([0-9,]+) bytes")
    (peak,) = number(report, r"^peak: ([0-9,]+) bytes")
    parts = sum(number(report, rf"^  {what}: ([0-9,]+) bytes")[0]
                for what in ("saved for the backward pass", "gradients", "temporaries"))
    if "  new state:" in report:
        parts += number(report, r"^  new state: ([0-9,]+) bytes")[0]
    assert parts == peak, (name, report)
    (state,) = number(report, r"^state: ([0-9,]+) bytes")
    assert sum(number(report, r"^state by kind: parameters ([0-9,]+) bytes in [0-9]+ "
                              r"tensors, optimizer moments ([0-9,]+) bytes in [0-9]+, "
                              r"step counter ([0-9,]+) bytes")) == state, (name, report)
    forward, backward, update, total = number(
        report, r"^FLOPs: forward ([0-9,]+), backward ([0-9,]+), update ([0-9,]+) \(([0-9,]+) in all\)")
    assert forward + backward + update == total, (name, report)
    assert "memory budget" not in report, (name, report)

    budget = arena * 95 // 100
    traded, warning = plan(model, dims, budget)
    (after,) = number(traded, r"^arena: ([0-9,]+) bytes")
    before_arena, after_arena = number(traded, r"^arena before -> after: ([0-9,]+) -> ([0-9,]+) bytes")
    flops_before, flops_after = number(traded, r"^FLOPs before -> after: ([0-9,]+) -> ([0-9,]+)$")
    values, ops, recomputed = number(
        traded, r"^recomputed in the backward pass: ([0-9]+) values? \(([0-9]+) ops?\), ([0-9,]+) FLOPs")
    (recomputation,) = number(traded, r"^FLOPs: .* \(recomputation ([0-9,]+)\)")
    assert before_arena == arena and after_arena == after, (name, traded)
    assert after < arena and values > 0 and ops > 0, (name, traded)
    assert flops_before == total and flops_after == total + recomputed, (name, traded)
    assert recomputation == recomputed, (name, traded)
    met = "bytes, met" in traded
    assert met == (after <= budget), (name, traded)
    assert met == ("warning" not in warning), (name, warning)
    print(f"{name}: arena {arena:,} -> {after:,} bytes (budget {budget:,}, "
          f"{'met' if met else 'not met'}), {values} values recomputed, "
          f"FLOPs {total:,} -> {flops_after:,}")


check("fashion-cnn", os.path.join(source_root, "examples", "fashion_mnist", "cnn.dlg"), {"N": 32})

with tempfile.TemporaryDirectory(prefix="dlc-plan-train-") as tmp:
    model = os.path.join(tmp, "gpt2_block.dlg")
    with open(os.path.join(source_root, "examples", "gpt2_block.dlg")) as f:
        source = f.read()
    with open(model, "w") as f:
        f.write(source + """
train gpt2_block(target: f32[B, T, 768]) {
  loss      = mse(y, target)
  optimizer = adam(lr=0.001)
}
""")
    check("gpt2_block", model, {"B": 1, "T": 512})
