#!/usr/bin/env python3
"""The documented rule between peerreduce-sim's predicted and simulated times (docs/ALGORITHMS.md,
"Predicted and simulated times"): one operation takes exactly its predicted time; a run of k
operations (iterations x segments) takes k times the per-operation prediction plus one entry fence
for each operation after the first, which on a full mesh of equal links is the link latency (1 us by
default): simulated = predicted + (k - 1) x 1 us."""
import json
import subprocess
import sys

sim = sys.argv[1]
LATENCY_US = 1.0


def run(*args):
    out = subprocess.run([sim, *args, "--json"], check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    assert d["verdict"] == "ok", d["verdict"]
    return d


failures = 0
for algo in ("one-shot", "two-shot", "ring"):
    for iterations in (1, 2, 10):
        d = run("--ranks", "4", "--count", "100000", "--algo", algo, "--iterations", str(iterations))
        segments = next(c["segments"] for c in d["candidates"] if c["algorithm"] == d["algorithm"])
        operations = iterations * segments
        expected = d["predicted_time_us"] + (operations - 1) * LATENCY_US
        ok = abs(d["simulated_time_us"] - expected) < 1e-3
        failures += not ok
        print(f"{algo:9} iterations {iterations:2} segments {segments}: predicted {d['predicted_time_us']:.4f} "
              f"simulated {d['simulated_time_us']:.4f} expected {expected:.4f} {'ok' if ok else 'DIFFERS'}")
# Segments: a message larger than the scratch runs as several operations of the plan.
d = run("--ranks", "4", "--count", "3000000", "--algo", "two-shot", "--iterations", "1")
segments = next(c["segments"] for c in d["candidates"] if c["algorithm"] == "two-shot")
expected = d["predicted_time_us"] + (segments - 1) * LATENCY_US
ok = segments > 1 and abs(d["simulated_time_us"] - expected) < 1e-3
failures += not ok
print(f"two-shot segmented into {segments}: predicted {d['predicted_time_us']:.4f} simulated "
      f"{d['simulated_time_us']:.4f} expected {expected:.4f} {'ok' if ok else 'DIFFERS'}")
sys.exit(1 if failures else 0)
