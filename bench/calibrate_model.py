#!/usr/bin/env python3
"""Fits the cost model's parameters to measured allreduce times and writes the calibrated topologies.

The model (lib/select/timing_model.h) prices a plan from a topology's link latency and bandwidth and
the device's step overhead, signal overhead, ingress and local bandwidth and launch overhead;
`peerreduce-sim predict` prints its prediction per algorithm and size. This script searches those seven
numbers for the values that make the predictions closest to measurements (least squares on
log(predicted / measured), one parameter at a time with shrinking multiplicative steps, within
physical bounds), then writes one topology file per world size and a table of predicted against
measured.

    bench/calibrate_model.py --sim build/ci/sim/peerreduce-sim \\
        --points docs/perf/h200x4-lines2/model-points.csv --out-dir docs/perf \\
        --runs docs/perf/h200x4-lines2/np4-fp32.csv docs/perf/h200x4-lines2/np2-fp32.csv

Points: CSV with columns ranks, algorithm, bytes, best_us (others ignored). Runs (optional): CSV files
of peerreduce-bench (library, algorithm, ranks, bytes, in_place, best_us); their out-of-place
peerreduce allreduce rows (a `collective` column, where present, must say allreduce) add a second
table, per size, of the algorithm the GPU ran against the one the fitted model picks. Exit 2 on bad
input. Standard library only. Tuning tables (measured choices instead of the model's, for any
collective) come from bench/tuning_from_bench.py.
"""
import argparse
import csv
import json
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
    ("launch_overhead_us", 1.0, 0.0, 20.0),
]
# An rms log error this small is below the spread of repeated GPU measurements: the fit stops there.
NOISE = 0.005


def fail(message):
    print(f"calibrate_model: {message}", file=sys.stderr)
    sys.exit(2)


def topology_text(ranks, p):
    return (
        "peerreduce-topology 1\n"
        f"ranks {ranks}\n"
        f"device step_overhead_us={p['step_overhead_us']:.4g} signal_overhead_us={p['signal_overhead_us']:.4g} "
        f"local_gbps={p['local_gbps']:.4g} ingress_gbps={p['ingress_gbps']:.4g} "
        f"launch_overhead_us={p['launch_overhead_us']:.4g}\n"
        f"default nvlink {p['latency_us']:.4g} {p['link_gbps']:.4g}\n"
    )


def predict(sim, ranks, p):
    """{(algorithm, bytes): predicted us, ("picked", bytes): algorithm} from `peerreduce-sim predict`
    on a topology of p."""
    with tempfile.NamedTemporaryFile("w", suffix=".topology", delete=False) as f:
        f.write(topology_text(ranks, p))
        path = f.name
    try:
        out = subprocess.run([sim, "predict", "--ranks", str(ranks), "--topology", path, "--dtype", "fp32", "--json"],
                             capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        fail(f"peerreduce-sim predict failed: {out.stderr.strip()}")
    table = {}
    for size in json.loads(out.stdout)["sizes"]:
        for candidate in size["candidates"]:
            table[(candidate["name"], size["bytes"])] = candidate["predicted_time_us"]
        table[("picked", size["bytes"])] = size["picked"]
    return table


def load_runs(paths):
    """{(ranks, bytes): (algorithm, best_us)}: the out-of-place peerreduce rows of benchmark CSVs."""
    runs = {}
    for path in paths:
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}")
        for i, row in enumerate(rows, start=2):
            try:
                if row["library"] != "peerreduce" or row["in_place"] != "0":
                    continue
                if row.get("collective", "allreduce") != "allreduce":
                    continue  # the model is fitted to allreduce's times
                runs[(int(row["ranks"]), int(row["bytes"]))] = (row["algorithm"], float(row["best_us"]))
            except (KeyError, TypeError, ValueError):
                fail(f"{path} line {i}: needs library, algorithm, ranks, bytes, in_place and best_us")
    return runs


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


def fit(sim, points, max_evaluations):
    """Coordinate search from the starting values. Stops when no step of more than 1 % helps, when the
    fit is within measurement noise (rms log error below NOISE) or after max_evaluations predictions;
    with fewer points than parameters the search could otherwise creep along a flat valley for hours."""
    p = {name: start for name, start, *_ in PARAMETERS}
    cache = {}
    best = error(sim, points, p, cache)
    step = 2.0
    while step > 1.01 and len(cache) < max_evaluations and math.sqrt(best / len(points)) > NOISE:
        improved = False
        start = dict(p)
        for name, _, low, high in PARAMETERS:
            for factor in (step, 1.0 / step):
                if len(cache) >= max_evaluations:
                    break
                trial = dict(p)
                base = trial[name] if trial[name] > 0 else low + 1e-3
                trial[name] = min(high, max(low, base * factor))
                e = error(sim, points, trial, cache)
                # Only a real gain counts: a gain of one part in ten thousand is a flat valley.
                if e < best * (1.0 - 1e-4):
                    best, p, improved = e, trial, True
        if improved and len(cache) < max_evaluations:
            # Hooke-Jeeves pattern move: repeat the round's whole change once more, which walks a long
            # narrow valley in strides instead of one parameter at a time.
            trial = {name: min(high, max(low, p[name] * (p[name] / start[name]) if start[name] > 0 else p[name]))
                     for name, _, low, high in PARAMETERS}
            e = error(sim, points, trial, cache)
            if e < best * (1.0 - 1e-4):
                best, p = e, trial
        else:
            step = math.sqrt(step)
    return p, best, len(cache)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", required=True, help="the peerreduce-sim binary")
    parser.add_argument("--points", required=True, help="measured times (CSV)")
    parser.add_argument("--out-dir", required=True, help="where the topology files and the table go")
    parser.add_argument("--name", default="h200-nvlink", help="file name prefix (default h200-nvlink)")
    parser.add_argument("--runs", nargs="*", default=[], help="benchmark CSV files: the per-size table")
    parser.add_argument("--max-evaluations", type=int, default=3000,
                        help="stop the search once it has asked the simulator for this many predictions (default 3000)")
    args = parser.parse_args()
    if not os.access(args.sim, os.X_OK):
        fail(f"{args.sim} is not an executable")
    if args.max_evaluations < 1:
        fail(f"--max-evaluations must be at least 1, not {args.max_evaluations}")
    points = load_points(args.points)
    runs = load_runs(args.runs)
    p, residual, evaluations = fit(args.sim, points, args.max_evaluations)
    os.makedirs(args.out_dir, exist_ok=True)
    lines = ["| ranks | algorithm | bytes | predicted us | measured us | measured / predicted |",
             "| ---: | --- | ---: | ---: | ---: | ---: |"]
    per_size = ["| ranks | bytes | model picks | GPU ran | predicted us | measured us | measured / predicted |",
                "| ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for ranks in sorted({pt[0] for pt in points} | {r for r, _ in runs}):
        with open(os.path.join(args.out_dir, f"{args.name}-{ranks}.topology"), "w") as f:
            f.write(topology_text(ranks, p))
        table = predict(args.sim, ranks, p)
        for r, algorithm, size, measured in points:
            if r == ranks:
                predicted = table[(algorithm, size)]
                lines.append(f"| {r} | {algorithm} | {size} | {predicted:.2f} | {measured:.2f} | {measured / predicted:.2f} |")
        # Per size: what the GPU ran by default, priced by the fitted model, beside the model's own pick.
        for (r, size), (algorithm, measured) in sorted(runs.items()):
            if r != ranks:
                continue
            if (algorithm, size) not in table:
                fail(f"the prediction has no {algorithm} at {size} bytes for {ranks} ranks")
            predicted = table[(algorithm, size)]
            per_size.append(f"| {r} | {size} | {table[('picked', size)]} | {algorithm} | {predicted:.2f} | "
                            f"{measured:.2f} | {measured / predicted:.2f} |")
    with open(os.path.join(args.out_dir, f"{args.name}-fit.md"), "w") as f:
        f.write("Fitted: " + ", ".join(f"{name} {p[name]:.4g}" for name, *_ in PARAMETERS) +
                f"; rms log error {math.sqrt(residual / len(points)):.3f}\n\n" + "\n".join(lines) + "\n")
        if runs:
            f.write("\nPer size, the GPU's default run:\n\n" + "\n".join(per_size) + "\n")
    print("calibrate_model: " + ", ".join(f"{name} {p[name]:.4g}" for name, *_ in PARAMETERS) +
          f"; rms log error {math.sqrt(residual / len(points)):.3f} over {len(points)} points"
          f" after {evaluations} predictions")


if __name__ == "__main__":
    main()
