"""The three-column table of the application benchmark (peerreduce.bench_merge): merged in either order,
ratios to NCCL alone, and typed refusals of tables that cannot be merged."""

import json

import pytest

from peerreduce import bench_merge


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
