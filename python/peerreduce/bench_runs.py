"""Several runs of the application benchmark in one table: `python -m peerreduce.bench_runs M1.json M2.json ...`.

Each file is a merged table (`python -m peerreduce.bench_merge --json`) of one run, a run being two fresh
processes (NCCL alone, the NCCL library preloaded). Per size and path the table shows every run's ratio
to NCCL alone, in the order given, and their median in bold (markdown), as the repeated runs of the
hardware stage are reported: one run's cell can move by tens of percent with the process, so a claim
about a size rests on all of them. Where every run has the same-process comparison (`lib/fwd`: the
library against NCCL's kernels forwarded in the library's own process), its columns follow.
"""

from __future__ import annotations

import argparse
import json
import statistics

from .bench_merge import MergeError

# (column title, mode, key in the merged row's mode)
COLUMNS = [("graph, package", "graph", "peerreduce_ratio"), ("graph, library", "graph", "library_ratio"),
           ("eager, package", "eager", "peerreduce_ratio"), ("eager, library", "eager", "library_ratio")]
SAME_PROCESS = [("eager lib/fwd", "eager", "library_to_forwarded"), ("graph lib/fwd", "graph", "library_to_forwarded")]


def _size(nbytes: int) -> str:
    if nbytes >= 1 << 20 and nbytes % (1 << 20) == 0:
        return f"{nbytes >> 20} MiB"
    if nbytes >= 1 << 10 and nbytes % (1 << 10) == 0:
        return f"{nbytes >> 10} KiB"
    return f"{nbytes} B"


def table(runs: list[dict]) -> str:
    """The markdown table of `runs` (merged tables); MergeError when they cannot be put side by side."""
    if not runs:
        raise MergeError("no runs given")
    for key in ("ranks", "dtype"):
        values = {run.get(key) for run in runs}
        if len(values) != 1:
            raise MergeError(f"the runs differ in {key}: {sorted(map(str, values))}")
    sizes = [row["bytes"] for row in runs[0]["rows"]]
    by_size = []
    for index, run in enumerate(runs):
        rows = {row["bytes"]: row for row in run["rows"]}
        missing = [s for s in sizes if s not in rows]
        if missing:
            raise MergeError(f"run {index + 1} has no row of {missing[0]} bytes")
        by_size.append(rows)
    columns = list(COLUMNS)
    if all("library_to_forwarded" in rows[s]["eager"] for rows in by_size for s in sizes):
        columns += SAME_PROCESS
    lines = [f"{runs[0]['ranks']} ranks, {runs[0]['dtype']}, {len(runs)} runs: each run's ratio, then the median",
             "| bytes | " + " | ".join(title for title, _, _ in columns) + " |",
             "| ---: |" + " --- |" * len(columns)]
    for s in sizes:
        cells = []
        for _, mode, key in columns:
            values = [rows[s][mode][key] for rows in by_size]
            cells.append(" ".join(f"{v:.2f}" for v in values) + f" (**{statistics.median(values):.2f}**)")
        lines.append(f"| {_size(s)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="merged tables, one per run (bench_merge --json)")
    args = parser.parse_args(argv)
    runs = []
    for path in args.runs:
        with open(path) as f:
            runs.append(json.load(f))
    print(table(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
