#!/usr/bin/env python3
"""Checks bench/take_table_from_bench.py: benchmark JSON of peerreduce beside NCCL becomes a take table
that takes where peerreduce's time is within the margin of NCCL's, never next to a loss, and writes no
row above the largest measured size; the measurements the built-in table cites give exactly the built-in
table's rows (nccl/builtin_take_table.cc, which the library's tests parse); bad input is exit status 2
with a message naming the problem.

Usage: take_table_from_bench_test.py"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "bench", "take_table_from_bench.py")
BUILTIN = os.path.join(ROOT, "nccl", "builtin_take_table.cc")
K = 1024
M = 1024 * 1024


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def row(library, algorithm, size, us, in_place=False, wrong=0, **extra):
    out = {"library": library, "algorithm": algorithm, "bytes": size, "in_place": in_place, "best_us": us,
           "median_us": us, "algbw_gbps": 1.0, "busbw_gbps": 1.0, "wrong": wrong}
    out.update(extra)
    return out


def measured(ratios, algorithm="one-shot"):
    """peerreduce and NCCL rows for {bytes: peerreduce/NCCL time ratio} (NCCL at 100 us)."""
    rows = []
    for size, ratio in ratios.items():
        rows.append(row("peerreduce", algorithm, size, 100.0 * ratio))
        rows.append(row("nccl", "2.28.9", size, 100.0))
    return rows


def write(path, run):
    with open(path, "w") as f:
        f.write(run if isinstance(run, str) else json.dumps(run))
    return path


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


def entries(path):
    return [line for line in open(path).read().splitlines() if line.startswith("entry")]


def byte_count(text):
    match = re.fullmatch(r"(\d+)([KM]?)", text)
    check(match is not None, f"a size the test cannot read: {text}")
    return int(match.group(1)) * {"": 1, "K": K, "M": M}[match.group(2)]


def builtin_rows():
    """The built-in table's entry lines, sizes as numbers."""
    text = open(BUILTIN).read()
    rows = []
    for line in re.findall(r"^entry .*$", text, re.MULTILINE):
        words = line.split()
        words[5] = str(byte_count(words[5]))
        words[6] = str(byte_count(words[6]))
        rows.append(" ".join(words))
    return rows


def check_rules(tmp):
    out = os.path.join(tmp, "take.txt")
    # Wins up to 1 MiB (0.97 is within the margin), a loss at 4 MiB, a lone win at 16 MiB after it, 0.98 at
    # 64 MiB. NCCL's batch rows, NCCL with P2P off, in-place rows and peerreduce's batch rows must not count
    # (each is faster than anything else); of two peerreduce algorithms at one size the faster counts.
    rows = measured({4 * K: 0.5, 64 * K: 0.6, M: 0.97, 4 * M: 1.2, 16 * M: 0.9, 64 * M: 0.98})
    rows += [row("peerreduce", "two-shot", 64 * K, 200.0), row("nccl", "group-4", 64 * K, 1.0),
             row("nccl", "2.28.9 p2p-off", M, 1.0), row("nccl", "2.28.9", 4 * K, 1.0, in_place=True),
             row("peerreduce", "batch-4", 4 * M, 0.5)]
    ar = write(os.path.join(tmp, "ar.json"),
               {"ranks": 4, "dtype": "fp32", "collective": "allreduce", "architecture": "sm_90", "rows": rows})
    # A bf16 broadcast on 2 ranks whose NCCL times ride on peerreduce's rows (nccl_us), from a file that
    # names no architecture (given by --arch).
    bc = write(os.path.join(tmp, "bc.json"),
               {"ranks": 2, "dtype": "bf16", "collective": "broadcast",
                "rows": [row("peerreduce", "tree", 128, 5.0, nccl_us=10.0),
                         row("peerreduce", "tree", 512 * K, 50.0, nccl_us=40.0)]})
    done = run_script("--json", ar, "--out", out)
    check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
    check(open(out).readline() == "peerreduce-nccl-take 1\n", "the header line")
    check(entries(out) == ["entry allreduce sm_90 4 fp32 0 1048576 peerreduce",
                           "entry allreduce sm_90 4 fp32 1048577 67108864 nccl"], f"entries: {entries(out)}")
    check("4096 B 0.50, 65536 B 0.60" in open(out).read(), "the ratios in the comment")
    done = run_script("--json", ar, "--json", bc, "--arch", "sm_90", "--margin", "0.99", "--out", out)
    check(done.returncode == 0 and "5 rows" in done.stdout, f"--margin: {done.stdout} {done.stderr}")
    check(entries(out) == ["entry allreduce sm_90 4 fp32 0 1048576 peerreduce",
                           "entry allreduce sm_90 4 fp32 1048577 16777216 nccl",
                           "entry allreduce sm_90 4 fp32 16777217 67108864 peerreduce",
                           "entry broadcast sm_90 2 bf16 0 128 peerreduce",
                           "entry broadcast sm_90 2 bf16 129 524288 nccl"], f"entries: {entries(out)}")


def factors_of_two(ratios):
    """{bytes: ratio} for sizes 1 KiB, 2 KiB, ... in order."""
    return {K << i: ratio for i, ratio in enumerate(ratios)}


def check_fp8_class(tmp):
    # Both 8-bit floats are the table's class fp8 (nccl/take_table.h).
    out = os.path.join(tmp, "fp8.txt")
    for dtype in ("fp8e4m3", "fp8e5m2"):
        run = write(os.path.join(tmp, dtype + ".json"), {"ranks": 4, "dtype": dtype, "collective": "allreduce",
                                                          "architecture": "sm_90", "rows": measured({4 * K: 0.5})})
        done = run_script("--json", run, "--out", out)
        check(done.returncode == 0, f"{dtype}: exit {done.returncode}: {done.stderr}")
        check(entries(out) == ["entry allreduce sm_90 4 fp8 0 4096 peerreduce"], f"{dtype}: {entries(out)}")


def check_take_architecture(tmp):
    # peerreduce-bench names the take table's key apart (take_architecture: "-host" where the measured world had
    # a host-staged pair); files without it key by their architecture; --arch overrides both.
    out = os.path.join(tmp, "staged.txt")
    staged = write(os.path.join(tmp, "staged.json"), {"ranks": 2, "dtype": "fp32", "collective": "allreduce",
                                                      "architecture": "sm_90", "take_architecture": "sm_90-host",
                                                      "rows": measured({4 * K: 0.5})})
    done = run_script("--json", staged, "--out", out)
    check(done.returncode == 0, f"take_architecture: exit {done.returncode}: {done.stderr}")
    check(entries(out) == ["entry allreduce sm_90-host 2 fp32 0 4096 peerreduce"], f"take_architecture: {entries(out)}")
    done = run_script("--json", staged, "--arch", "sm_80", "--out", out)
    check(entries(out) == ["entry allreduce sm_80 2 fp32 0 4096 peerreduce"], f"--arch: {entries(out)}")


def check_builtin_table(tmp):
    # The measurements nccl/builtin_take_table.cc cites (fp32 unless named, NCCL 2.28.9, graph replay).
    runs = [
        # 2 x H200, peerreduce-bench in factors of 2 (docs/perf/h200x2-take).
        # Then the one-shot pushing from 2 MiB (the two-rank default since), 2 x H200 (docs/perf/h200x4-460cafc).
        ("allreduce", 2, {**factors_of_two([0.46, 0.43, 0.47, 0.46, 0.46, 0.46, 0.46, 0.51, 0.53, 0.60, 0.68, 0.59,
                                            0.74, 0.85, 0.86, 0.94, 1.01, 1.07, 1.12]),
                          2 * M: 0.52, 4 * M: 0.63, 8 * M: 0.72, 16 * M: 0.81, 32 * M: 0.91, 64 * M: 1.004,
                          128 * M: 1.07, 256 * M: 1.12}),
        # Then each block's slice pushed in pieces of 32 KiB, whole pieces (8 MiB one piece), 2 x H200
        # (docs/perf/h200x2-063f6e3: piece32768.csv, 8 MiB from piece0.csv).
        ("allreduce", 2, {2 * M: 0.521, 4 * M: 0.638, 8 * M: 0.724, 16 * M: 0.786, 32 * M: 0.788, 64 * M: 0.883,
                          128 * M: 0.928, 256 * M: 0.971}),
        # Then with the two-rank tuning rows (lib/select/builtin_tuning.cc), 2 x H200 (docs/perf/h200x4-nccl-tests-f2):
        # reduce-scatter's and all-gather's one-shot from 1 MiB up in factors of 4 (--algo all, the row's
        # algorithm), beside their earlier one-shot sizes to 512 KiB; broadcast as the selector picks, in factors
        # of 2 to 32 MiB, and the ring at 64 and 256 MiB.
        # Then two-rank collective lines to 1 MiB blocks (kDefaultCollectiveLinesTwoRankMaxBytes; peerreduce-bench
        # --coll C, the selector's pick, with the size in the middle of 1 MiB blocks' selector bucket):
        # reduce-scatter 1 MiB 0.61, 2 MiB 0.62 (lines), 2.25 MiB 0.71 (the one-shot in the interpreter), 4 MiB
        # 0.74 (the ring); broadcast 512 KiB 0.55, 1 MiB 0.65 (lines), 1.125 MiB 0.87 (the one-shot in the
        # interpreter), 2 MiB 0.78, 4 MiB 0.84 (the tree).
        ("reduce-scatter", 2, {**factors_of_two([0.48, 0.45, 0.48, 0.47, 0.50, 0.50, 0.50, 0.51, 0.52, 0.56]),
                               M: 0.61, 2 * M: 0.62, 2 * M + M // 4: 0.71, 4 * M: 0.74, 16 * M: 0.78, 64 * M: 0.90,
                               256 * M: 1.02}),
        ("all-gather", 2, {**factors_of_two([0.49, 0.48, 0.50, 0.47, 0.50, 0.50, 0.50, 0.51, 0.52, 0.54]),
                           M: 0.56, 4 * M: 0.69, 16 * M: 0.75, 64 * M: 0.94, 256 * M: 1.07}),
        ("broadcast", 2, {**factors_of_two([0.52, 0.51, 0.50, 0.48, 0.46, 0.44, 0.45, 0.48, 0.50, 0.55, 0.65, 0.78,
                                            0.84, 1.10, 0.95, 0.92]),
                          M + M // 8: 0.87, 64 * M: 1.01, 256 * M: 1.09}),
        # Then the two-rank direct plans pushed past the lines (docs/perf/h200x2-19f9a8c): reduce-scatter and
        # all-gather as the selector picks (the one-shot), broadcast's one-shot forced (--algo one-shot) and the
        # ring at 64 and 256 MiB as the selector picks.
        ("reduce-scatter", 2, {M: 0.605, 4 * M: 0.606, 16 * M: 0.670, 64 * M: 0.794, 256 * M: 0.892}),
        ("all-gather", 2, {M: 0.553, 4 * M: 0.537, 16 * M: 0.644, 64 * M: 0.700, 256 * M: 0.794}),
        ("broadcast", 2, {M: 0.662, 4 * M: 0.810, 16 * M: 0.908, 64 * M: 1.010, 256 * M: 1.085}),
        # Then (docs/perf/h200x2-4b16c2e): broadcast's one-shot pushed in factors of 2 from 4 MiB, and the allreduce
        # and broadcast streamed through the scratch in 64 KiB pieces (the default) where they stream.
        ("broadcast", 2, {4 * M: 0.813, 8 * M: 0.923, 16 * M: 0.918}),
        ("broadcast", 2, {64 * M: 1.011, 256 * M: 1.048}),
        ("allreduce", 2, {64 * M: 0.861, 256 * M: 0.908}),
        # bf16 allreduce with the conversions by the conversion instructions, factors of 4 from 4 KiB
        # (docs/perf/h200x2-9e477c7: bench-allreduce-bf16.csv).
        ("allreduce", 2, {4 * K: 0.464, 16 * K: 0.467, 64 * K: 0.477, 256 * K: 0.530, M: 0.649, 4 * M: 0.694,
                          16 * M: 0.898, 64 * M: 0.921, 256 * M: 0.935}, "bf16"),
        # Every link host-staged against NCCL with P2P off (docs/perf/h200x2-9e477c7: host-auto.csv to 4 MiB, the
        # pull; host-push-sweep-ar-push.csv from 16 MiB, the push the defaults run there), keyed sm_90-host.
        ("allreduce", 2, {4 * K: 0.351, 16 * K: 0.414, 64 * K: 0.550, 256 * K: 0.637, M: 1.418, 4 * M: 1.516,
                          16 * M: 1.160, 64 * M: 0.919, 256 * M: 0.832}, "fp32", "sm_90-host"),
        # 4 x H200, peerreduce-bench in factors of 2 (docs/perf/h200x4-take; reduce-scatter's and all-gather's
        # 2 MiB with 512 KiB blocks as lines).
        ("allreduce", 4, factors_of_two([0.37, 0.38, 0.39, 0.45, 0.42, 0.42, 0.46, 0.61, 0.67, 0.72, 0.88, 1.08,
                                         0.97, 1.00, 0.97, 1.11, 1.14, 1.16, 1.20])),
        ("reduce-scatter", 4, factors_of_two([0.57, 0.54, 0.53, 0.52, 0.53, 0.61, 0.59, 0.59, 0.60, 0.69, 0.75,
                                              0.81, 0.85, 0.91, 0.96, 1.01, 1.12, 1.21, 1.25])),
        ("all-gather", 4, factors_of_two([0.51, 0.51, 0.50, 0.50, 0.47, 0.56, 0.55, 0.55, 0.59, 0.62, 0.67, 0.74,
                                          0.76, 0.81, 0.86, 0.96, 1.08, 1.16, 1.21])),
        ("broadcast", 4, factors_of_two([0.55, 0.52, 0.52, 0.51, 0.43, 0.41, 0.43, 0.51, 0.78, 1.69, 1.42, 1.19,
                                         1.67, 1.95, 1.56, 1.46, 1.60, 1.71, 1.76])),
    ]
    paths = []
    for i, (collective, ranks, ratios, *named) in enumerate(runs):
        dtype, arch = (list(named) + ["fp32", "sm_90"][len(named):])[:2]
        paths += ["--json", write(os.path.join(tmp, f"builtin{i}.json"),
                                  {"ranks": ranks, "dtype": dtype, "collective": collective,
                                   "architecture": arch, "rows": measured(ratios)})]
    out = os.path.join(tmp, "builtin.txt")
    done = run_script(*paths, "--out", out)
    check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
    check(entries(out) == builtin_rows(),
          f"the script's rows {entries(out)} are not the built-in table's {builtin_rows()}")


def check_bad_input(tmp):
    out = os.path.join(tmp, "bad.txt")
    base = {"ranks": 4, "dtype": "fp32", "architecture": "sm_90"}
    cases = [
        ("missing", None, "No such file"),
        ("notjson", "{", "not JSON"),
        ("norows", {"ranks": 4}, "no 'rows' list"),
        ("noarch", {"ranks": 4, "rows": []}, "names no architecture"),
        ("noranks", {"architecture": "sm_90", "rows": []}, "whole number 'ranks'"),
        ("dtype", dict(base, dtype="fp4", rows=[]), "unknown dtype 'fp4'"),
        ("fields", dict(base, rows=[{"library": "nccl"}]), "row 0: needs library"),
        ("wrong", dict(base, rows=[row("peerreduce", "ring", 64, 1.0, wrong=3)]), "had 3 wrong elements"),
        ("collective", dict(base, rows=[row("nccl", "2.28.9", 64, 1.0, collective="alltoall")]),
         "unknown collective 'alltoall'"),
        ("size", dict(base, rows=[row("nccl", "2.28.9", 0, 1.0)]), "must be positive"),
        ("unpaired", dict(base, rows=[row("peerreduce", "ring", 64, 1.0)]), "measured by both"),
    ]
    for name, content, expected in cases:
        path = os.path.join(tmp, name + ".json")
        if content is not None:
            write(path, content)
        done = run_script("--json", path, "--out", out)
        check(done.returncode == 2, f"{name}: exit {done.returncode}, expected 2")
        check(expected in done.stderr, f"{name}: '{expected}' not in: {done.stderr}")
    good = write(os.path.join(tmp, "good.json"), dict(base, rows=measured({64: 0.5})))
    done = run_script("--json", good, "--margin", "1.5", "--out", out)
    check(done.returncode == 2 and "--margin 1.5" in done.stderr, f"--margin 1.5: {done.stderr}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_rules(tmp)
        check_fp8_class(tmp)
        check_take_architecture(tmp)
        check_builtin_table(tmp)
        check_bad_input(tmp)
    print("take_table_from_bench: OK")


if __name__ == "__main__":
    main()
