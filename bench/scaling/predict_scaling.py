#!/usr/bin/env python3
"""Predicted scaling of GPT-2 small and ResNet-50 training, 1 to 8 devices.

    bench/scaling/predict_scaling.py [--build build] [--out bench/results/scaling-predicted.md]

Weak scaling, as the published anchors measure it: each device keeps its
batch (GPT-2 small 4 sequences of 1024, ResNet-50 32 images), so N
devices train N times the samples a step, and the efficiency is one
device's step over N devices' (1.0: N times the throughput). Every number
is `dlc plan --train`'s prediction (passes/analysis/CostModel.h: kernels by
roofline, collectives by ring alpha-beta, both streams simulated; pipelines
by passes/analysis/PipelineCost.h), on H100 + NVLink 4 and V100 + NVLink 2:

  data      --mesh data=N --parallel data;
  pipeline  --mesh pipe=N --parallel pipeline --microbatches 4N (1F1B);
  auto      --parallel auto --devices N (driver/AutoPlan.h): its choice;
  tensor    --mesh model=N --parallel tensor (the Megatron preset, the
            parameters and their moments split with the matmuls);

Where the partitioner cannot split a model's train step, data
parallelism is predicted analytically instead and marked so: one device's
step at its batch plus a ring all-reduce of every gradient (bytes from
the plan's parameters), not overlapped with the backward pass (an upper
bound).

Then the model that fits no single device: the 2.1-billion-parameter
bench/models/gpt2_2b.dlg on 8 V100s of 16 GB, `--parallel auto`'s best
plans and the reason for its choice.

Beside them, the anchors: Horovod's ~90% scaling efficiency (Sergeev and
Del Balso, 2018, on 128+ GPUs) and a TF2 + Horovod report of ~7x on 8
V100s (~87%) for data parallelism.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = [("GPT-2 small", os.path.join(ROOT, "bench", "models", "gpt2_small.dlg"), "B", 4),
          ("ResNet-50", os.path.join(ROOT, "bench", "models", "resnet50.dlg"), "N", 32)]
SPECS = [("h100", "nvlink4"), ("v100", "nvlink2")]
DEVICES = [1, 2, 4, 8]


def plan(build, args):
    p = subprocess.run([os.path.join(build, "bin", "dlc"), "plan"] + args,
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def step_of(out):
    m = re.search(r"step ([0-9.]+) ms\s*$", out, re.M) or re.search(r", step ([0-9.]+) ms", out)
    return float(m.group(1)) if m else None


def fits_of(out):
    m = re.search(r"fits on one .*: (yes|no)", out)
    return m and m.group(1) == "yes"


def link_of(name):
    links = json.load(open(os.path.join(ROOT, "devices", "links.json")))
    return links[name]["bandwidth"], links[name]["latency"]


def predict(build, model, dim, per_device, spec, link):
    rows = []
    base = [model, "--train", "--device-spec", spec, "--link", link]
    # One device: the unpartitioned train step, as --parallel auto --devices 1
    # predicts it (the baseline of every efficiency, as in dlc plan).
    one_args = base + ["--parallel", "auto", "--devices", "1", "--batch-size", str(per_device)]
    rc, out, err = plan(build, one_args)
    m = re.search(r"one device: step ([0-9.]+) ms, .*: (fits|does not fit) one", out)
    if not m:
        sys.exit(f"dlc plan {' '.join(one_args)}: exit {rc}\n{out}\n{err}")
    one = float(m.group(1))
    one_fits = m.group(2) == "fits"
    m = re.search(r"state by kind: parameters ([0-9,]+) bytes", plan(build, base[:2] + [
        "--dim", f"{dim}={per_device}"])[1])
    parameter_bytes = int(m.group(1).replace(",", "")) if m else 0
    bandwidth, latency = link_of(link)
    for n in DEVICES:
        batch = n * per_device
        row = {"n": n}
        if n == 1:
            row["data"] = (one, one_fits, "")
            row["pipeline"] = (one, one_fits, "")
            row["tensor"] = (one, one_fits, "")
        else:
            rc, out, err = plan(build, base + ["--dim", f"{dim}={batch}", "--mesh", f"model={n}",
                                               "--parallel", "tensor"])
            row["tensor"] = (step_of(out), fits_of(out), "") if rc == 0 else \
                (None, None, err.strip().splitlines()[-1] if err.strip() else f"exit {rc}")
            rc, out, err = plan(build, base + ["--dim", f"{dim}={batch}", "--mesh", f"data={n}",
                                               "--parallel", "data"])
            if rc == 0:
                row["data"] = (step_of(out), fits_of(out), "")
            else:
                ring = 2 * (n - 1) * latency + 2 * (n - 1) / n * parameter_bytes / bandwidth
                row["data"] = (one + 1e3 * ring, one_fits, "analytic")
            rc, out, err = plan(build, base + ["--dim", f"{dim}={batch}", "--mesh", f"pipe={n}",
                                               "--parallel", "pipeline", "--microbatches",
                                               str(4 * n)])
            row["pipeline"] = (step_of(out), fits_of(out), "") if rc == 0 else \
                (None, None, err.strip().splitlines()[-1] if err.strip() else f"exit {rc}")
        rc, out, err = plan(build, base[:1] + ["--train", "--device-spec", spec, "--link", link,
                                               "--parallel", "auto", "--devices", str(n),
                                               "--batch-size", str(batch)])
        m = re.search(r"chosen: --mesh (\S+) --parallel (\S+)(.*?): fits .*step ([0-9.]+) ms", out)
        if m and m.group(1) == "none":
            m = None if not one_fits else m
        row["auto"] = (float(m.group(4)), True, f"{m.group(1)}{m.group(3)}".replace(
            "none", "one device")) if m else (None, False, "none fits")
        rows.append(row)
        print(f"  {spec} {n}: {row}", file=sys.stderr)
    return one, one_fits, rows


def cell(entry, one):
    step, fits, note = entry
    if step is None:
        return "—"
    eff = one / step
    text = f"{step:.1f} ms, {100 * eff:.0f}%"
    if fits is False:
        text += " (does not fit)"
    if note == "analytic":
        text += " (analytic)"
    return text


def large_model(build):
    """`dlc plan --parallel auto` on the 2.1e9-parameter GPT-2-style model
    over 8 V100s of 16 GB: its best plans and why the first was chosen."""
    model = os.path.join(ROOT, "bench", "models", "gpt2_2b.dlg")
    args = [model, "--train", "--parallel", "auto", "--devices", "8", "--device-spec", "v100",
            "--batch-size", "8"]
    print("gpt2_2b on 8 v100", file=sys.stderr)
    rc, out, err = plan(build, args)
    if rc != 0:
        sys.exit(f"dlc plan {' '.join(args)}: exit {rc}\n{out}\n{err}")
    body = out.strip().splitlines()
    return ["## A model that fits no single device: GPT-2 2.1B on 8 V100s", "",
            "`dlc plan bench/models/gpt2_2b.dlg --train --parallel auto --devices 8 "
            "--device-spec v100 --batch-size 8` (40 blocks of width 2048, a global batch",
            "of 8 sequences of 1024):", "", "```"] + [line.replace(ROOT + "/", "")
                                                     for line in body] + ["```", ""]


def reading(results):
    """What the tables say, from their numbers."""
    def eight(name, spec, column):
        one, rows = results[(name, spec)]
        step, _, note = rows[-1][column]
        return (one / step if step else None), note

    def pct(e):
        return f"{100 * e:.0f}%" if e else "—"

    lines = ["## Reading", ""]
    gh, _ = eight("GPT-2 small", "h100", "data")
    gv, _ = eight("GPT-2 small", "v100", "data")
    lines += [f"- GPT-2 small's data parallelism on 8 devices is predicted at {pct(gh)} on "
              f"H100s and {pct(gv)} on V100s ({8 * gh:.1f}x and {8 * gv:.1f}x), against the "
              "TF2 + Horovod anchor (~7x, ~87%) and Horovod's ~90% (reported for "
              "convolutional networks, which compute more per byte of gradient): on the "
              "faster GPU the same gradient all-reduce is a larger share of a shorter step."]
    for name in ("GPT-2 small", "ResNet-50"):
        for spec in ("h100", "v100"):
            tensor, _ = eight(name, spec, "tensor")
            data, note = eight(name, spec, "data")
            chosen = results[(name, spec)][1][-1]["auto"][2]
            lines.append(f"- {name} on 8 {spec.upper()}s: data {pct(data)}"
                         + (" (analytic: the partitioner did not split the step)"
                            if note == "analytic" else "")
                         + f", tensor {pct(tensor)}; `auto` chooses {chosen}.")
    lines += ["- Tensor parallelism splits every layer's activations' all-reduces over the "
              "devices on every micro-step, where data parallelism reduces the gradients once "
              "a step: with a batch per device that fits, data parallelism wins, and tensor "
              "or pipeline parallelism is chosen when it does not fit (GPT-2 2.1B above).",
              "- Pipelines here carry 4N micro-batches of the weak-scaled batch (one GPT-2 "
              "sequence each at 8 devices): the bubble (P-1)/(M+P-1) is about a fifth, and "
              "the micro-batches' kernels are small; `auto` tries 1 to 16.", ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["# Predicted scaling of training, 1 to 8 devices (dlc plan)", "",
             "Predictions only, by `bench/scaling/predict_scaling.py` (nothing here ran on a",
             "GPU): weak scaling, each device keeping its batch (GPT-2 small: 4 sequences",
             "of 1024 tokens; ResNet-50: 32 images of 224x224), f32. Each cell is the",
             "predicted step and the efficiency against perfect scaling (one device's",
             "step over this one's). *tensor*: `--mesh model=N --parallel tensor`, the",
             "Megatron preset (matmuls on parameters split by columns then rows, their",
             "state split with them), the global batch on every device. *analytic*",
             "(where it appears): the partitioner could not split the train step, so",
             "data parallelism is one device's step plus a ring all-reduce of the",
             "gradients, not overlapped (an upper bound).", "",
             "Anchors (data parallelism, measured by others): Horovod ~90% scaling",
             "efficiency; TF2 + Horovod ~7x on 8 V100s (~87%).", ""]
    results = {}
    for name, model, dim, per_device in MODELS:
        for spec, link in SPECS:
            print(f"{name} on {spec} + {link}", file=sys.stderr)
            one, one_fits, rows = predict(args.build, model, dim, per_device, spec, link)
            results[(name, spec)] = (one, rows)
            lines += [f"## {name} on {spec.upper()} + {link}", "",
                      f"One device: {one:.1f} ms a step"
                      + ("" if one_fits else " (its batch does not fit one device)") + ".", "",
                      "| devices | data | tensor | pipeline (1F1B, 4N micro-batches) "
                      "| auto: chosen | auto |",
                      "|---:|---|---|---|---|---|"]
            for row in rows:
                lines.append(f"| {row['n']} | {cell(row['data'], one)} | "
                             f"{cell(row['tensor'], one)} | "
                             f"{cell(row['pipeline'], one)} | {row['auto'][2]} | "
                             f"{cell(row['auto'], one)} |")
            data8 = rows[-1]["data"]
            if data8[0]:
                lines += ["", f"Data parallelism on 8: predicted {100 * one / data8[0]:.0f}% "
                          f"({8 * one / data8[0]:.1f}x), against the anchors' ~87-90%."]
            lines.append("")
    lines += large_model(args.build)
    lines += reading(results)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
