"""Several runs of the application benchmark in one table: `python -m peerreduce.bench_runs M1.json M2.json ...`.

Each file is a merged table (`python -m peerreduce.bench_merge --json`) of one run, a run being two fresh
processes (NCCL alone, the NCCL library preloaded). Per size and path the table shows every run's ratio
to NCCL alone, in the order given, and their median in bold (markdown), as the repeated runs of the
hardware stage are reported: one run's cell can move by tens of percent with the process, so a claim
about a size rests on all of them. Every title says whether its ratio divides two times of one process
("same process") or of the two runs' processes ("cross-process": the library's time in the preloaded run
over NCCL's in the plain one; the host cost per eager call of the same code differs between processes by
up to 2 x). Where every run has the same-process comparison of the library (`library/fwd`: NCCL through
the library against NCCL's kernels forwarded in the library's own process), it stands beside the
cross-process one; an eager same-process ratio is the median of the per-round ratios where every run
timed interleaved rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics

from .bench_merge import MergeError

LEGEND = ("same process: both times from one process (package: the package over NCCL alone, in the plain run; "
          "library/fwd: NCCL through the library over NCCL forwarded by it, in the preloaded run); cross-process: NCCL "
          "through the library (preloaded run) over NCCL alone (plain run), two processes whose host cost per eager "
          "call differs by up to 2 x; per round: the median of the ratios of eager rounds timed back to back")


def columns(runs_rows: list[dict], sizes: list[int]) -> list[tuple[str, str, str]]:
    """(title, mode, key in the merged row's mode) of every column the runs all have: per mode the package,
    the library in its own process (library/fwd) and the library across processes; an eager same-process ratio
    is the median of its per-round ratios where every run has it."""

    def every(mode: str, key: str) -> bool:
        return all(key in rows[s][mode] for rows in runs_rows for s in sizes)

    def same(mode: str, title: str, key: str) -> tuple[str, str, str]:
        if mode == "eager" and every(mode, key + "_per_round"):
            return (f"{mode}, {title} (same process, per round)", mode, key + "_per_round")
        return (f"{mode}, {title} (same process)", mode, key)

    result = []
    for mode in ("graph", "eager"):
        result.append(same(mode, "package", "peerreduce_ratio"))
        if every(mode, "library_to_forwarded"):
            result.append(same(mode, "library/fwd", "library_to_forwarded"))
        result.append((f"{mode}, library (cross-process)", mode, "library_ratio"))
    return result


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
    chosen = columns(by_size, sizes)
    lines = [f"{runs[0]['ranks']} ranks, {runs[0]['dtype']}, {len(runs)} runs: each run's ratio, then the median",
             "", LEGEND, "",
             "| bytes | " + " | ".join(title for title, _, _ in chosen) + " |",
             "| ---: |" + " --- |" * len(chosen)]
    for s in sizes:
        cells = []
        for _, mode, key in chosen:
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
