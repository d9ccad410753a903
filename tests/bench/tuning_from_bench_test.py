#!/usr/bin/env python3
"""Checks bench/tuning_from_bench.py: benchmark JSON of any collective becomes a tuning table with the
fastest algorithm per measured size and boundaries at geometric middles; the library reads the table and
each collective's selector takes its entries (peerreduce-sim predict with PEERREDUCE_TUNING_FILE); bad
input is exit status 2 with a message naming the problem.

Usage: tuning_from_bench_test.py PEERREDUCE_SIM"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "bench", "tuning_from_bench.py")


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def row(algorithm, size, us, library="peerreduce", in_place=False, wrong=0, **extra):
    out = {"library": library, "algorithm": algorithm, "bytes": size, "in_place": in_place, "best_us": us,
           "median_us": us, "algbw_gbps": 1.0, "busbw_gbps": 1.0, "wrong": wrong}
    out.update(extra)
    return out


def write(path, run):
    with open(path, "w") as f:
        f.write(run if isinstance(run, str) else json.dumps(run))


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


def predict(sim, collective, table):
    env = dict(os.environ)
    if table:
        env["PEERREDUCE_TUNING_FILE"] = table
    else:
        env.pop("PEERREDUCE_TUNING_FILE", None)
    out = subprocess.run([sim, "predict", "--collective", collective, "--ranks", "4", "--json"], capture_output=True,
                         text=True, timeout=120, env=env)
    check(out.returncode == 0, f"predict {collective}: {out.stderr}")
    return [size["picked"] for size in json.loads(out.stdout)["sizes"]]


def main():
    sim = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        rs = os.path.join(tmp, "rs.json")
        ar = os.path.join(tmp, "ar.json")
        out = os.path.join(tmp, "tuning.txt")
        # Reduce-scatter on 4 ranks: one-shot fastest at 4 KiB and 64 KiB, ring at 1 MiB. NCCL's, in-place
        # and batch rows must not count (each is faster than anything else).
        write(rs, {"ranks": 4, "dtype": "fp32", "collective": "reduce-scatter", "root": 0, "architecture": "sm_90",
                   "rows": [row("one-shot", 4096, 5.0), row("ring", 4096, 9.0),
                            row("one-shot", 65536, 8.0), row("ring", 65536, 8.5),
                            row("one-shot", 1048576, 60.0), row("ring", 1048576, 40.0),
                            row("2.28.9", 4096, 0.5, library="nccl"), row("tree", 65536, 0.5, in_place=True),
                            row("batch-4", 65536, 0.5)]})
        # An allreduce run of an earlier version: no collective, no architecture (given by --arch).
        write(ar, {"ranks": 2, "dtype": "fp32", "rows": [row("one-shot", 4096, 3.0), row("two-shot", 4096, 4.0),
                                                          row("one-shot", 16777216, 80.0),
                                                          row("two-shot", 16777216, 70.0)]})
        done = run_script("--json", rs, "--json", ar, "--arch", "sm_90", "--out", out)
        check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
        entries = [line for line in open(out).read().splitlines() if line.startswith("entry")]
        check(entries == ["entry sm_90 2 0 262144 one-shot",
                          "entry sm_90 2 262144 1099511627776 two-shot",
                          "entry reduce-scatter sm_90 4 0 262144 one-shot",
                          "entry reduce-scatter sm_90 4 262144 1099511627776 ring"], f"entries: {entries}")
        check(open(out).readline() == "peerreduce-tuning 1\n", "the header line")
        only = run_script("--json", rs, "--json", ar, "--arch", "sm_90", "--collective", "reduce-scatter", "--out", out)
        check(only.returncode == 0 and "2 entries" in only.stdout, f"--collective: {only.stdout} {only.stderr}")

        # The library takes the table: all-gather's tree measured fastest everywhere is what the simulator's
        # all-gather selector picks at every size, and the allreduce and broadcast selectors keep the model.
        ag = os.path.join(tmp, "ag.json")
        write(ag, {"ranks": 4, "collective": "all-gather", "architecture": "simulator",
                   "rows": [row("tree", 4096, 1.0), row("one-shot", 4096, 2.0), row("ring", 4096, 2.0),
                            row("tree", 1 << 24, 1.0), row("ring", 1 << 24, 2.0)]})
        table = os.path.join(tmp, "ag.txt")
        done = run_script("--json", ag, "--out", table)
        check(done.returncode == 0, f"all-gather table: {done.stderr}")
        check("entry all-gather simulator 4 0 1099511627776 tree\n" in open(table).read(), open(table).read())
        model = predict(sim, "all-gather", "")
        check(any(not p.startswith("tree") for p in model), "the model alone must pick something else somewhere")
        tuned = predict(sim, "all-gather", table)
        check(all(p.startswith("tree") for p in tuned), f"all-gather with the table picks {sorted(set(tuned))}")
        for other in ("allreduce", "broadcast"):
            check(predict(sim, other, table) == predict(sim, other, ""), f"{other} must keep the model's choices")

        # Bad input: exit 2 naming the problem.
        wrong = os.path.join(tmp, "wrong.json")
        write(wrong, {"ranks": 4, "collective": "broadcast", "architecture": "sm_90",
                      "rows": [row("ring", 4096, 3.0, wrong=7)]})
        unknown = os.path.join(tmp, "unknown.json")
        write(unknown, {"ranks": 4, "architecture": "sm_90", "rows": [row("ring", 4096, 3.0, collective="alltoall")]})
        nccl_only = os.path.join(tmp, "nccl.json")
        write(nccl_only, {"ranks": 4, "architecture": "sm_90", "rows": [row("2.28.9", 4096, 3.0, library="nccl")]})
        no_arch = os.path.join(tmp, "noarch.json")
        write(no_arch, {"ranks": 4, "rows": [row("ring", 4096, 3.0)]})
        fieldless = os.path.join(tmp, "fieldless.json")
        write(fieldless, {"ranks": 4, "architecture": "sm_90", "rows": [{"library": "peerreduce"}]})
        garbage = os.path.join(tmp, "garbage.json")
        write(garbage, "peerreduce-bench: not json")
        for path, says in ((wrong, "broadcast ring at 4096 bytes had 7 wrong elements"),
                           (unknown, "unknown collective 'alltoall'"),
                           (nccl_only, "no peerreduce out-of-place rows to tabulate"),
                           (no_arch, "names no architecture; give --arch"),
                           (fieldless, "row 0: needs library, algorithm, bytes, in_place, best_us and wrong"),
                           (garbage, "not JSON"),
                           (os.path.join(tmp, "missing.json"), "missing.json: No such file")):
            bad = run_script("--json", path, "--out", os.path.join(tmp, "bad.txt"))
            check(bad.returncode == 2, f"{says}: exit {bad.returncode}")
            check(says in bad.stderr, f"expected '{says}' in: {bad.stderr}")
        check(not os.path.exists(os.path.join(tmp, "bad.txt")), "nothing is written on bad input")
    print("tuning_from_bench: all checks passed")


if __name__ == "__main__":
    main()
