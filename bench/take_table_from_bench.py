#!/usr/bin/env python3
"""Writes a take table (PEERREDUCE_NCCL_TAKE_TABLE, nccl/take_table.h) from peerreduce-bench JSON files.

Each JSON file is one run of `peerreduce-bench --json --nccl LIBNCCL` (any collective and dtype), which
times peerreduce and NCCL at every size. Per collective, architecture, world size and dtype class, the
script pairs peerreduce's out-of-place rows with NCCL's of the same size (a peerreduce row's own
"nccl_us" where it carries one), and calls a size a win when peerreduce's best time is at most --margin
(0.97) of NCCL's, so run-to-run noise does not flip a decision. Where several peerreduce rows share a
size (--algo all, or one run per forced algorithm), the fastest counts: write the tuning table from the
same runs (bench/tuning_from_bench.py) so that peerreduce picks it.

The rows: the sizes up to the first measured one go with it; between two measured sizes, peerreduce
takes only where both ends won, so no unmeasured size next to a loss is taken; above the largest
measured size no row is written, and the library forwards there. Both ends of a row are included
(a row's upper bound is the largest size it covers). Sizes are the bench's size column (nccl-tests'
size), which is what the table's sizes mean.

    bench/take_table_from_bench.py --json ar-np4.json --json rs-np4.json --out take.txt

Exit status: 0 written; 2 bad input (a missing or malformed file, a row without the bench's fields, a
measured row with wrong elements, an unknown dtype or collective, nothing measured by both libraries).
Standard library only.
"""
import argparse
import sys

from bench_json import BadInput, load_run

COLLECTIVES = ("allreduce", "reduce-scatter", "all-gather", "broadcast")
ALGORITHMS = ("one-shot", "two-shot", "ring", "recursive-doubling", "rabenseifner", "tree", "copy-engine-two-shot")
# The bench's dtype names (and their aliases) -> the table's dtype classes (nccl/take_table.h).
DTYPE_CLASSES = {"int8": "int8", "uint8": "int8", "int32": "int32", "uint32": "int32", "int64": "int64",
                 "uint64": "int64", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64",
                 "fp8e4m3": "fp8", "fp8e5m2": "fp8"}
DEFAULT_MARGIN = 0.97


def field(row, name, kind, where):
    try:
        return kind(row[name])
    except (KeyError, TypeError, ValueError):
        raise BadInput(f"{where}: needs library, algorithm, bytes, in_place, best_us and wrong") from None


def load_times(paths, arch_override):
    """{(collective, arch, ranks, dtype class): {bytes: [peerreduce_us or None, nccl_us or None]}}."""
    times = {}
    for path in paths:
        run, arch, ranks = load_run(path, arch_override, "take_architecture")
        dtype = run.get("dtype", "fp32")
        if dtype not in DTYPE_CLASSES:
            raise BadInput(f"{path}: unknown dtype '{dtype}'; expected one of {', '.join(DTYPE_CLASSES)}")
        run_collective = run.get("collective", "allreduce")  # files of earlier versions: allreduce
        for i, row in enumerate(run["rows"]):
            where = f"{path} row {i}"
            library = field(row, "library", str, where)
            algorithm = field(row, "algorithm", str, where)
            size = field(row, "bytes", int, where)
            in_place = field(row, "in_place", bool, where)
            best_us = field(row, "best_us", float, where)
            wrong = field(row, "wrong", int, where)
            collective = row.get("collective", run_collective)
            if in_place:
                continue  # the out-of-place rows decide; in place is the same call on other buffers
            if library == "peerreduce" and algorithm not in ALGORITHMS:
                continue  # batch measurements ("batch-N", "separate-N") are not one call
            if library == "nccl" and (algorithm.startswith(("group", "separate")) or "p2p-off" in algorithm):
                continue  # NCCL's batch rows, and NCCL hobbled by NCCL_P2P_DISABLE, are not what it is compared with
            if library not in ("peerreduce", "nccl"):
                continue
            if collective not in COLLECTIVES:
                raise BadInput(f"{where}: unknown collective '{collective}'")
            if wrong != 0:
                raise BadInput(f"{where}: {library} {collective} at {size} bytes had {wrong} wrong elements")
            if size <= 0 or not best_us > 0:
                raise BadInput(f"{where}: bytes and best_us must be positive")
            at = times.setdefault((collective, arch, ranks, DTYPE_CLASSES[dtype]), {}).setdefault(size, [None, None])
            slot = 0 if library == "peerreduce" else 1
            at[slot] = best_us if at[slot] is None else min(at[slot], best_us)
            if library == "peerreduce" and "nccl_us" in row:
                nccl_us = field(row, "nccl_us", float, where)
                if nccl_us > 0:
                    at[1] = nccl_us if at[1] is None else min(at[1], nccl_us)
    return times


def rows_of(measured, margin):
    """[(min_bytes, max_bytes, choice)] (both ends included) for one group's [(bytes, ratio)], sizes ascending."""
    wins = [ratio <= margin for _, ratio in measured]
    ranges = []
    for i, (size, _) in enumerate(measured):
        low = 0 if i == 0 else measured[i - 1][0] + 1
        take = wins[i] and (i == 0 or wins[i - 1])
        choice = "peerreduce" if take else "nccl"
        if ranges and ranges[-1][2] == choice:
            ranges[-1] = (ranges[-1][0], size, choice)
        else:
            ranges.append((low, size, choice))
    return ranges


def table_text(times, margin):
    lines = ["peerreduce-nccl-take 1",
             f"# from peerreduce-bench JSON by bench/take_table_from_bench.py: peerreduce where its time is at most "
             f"{margin:g} of NCCL's"]
    count = 0
    for (collective, arch, ranks, dtypes), sizes in sorted(times.items(),
                                                            key=lambda kv: (COLLECTIVES.index(kv[0][0]), kv[0][1:])):
        measured = [(size, ours / theirs) for size, (ours, theirs) in sorted(sizes.items())
                    if ours is not None and theirs is not None]
        if not measured:
            continue
        lines.append(f"# {collective}, {ranks} ranks, {arch}, {dtypes}: peerreduce/NCCL time " +
                     ", ".join(f"{size} B {ratio:.2f}" for size, ratio in measured))
        for low, high, choice in rows_of(measured, margin):
            lines.append(f"entry {collective} {arch} {ranks} {dtypes} {low} {high} {choice}")
            count += 1
    if count == 0:
        raise BadInput("no size was measured by both peerreduce and NCCL (run peerreduce-bench with --nccl)")
    return "\n".join(lines) + "\n", count


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="append", required=True, help="a peerreduce-bench --json file (repeatable)")
    parser.add_argument("--out", required=True, help="the take table to write")
    parser.add_argument("--arch", default="", help="the architecture to key rows by (default: the JSON's)")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help="largest peerreduce/NCCL time ratio that counts as a win (default 0.97)")
    args = parser.parse_args(argv)
    if not 0 < args.margin <= 1:
        print(f"take_table_from_bench: --margin {args.margin} must be in (0, 1]", file=sys.stderr)
        return 2
    try:
        text, count = table_text(load_times(args.json, args.arch), args.margin)
    except BadInput as e:
        print(f"take_table_from_bench: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w") as f:
        f.write(text)
    print(f"take_table_from_bench: {count} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
