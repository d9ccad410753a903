#!/usr/bin/env python3
"""Writes a tuning table (PEERREDUCE_TUNING_FILE, lib/select/tuning_table.h) from peerreduce-bench JSON files.

Each JSON file is one run of `peerreduce-bench --json` (any collective; --algo all, or one run per forced
algorithm, measures every algorithm at every size). Per collective, world size and architecture, the
script takes peerreduce's out-of-place rows with no wrong element, picks the fastest algorithm (best
time) at every measured size, and writes one entry per run of sizes with the same winner; a boundary
lies at the geometric middle of the two measured sizes around it, the first entry starts at 0 and the
last ends at 1 TiB. Sizes are the bench's size column, which is what the table's sizes mean.

    bench/tuning_from_bench.py --json rs-np4.json --json ag-np4.json --json ar-np4.json --out tuning.txt

Allreduce's entries use the six-word form (which every peerreduce version reads); the other collectives'
name their collective. --arch overrides the architecture the JSON files name (the transport's, e.g.
sm_90); --collective keeps one collective. Exit status: 0 written; 2 bad input (a missing or malformed
file, a row without the bench's fields, a measured row with wrong elements, nothing to tabulate).
Standard library only.
"""
import argparse
import math
import sys

from bench_json import BadInput, load_run

COLLECTIVES = ("allreduce", "reduce-scatter", "all-gather", "broadcast")
ALGORITHMS = ("one-shot", "two-shot", "ring", "recursive-doubling", "rabenseifner", "tree")
TABLE_END = 1 << 40  # the selector's largest bucket: 1 TiB


def load_rows(paths, arch_override):
    """[(collective, arch, ranks, bytes, algorithm, best_us)] of every usable row."""
    rows = []
    for path in paths:
        run, arch, ranks = load_run(path, arch_override)
        run_collective = run.get("collective", "allreduce")  # files of earlier versions: allreduce
        for i, row in enumerate(run["rows"]):
            try:
                library = row["library"]
                algorithm = row["algorithm"]
                collective = row.get("collective", run_collective)
                size = int(row["bytes"])
                in_place = bool(row["in_place"])
                best_us = float(row["best_us"])
                wrong = int(row["wrong"])
            except (KeyError, TypeError, ValueError):
                raise BadInput(f"{path} row {i}: needs library, algorithm, bytes, in_place, best_us and wrong") from None
            if library != "peerreduce" or in_place or algorithm not in ALGORITHMS:
                continue  # NCCL's rows, in-place rows and batch measurements choose nothing
            if collective not in COLLECTIVES:
                raise BadInput(f"{path} row {i}: unknown collective '{collective}'")
            if wrong != 0:
                raise BadInput(f"{path} row {i}: {collective} {algorithm} at {size} bytes had {wrong} wrong elements")
            if size <= 0 or not best_us > 0:
                raise BadInput(f"{path} row {i}: bytes and best_us must be positive")
            rows.append((collective, arch, ranks, size, algorithm, best_us))
    return rows


def winners(rows):
    """{(collective, arch, ranks): [(bytes, algorithm, best_us, {algorithm: best_us})]}, sizes ascending."""
    best = {}
    for collective, arch, ranks, size, algorithm, us in rows:
        times = best.setdefault((collective, arch, ranks), {}).setdefault(size, {})
        times[algorithm] = min(us, times.get(algorithm, math.inf))
    out = {}
    for key, sizes in best.items():
        out[key] = []
        for size in sorted(sizes):
            times = sizes[size]
            # Ties go to the name first in ALGORITHMS order, so the table does not depend on file order.
            algorithm = min(times, key=lambda a: (times[a], ALGORITHMS.index(a)))
            out[key].append((size, algorithm, times[algorithm], times))
    return out


def entries(measured):
    """[(min_bytes, max_bytes, algorithm, comment)] for one (collective, arch, ranks)."""
    ranges = []
    start = 0
    for i, (size, algorithm, _, _) in enumerate(measured):
        if i + 1 < len(measured) and measured[i + 1][1] == algorithm:
            continue
        end = TABLE_END if i + 1 == len(measured) else math.isqrt(size * measured[i + 1][0])
        ranges.append((start, max(end, start + 1), algorithm))
        start = max(end, start + 1)
    return ranges


def table_text(rows, only):
    lines = ["peerreduce-tuning 1",
             "# from peerreduce-bench JSON by bench/tuning_from_bench.py: the fastest algorithm per measured size"]
    count = 0
    for (collective, arch, ranks), measured in sorted(winners(rows).items(),
                                                       key=lambda kv: (COLLECTIVES.index(kv[0][0]), kv[0][1:])):
        if only and collective != only:
            continue
        lines.append(f"# {collective}, {ranks} ranks, {arch}: " + "; ".join(
            f"{size} B " + ", ".join(f"{a} {t:.2f}" for a, t in sorted(times.items())) for size, _, _, times in measured))
        named = "" if collective == "allreduce" else collective + " "
        for low, high, algorithm in entries(measured):
            lines.append(f"entry {named}{arch} {ranks} {low} {high} {algorithm}")
            count += 1
    if count == 0:
        raise BadInput("no peerreduce out-of-place rows to tabulate" + (f" for {only}" if only else ""))
    return "\n".join(lines) + "\n", count


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="append", required=True, help="a peerreduce-bench --json file (repeatable)")
    parser.add_argument("--out", required=True, help="the tuning table to write")
    parser.add_argument("--arch", default="", help="the architecture to key entries by (default: the JSON's)")
    parser.add_argument("--collective", default="", choices=("",) + COLLECTIVES, help="tabulate only this one")
    args = parser.parse_args(argv)
    try:
        text, count = table_text(load_rows(args.json, args.arch), args.collective)
    except BadInput as e:
        print(f"tuning_from_bench: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w") as f:
        f.write(text)
    print(f"tuning_from_bench: {count} entries -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
