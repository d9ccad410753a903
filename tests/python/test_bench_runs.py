"""Several runs of the application benchmark in one table (peerreduce.bench_runs): every run's ratio and the
median per cell, the same-process columns only where every run has them, typed refusals of runs that
cannot be put side by side."""

import json

import pytest

from peerreduce import bench_merge, bench_runs


def merged(scale, sizes=(4096, 1 << 20), forwarded=False, per_round=False):
    rows = []
    for b in sizes:
        row = {"bytes": b}
        for mode in ("eager", "graph"):
            row[mode] = {"peerreduce_ratio": 0.5 * scale, "library_ratio": 0.6 * scale}
            if forwarded:
                row[mode]["library_to_forwarded"] = 0.8 * scale
        if per_round:
            row["eager"]["peerreduce_ratio_per_round"] = 0.45 * scale
            if forwarded:
                row["eager"]["library_to_forwarded_per_round"] = 0.9 * scale
        rows.append(row)
    return {"ranks": 2, "dtype": "float32", "library": "/x/l.so", "rows": rows}


def header(text):
    return next(line for line in text.splitlines() if line.startswith("| bytes |"))


def test_every_run_and_the_median_per_cell():
    text = bench_runs.table([merged(1.0), merged(2.0), merged(0.5)])
    assert "3 runs" in text
    lines = text.splitlines()
    assert header(text) == ("| bytes | graph, package (same process) | graph, library (cross-process) | "
                            "eager, package (same process) | eager, library (cross-process) |")
    assert "library/fwd" not in header(text)
    row = next(line for line in lines if line.startswith("| 4 KiB |"))
    # graph, package: 0.50 1.00 0.25 in the order given, median 0.50
    assert "0.50 1.00 0.25 (**0.50**)" in row
    assert any(line.startswith("| 1 MiB |") for line in lines)


def test_every_ratio_is_titled_same_process_or_cross_process_and_the_legend_says_which_is_which():
    text = bench_runs.table([merged(1.0, forwarded=True), merged(1.0, forwarded=True)])
    titles = header(text).strip("| ").split(" | ")[1:]
    assert titles == ["graph, package (same process)", "graph, library/fwd (same process)",
                      "graph, library (cross-process)", "eager, package (same process)",
                      "eager, library/fwd (same process)", "eager, library (cross-process)"]
    assert bench_runs.LEGEND in text.splitlines()
    assert "cross-process: NCCL through the library (preloaded run) over NCCL alone (plain run)" in bench_runs.LEGEND


def test_same_process_columns_only_where_every_run_has_them():
    assert "eager, library/fwd" in header(bench_runs.table([merged(1.0, forwarded=True), merged(1.0, forwarded=True)]))
    assert "library/fwd" not in header(bench_runs.table([merged(1.0, forwarded=True), merged(1.0)]))


def test_eager_same_process_ratios_are_the_per_round_medians_where_every_run_has_them():
    runs = [merged(1.0, forwarded=True, per_round=True), merged(2.0, forwarded=True, per_round=True)]
    text = bench_runs.table(runs)
    assert "eager, package (same process, per round)" in header(text)
    assert "eager, library/fwd (same process, per round)" in header(text)
    assert "graph, library/fwd (same process) |" in header(text)
    row = next(line for line in text.splitlines() if line.startswith("| 4 KiB |"))
    assert "0.90 1.80 (**1.35**)" in row and "0.45 0.90 (**0.68**)" in row
    # A run without them (timed before the rounds were interleaved): the ratios of the medians for all.
    mixed = bench_runs.table([merged(1.0, forwarded=True, per_round=True), merged(1.0, forwarded=True)])
    assert "per round)" not in header(mixed) and "eager, library/fwd (same process)" in header(mixed)


def test_runs_that_cannot_be_put_side_by_side_are_refused_by_name():
    with pytest.raises(bench_merge.MergeError, match="no runs"):
        bench_runs.table([])
    other = merged(1.0)
    other["ranks"] = 4
    with pytest.raises(bench_merge.MergeError, match="differ in ranks"):
        bench_runs.table([merged(1.0), other])
    with pytest.raises(bench_merge.MergeError, match="run 2 has no row of 1048576 bytes"):
        bench_runs.table([merged(1.0), merged(1.0, sizes=(4096,))])


def test_main_prints_the_table_of_the_files(tmp_path, capsys):
    paths = []
    for i in range(2):
        path = tmp_path / f"m{i}.json"
        path.write_text(json.dumps(merged(1.0 + i)))
        paths.append(str(path))
    assert bench_runs.main(paths) == 0
    assert "2 runs" in capsys.readouterr().out
