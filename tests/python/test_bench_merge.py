"""The three-column table of the application benchmark (peerreduce.bench_merge): merged in either order,
ratios to NCCL alone, and typed refusals of tables that cannot be merged."""

import json

import pytest

from peerreduce import bench, bench_merge


def table(nccl_path, scale, rows=(4096, 65536)):
    return {"ranks": 2, "dtype": "float32", "one_gpu": False, "nccl_path": nccl_path,
            "rows": [{"bytes": b, "peerreduce_us": 3.0 * scale, "peerreduce_graph_us": 2.0 * scale,
                      "nccl_us": 10.0 * scale, "nccl_graph_us": 8.0 * scale} for b in rows]}


def test_merges_either_order_with_ratios_to_nccl_alone():
    plain, preloaded = table("", 1.0), table("/x/libpeerreduce_nccl.so", 0.5)
    for a, b in ((plain, preloaded), (preloaded, plain)):
        merged = bench_merge.merge(a, b)
        assert merged["library"] == "/x/libpeerreduce_nccl.so"
        assert [r["bytes"] for r in merged["rows"]] == [4096, 65536]
        eager = merged["rows"][0]["eager"]
        assert eager["peerreduce"] == 3.0 and eager["nccl"] == 10.0 and eager["nccl_library"] == 5.0
        assert eager["peerreduce_ratio"] == pytest.approx(0.3)
        assert eager["library_ratio"] == pytest.approx(0.5)
        assert merged["rows"][1]["graph"]["library_ratio"] == pytest.approx(0.5)
    assert "65536" in bench_merge.render(merged)


def test_host_times_per_eager_call_are_kept_and_shown_when_both_runs_have_them():
    plain, preloaded = table("", 1.0), table("/x/libpeerreduce_nccl.so", 1.0)
    assert "eager host" not in bench_merge.render(bench_merge.merge(plain, preloaded))
    assert "nccl_host" not in bench_merge.merge(plain, preloaded)["rows"][0]["eager"]
    for row in plain["rows"]:
        row.update(peerreduce_host_us=2.5, nccl_host_us=9.5)
    for row in preloaded["rows"]:
        row.update(peerreduce_host_us=2.5, nccl_host_us=41.25)
    merged = bench_merge.merge(preloaded, plain)
    eager = merged["rows"][0]["eager"]
    assert (eager["peerreduce_host"], eager["nccl_host"], eager["nccl_library_host"]) == (2.5, 9.5, 41.25)
    rendered = bench_merge.render(merged)
    assert "eager host" in rendered and "41.25" in rendered


def test_two_plain_runs_or_differing_runs_are_refused_by_name():
    with pytest.raises(bench_merge.MergeError, match="one run with NCCL alone"):
        bench_merge.merge(table("", 1.0), table("", 1.0))
    other = table("/x/libpeerreduce_nccl.so", 1.0)
    other["ranks"] = 4
    with pytest.raises(bench_merge.MergeError, match="differ in ranks"):
        bench_merge.merge(table("", 1.0), other)
    with pytest.raises(bench_merge.MergeError, match="no size in common"):
        bench_merge.merge(table("", 1.0), table("/x/l.so", 1.0, rows=(8,)))


def test_a_file_that_is_not_a_bench_table_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"rows": []}))
    with pytest.raises(bench_merge.MergeError, match="no 'ranks'"):
        bench_merge._load(str(path))
    good_a, good_b = tmp_path / "a.json", tmp_path / "b.json"
    good_a.write_text(json.dumps(table("", 1.0)))
    good_b.write_text(json.dumps(table("/x/libpeerreduce_nccl.so", 1.0)))
    out = tmp_path / "m.json"
    assert bench_merge.main([str(good_a), str(good_b), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["bytes"] == 4096


def test_the_same_process_comparison_with_forwarded_nccl_is_kept_and_shown():
    plain, preloaded = table("", 1.0), table("/x/libpeerreduce_nccl.so", 0.5)
    merged = bench_merge.merge(plain, preloaded)
    assert "nccl_forwarded" not in merged["rows"][0]["eager"]
    assert "lib/fwd" not in bench_merge.render(merged)
    for row in preloaded["rows"]:
        row.update(nccl_forwarded_us=8.0, nccl_forwarded_graph_us=2.0)
    merged = bench_merge.merge(preloaded, plain)
    eager, graph = merged["rows"][0]["eager"], merged["rows"][0]["graph"]
    assert eager["nccl_forwarded"] == 8.0 and eager["library_to_forwarded"] == pytest.approx(5.0 / 8.0)
    assert graph["nccl_forwarded"] == 2.0 and graph["library_to_forwarded"] == pytest.approx(4.0 / 2.0)
    rendered = bench_merge.render(merged)
    assert "lib/fwd" in rendered and "0.625" in rendered and "2.000" in rendered


def test_ratios_are_named_same_process_or_cross_process_in_the_json_and_the_table():
    merged = bench_merge.merge(table("", 1.0), table("/x/libpeerreduce_nccl.so", 0.5))
    assert merged["ratios"]["library_ratio"].startswith("cross-process")
    assert merged["ratios"]["peerreduce_ratio"].startswith("same process")
    assert merged["ratios"]["library_to_forwarded"].startswith("same process")
    header = next(line for line in bench_merge.render(merged).splitlines() if line.lstrip().startswith("bytes"))
    assert header.count("lib/N cross-proc") == 2 and header.count("pkg/N same") == 2
    assert "lib/N cross-proc: NCCL through the library (preloaded run) over NCCL alone (plain run)" in \
        bench_merge.render(merged)


def test_rows_of_interleaved_rounds_merge_with_their_per_round_ratios_and_the_library_first():
    """Rows as peerreduce.bench makes them from its rounds: the per-round medians reach the merged table,
    and the library's same-process comparison leads it."""
    def row(nbytes, device):
        fields = bench.eager_fields(device, device)
        fields.update({f"{name}_graph_us": 2.0 for name in device}, bytes=nbytes)
        return fields

    plain = {"ranks": 2, "dtype": "float32", "nccl_path": "",
             "rows": [row(4096, {"peerreduce": [5.0, 6.0, 30.0], "nccl": [10.0, 12.0, 10.0]})]}
    preloaded = {"ranks": 2, "dtype": "float32", "nccl_path": "/x/libpeerreduce_nccl.so",
                 "rows": [row(4096, {"peerreduce": [5.0, 5.0, 5.0], "nccl": [10.0, 20.0, 30.0],
                                     "nccl_forwarded": [10.0, 40.0, 20.0]})]}
    merged = bench_merge.merge(plain, preloaded)
    eager = merged["rows"][0]["eager"]
    assert eager["peerreduce_ratio"] == pytest.approx(0.6) and eager["peerreduce_ratio_per_round"] == pytest.approx(0.5)
    assert eager["library_to_forwarded"] == pytest.approx(1.0)
    assert eager["library_to_forwarded_per_round"] == pytest.approx(1.0)  # 1.0, 0.5, 1.5
    assert eager["library_ratio"] == pytest.approx(2.0)  # 20 over the plain run's 10: cross-process
    assert eager["nccl_forwarded_host"] == 20.0
    assert "library_to_forwarded_per_round" not in merged["rows"][0]["graph"]
    lines = bench_merge.render(merged).splitlines()
    header = next(line for line in lines if line.lstrip().startswith("bytes"))
    assert header.split("|")[1].split() == ["fwd", "eager", "lib/fwd", "same", "per", "round", "fwd", "graph",
                                            "lib/fwd", "same"]
    assert any(line.startswith("per round:") for line in lines)
    assert lines[-1].split("|")[1].split() == ["20.00", "1.000", "1.000", "2.00", "1.000"]
