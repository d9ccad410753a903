#!/usr/bin/env python3
"""The table ci/nccl_tests.sh prints: nccl-tests logs of NCCL alone and through the NCCL library, per size.

    ci/nccl_tests_table.py --nccl A1.log [--nccl A2.log ...] --library B1.log [--library B2.log ...]

Each log is one run of an nccl-tests binary (all_reduce_perf, ...). With one run per side a row is that
run's out-of-place times; with several (the runs alternated, NCCL alone then the library, so both sides
see the same machine) a row is each side's median over its runs, and the ratio is of the medians, so a
single disturbed run on either side does not decide a cell. Columns: bytes, NCCL us, library us,
library/NCCL, the library's largest #wrong over its runs, then (with several runs) every run's ratio.

Exit status: 0 every cell has #wrong 0 on both sides; 1 some #wrong is not 0; 2 bad input (a missing or
unreadable log, a log without rows, runs that measured different sizes). Standard library only.
"""
import argparse
import re
import statistics
import sys

# A data row: size count type redop root, then out-of-place time algbw busbw #wrong, then in place.
ROW = re.compile(r"^\s+(\d+)\s+\d+\s+\S+\s+\S+\s+-?\d+\s+(\S+)\s+\S+\s+\S+\s+(\S+)")


class BadInput(Exception):
    pass


def read_rows(path):
    """[(bytes, out-of-place us, #wrong)] of one log, in its order."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    rows = []
    for line in text.splitlines():
        match = ROW.match(line)
        if match is None:
            continue
        size, us, wrong = match.groups()
        try:
            rows.append((int(size), float(us), wrong if wrong == "N/A" else int(wrong)))
        except ValueError:
            raise BadInput(f"{path}: a row that is not an nccl-tests row: {line.strip()}")
    if not rows:
        raise BadInput(f"{path}: no nccl-tests rows (did the run fail? its last lines say why)")
    return rows


def same_sizes(runs, paths):
    sizes = [size for size, _, _ in runs[0]]
    for rows, path in zip(runs[1:], paths[1:]):
        if [size for size, _, _ in rows] != sizes:
            raise BadInput(f"{path} measured other sizes than {paths[0]}")
    return sizes


def table(nccl_paths, library_paths):
    """The rows to print and whether every #wrong was 0."""
    nccl_runs = [read_rows(p) for p in nccl_paths]
    library_runs = [read_rows(p) for p in library_paths]
    sizes = same_sizes(nccl_runs + library_runs, nccl_paths + library_paths)
    lines, clean = [], True
    for i, size in enumerate(sizes):
        alone = [run[i][1] for run in nccl_runs]
        through = [run[i][1] for run in library_runs]
        wrongs = [run[i][2] for run in nccl_runs + library_runs]
        if any(w != 0 for w in wrongs):
            clean = False
        library_wrong = next((run[i][2] for run in library_runs if run[i][2] != 0), 0)
        nccl_us, library_us = statistics.median(alone), statistics.median(through)
        ratio = library_us / nccl_us if nccl_us > 0 else 0.0
        line = f"{size:10d} {nccl_us:9.2f} {library_us:9.2f} {ratio:6.3f} {library_wrong}"
        if len(alone) > 1 or len(through) > 1:
            per_run = [b / a if a > 0 else 0.0 for a, b in zip(alone, through)]
            line += "  runs: " + " ".join(f"{r:.3f}" for r in per_run)
        lines.append(line)
    return lines, clean


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nccl", action="append", required=True, help="a log of NCCL alone (repeatable)")
    parser.add_argument("--library", action="append", required=True, help="a log through the library (repeatable)")
    args = parser.parse_args(argv)
    try:
        lines, clean = table(args.nccl, args.library)
    except BadInput as e:
        print(f"nccl_tests_table: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    if not clean:
        print("nccl_tests_table: some #wrong is not 0", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
