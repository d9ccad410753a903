#!/usr/bin/env python3
"""Fits the cost model's parameters to measured allreduce times and writes the calibrated topologies.

The model (lib/select/timing_model.h) prices a plan from a topology's link latency and bandwidth and
the device's step overhead, signal overhead, ingress and local bandwidth; `peerreduce-sim predict`
prints its prediction per algorithm and size. This script searches those six numbers for the values
that make the predictions closest to measurements (least squares on log(predicted / measured), one
parameter at a time with shrinking multiplicative steps, within physical bounds), then writes one
topology file per world size and a table of predicted against measured.

    bench/calibrate_model.py --sim build/ci/sim/peerreduce-sim \\
        --points docs/perf/h200x4-lines2/model-points.csv --out-dir docs/perf/h200x4-lines2

Points: CSV with columns ranks, algorithm, bytes, best_us (others ignored). Exit 2 on bad input.
Standard library only.
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

# name, start, lower bound, upper bound
PARAMETERS = [
    ("latency_us", 1.0, 0.05, 20.0),
    ("link_gbps", 150.0, 10.0, 1000.0),
    ("step_overhead_us", 0.5, 0.0, 20.0),
    ("signal_overhead_us", 0.1, 0.0, 20.0),
    ("ingress_gbps", 450.0, 10.0, 2000.0),
    ("local_gbps", 2000.0, 100.0, 10000.0),
]


def fail(message):
    print(f"calibrate_model: {message}", file=sys.stderr)
    sys.exit(2)


def topology_text(ranks, p):
    return (
        "peerreduce-topology 1\n"
        f"ranks {ranks}\n"
        f"device step_overhead_us={p['step_overhead_us']:.4g} signal_overhead_us={p['signal_overhead_us']:.4g} "
        f"local_gbps={p['local_gbps']:.4g} ingress_gbps={p['ingress_gbps']:.4g}\n"
        f"default nvlink {p['latency_us']:.4g} {p['link_gbps']:.4g}\n"
    )


def size_of(label):
    number, unit = label.split()
    return int(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def predict(sim, ranks, p):
    """{(algorithm, bytes): predicted us} from `peerreduce-sim predict` on a topology of p."""
    with tempfile.NamedTemporaryFile("w", suffix=".topology", delete=False) as f:
        f.write(topology_text(ranks, p))
        path = f.name
    try:
        out = subprocess.run([sim, "predict", "--ranks", str(ranks), "--topology", path, "--dtype", "fp32"],
                             capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        fail(f"peerreduce-sim predict failed: {out.stderr.strip()}")
    header = None
    table = {}
    for line in out.stdout.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "size":
            header = cells
            continue
        if header is None:
            continue
        for name, cell in zip(header[1:-1], cells[1:-1]):
            if cell:
                table[(name, size_of(cells[0]))] = float(cell.split()[0])
    return table


def load_points(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    points = []
    for i, row in enumerate(rows, start=2):
        try:
            points.append((int(row["ranks"]), row["algorithm"], int(row["bytes"]), float(row["best_us"])))
        except (KeyError, TypeError, ValueError):
            fail(f"{path} line {i}: needs ranks, algorithm, bytes and best_us")
        if points[-1][3] <= 0:
            fail(f"{path} line {i}: best_us must be positive")
    if not points:
        fail(f"{path}: no points")
    return points


def error(sim, points, p, cache):
    total = 0.0
    for ranks in sorted({pt[0] for pt in points}):
        key = (ranks, tuple(round(p[name], 6) for name, *_ in PARAMETERS))
        if key not in cache:
            cache[key] = predict(sim, ranks, p)
        table = cache[key]
        for r, algorithm, size, measured in points:
            if r != ranks:
                continue
            if (algorithm, size) not in table:
                fail(f"the prediction has no {algorithm} at {size} bytes for {ranks} ranks")
            total += math.log(table[(algorithm, size)] / measured) ** 2
    return total


def fit(sim, points):
    p = {name: start for name, start, *_ in PARAMETERS}
    cache = {}
    best = error(sim, points, p, cache)
    step = 2.0
    while step > 1.01:  # bounded: the step shrinks every round without an improvement
        improved = False
        for name, _, low, high in PARAMETERS:
            for factor in (step, 1.0 / step):
                trial = dict(p)
                base = trial[name] if trial[name] > 0 else low + 1e-3
                trial[name] = min(high, max(low, base * factor))
                e = error(sim, points, trial, cache)
                if e < best - 1e-12:
                    best, p, improved = e, trial, True
        if not improved:
            step = math.sqrt(step)
    return p, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", required=True, help="the peerreduce-sim binary")
    parser.add_argument("--points", required=True, help="measured times (CSV)")
    parser.add_argument("--out-dir", required=True, help="where the topology files and the table go")
    parser.add_argument("--name", default="h200-nvlink", help="file name prefix (default h200-nvlink)")
    args = parser.parse_args()
    if not os.access(args.sim, os.X_OK):
        fail(f"{args.sim} is not an executable")
    points = load_points(args.points)
    p, residual = fit(args.sim, points)
    os.makedirs(args.out_dir, exist_ok=True)
    lines = ["| ranks | algorithm | bytes | predicted us | measured us | measured / predicted |",
             "| ---: | --- | ---: | ---: | ---: | ---: |"]
    for ranks in sorted({pt[0] for pt in points}):
        with open(os.path.join(args.out_dir, f"{args.name}-{ranks}.topology"), "w") as f:
            f.write(topology_text(ranks, p))
        table = predict(args.sim, ranks, p)
        for r, algorithm, size, measured in points:
            if r == ranks:
                predicted = table[(algorithm, size)]
                lines.append(f"| {r} | {algorithm} | {size} | {predicted:.2f} | {measured:.2f} | {measured / predicted:.2f} |")
    with open(os.path.join(args.out_dir, f"{args.name}-fit.md"), "w") as f:
        f.write("Fitted: " + ", ".join(f"{name} {p[name]:.4g}" for name, *_ in PARAMETERS) +
                f"; rms log error {math.sqrt(residual / len(points)):.3f}\n\n" + "\n".join(lines) + "\n")
    print("calibrate_model: " + ", ".join(f"{name} {p[name]:.4g}" for name, *_ in PARAMETERS) +
          f"; rms log error {math.sqrt(residual / len(points)):.3f} over {len(points)} points")


if __name__ == "__main__":
    main()
