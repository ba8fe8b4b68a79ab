# Reads a dlc profile --trace file as a trace viewer does and checks it.
import json
import sys

trace = json.load(open(sys.argv[1]))
runs = int(sys.argv[2])
events = trace["traceEvents"]
lanes = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
assert lanes[0].startswith("host") and lanes[1].startswith("device"), lanes
spans = [e for e in events if e["ph"] == "X"]
host = [e for e in spans if e["tid"] == 0]
kernels = [e for e in spans if e["tid"] == 1]
assert len(host) == runs, host
assert kernels and len(kernels) % runs == 0, len(kernels)
for e in spans:
    assert e["dur"] >= 0 and e["ts"] >= 0, e
# Every kernel lies inside a run, and the kernels of a run follow each other.
for k in kernels:
    assert any(h["ts"] <= k["ts"] + 1e-3 and k["ts"] + k["dur"] <= h["ts"] + h["dur"] + 1e-3
               for h in host), k
    assert k["args"]["ops"], k
starts = [k["ts"] for k in kernels]
assert starts == sorted(starts)
print(f"trace ok: {len(host)} runs, {len(kernels)} kernel launches")
