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
  tensor    not predicted: the partitioner's Megatron preset splits
            matmuls on `param` ops, and a train step's parameters are
            state arguments, so --mesh model=N replicates the step.

Where the partitioner cannot split a model's train step (ResNet-50: the
convolutions' and pooling's gradients slice at the global batch), data
parallelism is predicted analytically instead and marked so: one device's
step at its batch plus a ring all-reduce of every gradient (bytes from
the plan's parameters), not overlapped with the backward pass (an upper
bound).

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
        else:
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
             "step over this one's). Tensor parallelism is not predicted: the Megatron",
             "preset splits matmuls on `param` ops, and a train step's parameters are",
             "state arguments, which it leaves whole (a mesh `model=N` replicates the",
             "step). *analytic*: the partitioner cannot split this train step (ResNet-50's",
             "convolution and pooling gradients slice at the global batch), so data",
             "parallelism is one device's step plus a ring all-reduce of the gradients,",
             "not overlapped (an upper bound).", "",
             "Anchors (data parallelism, measured by others): Horovod ~90% scaling",
             "efficiency; TF2 + Horovod ~7x on 8 V100s (~87%).", ""]
    for name, model, dim, per_device in MODELS:
        for spec, link in SPECS:
            print(f"{name} on {spec} + {link}", file=sys.stderr)
            one, one_fits, rows = predict(args.build, model, dim, per_device, spec, link)
            lines += [f"## {name} on {spec.upper()} + {link}", "",
                      f"One device: {one:.1f} ms a step"
                      + ("" if one_fits else " (its batch does not fit one device)") + ".", "",
                      "| devices | data | pipeline (1F1B, 4N micro-batches) | auto: chosen | auto |",
                      "|---:|---|---|---|---|"]
            for row in rows:
                lines.append(f"| {row['n']} | {cell(row['data'], one)} | "
                             f"{cell(row['pipeline'], one)} | {row['auto'][2]} | "
                             f"{cell(row['auto'], one)} |")
            data8 = rows[-1]["data"]
            if data8[0]:
                lines += ["", f"Data parallelism on 8: predicted {100 * one / data8[0]:.0f}% "
                          f"({8 * one / data8[0]:.1f}x), against the anchors' ~87-90%."]
            lines.append("")
    lines += [
        "## Reading", "",
        "- GPT-2 small's data parallelism is predicted at 81% on 8 H100s and 87% on",
        "  8 V100s (6.5x and 6.9x): on the faster GPU the same gradient all-reduce",
        "  (500 MB a step over NVLink) is a larger share of a shorter step. The",
        "  V100 figure lands on the TF2 + Horovod anchor (~7x); both are below",
        "  Horovod's ~90%, reported for convolutional networks (Inception V3,",
        "  ResNet-101), which compute more per byte of gradient, as this page's",
        "  ResNet-50 rows show.",
        "- `auto` chooses data parallelism for GPT-2 small (with ZeRO 1 where",
        "  its reduce-scatter and all-gather are predicted faster): every plan",
        "  fits, and a pipeline's bubble and per-micro-batch overheads cost more",
        "  than the all-reduce.",
        "- ResNet-50's train step does not partition over `data` today (the",
        "  convolutions' and pooling's gradients are built with slices at the",
        "  global batch, which the partitioner does not rewrite), so `auto` can",
        "  only choose among pipelines for it and loses to the analytic data",
        "  parallelism (25.6 M parameters: a 1-2 ms all-reduce against a 26-97 ms",
        "  step). The analytic figure leaves out everything but the all-reduce:",
        "  an upper bound on efficiency, not a prediction of the partitioned step.",
        "- Pipelines here carry 4N micro-batches of the weak-scaled batch (one",
        "  GPT-2 sequence each at 8 devices): the bubble (P-1)/(M+P-1) is about a",
        "  fifth, and the micro-batches' kernels are small; `auto` tries 1 to 16.",
        ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
