import json
import sys

r = json.load(open(sys.argv[1]))
lat = r["latency_ms"]
assert r["iterations"] == 20 and r["warmup"] == 2, r
assert 0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
assert lat["min"] <= lat["mean"] <= lat["max"], lat
assert r["batch"] == 64 and abs(r["samples_per_second"] - 64 * r["inferences_per_second"]) < 1e-6 * r["samples_per_second"]
# The MLP's FLOPs: 2*64*(784*128 + 128*10) for the GEMMs, plus bias and ReLU.
assert 2 * 64 * (784 * 128 + 128 * 10) <= r["flops_per_run"] < 1.01 * 2 * 64 * (784 * 128 + 128 * 10), r
assert r["weight_bytes"] == 4 * (784 * 128 + 128 + 128 * 10 + 10), r
assert r["kernel_ms_per_run"] is not None and r["kernel_ms_per_run"] > 0, r
assert r["peak_gflops_per_second"] > 0 and r["peak_gbytes_per_second"] > 0, r
assert r["bound"], r
print("bench json ok:", r["bound"])
