#!/usr/bin/env python3
"""Checks ci/nccl_tests_table.py: one run per side gives that run's out-of-place times and ratio; several
runs give each side's median and every run's ratio; a #wrong that is not 0 (either side) is exit 1 with the
table still printed; a missing log, a log without rows and runs of different sizes are exit 2 naming the
file.

Usage: nccl_tests_table_test.py"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "ci", "nccl_tests_table.py")


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def log(path, rows):
    """An nccl-tests log with {bytes: (out-of-place us, #wrong)} rows (in-place columns copied)."""
    lines = ["# nccl-tests", "#       size         count      type   redop    root     time   algbw   busbw #wrong"]
    for size, (us, wrong) in rows.items():
        lines.append(f"{size:>12} {size // 4:>13} {'float':>9} {'sum':>7} {-1:>7} {us:>8.2f} 1.00 1.00 {wrong:>6} "
                     f"{us:>8.2f} 1.00 1.00 {wrong:>6}")
    lines.append("# Avg bus bandwidth    : 1.0")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


def cells(stdout):
    return [line.split() for line in stdout.splitlines()]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        p = lambda name: os.path.join(tmp, name)
        a1 = log(p("a1"), {8: (10.0, 0), 1024: (20.0, 0)})
        b1 = log(p("b1"), {8: (5.0, 0), 1024: (30.0, 0)})
        done = run("--nccl", a1, "--library", b1)
        check(done.returncode == 0, f"one run each: exit {done.returncode}: {done.stderr}")
        check(cells(done.stdout) == [["8", "10.00", "5.00", "0.500", "0"], ["1024", "20.00", "30.00", "1.500", "0"]],
              f"one run each: {done.stdout!r}")

        # Three runs: the medians decide, a disturbed run on either side does not.
        a2, a3 = log(p("a2"), {8: (11.0, 0), 1024: (90.0, 0)}), log(p("a3"), {8: (12.0, 0), 1024: (22.0, 0)})
        b2, b3 = log(p("b2"), {8: (50.0, 0), 1024: (18.0, 0)}), log(p("b3"), {8: (6.0, 0), 1024: (19.0, 0)})
        done = run("--nccl", a1, "--library", b1, "--nccl", a2, "--library", b2, "--nccl", a3, "--library", b3)
        check(done.returncode == 0, f"three runs: exit {done.returncode}: {done.stderr}")
        rows = cells(done.stdout)
        check(rows[0][:5] == ["8", "11.00", "6.00", "0.545", "0"], f"three runs, 8 B: {rows[0]}")
        check(rows[1][:5] == ["1024", "22.00", "19.00", "0.864", "0"], f"three runs, 1 KiB: {rows[1]}")
        check(rows[0][5:] == ["runs:", "0.500", "4.545", "0.500"], f"three runs' ratios, 8 B: {rows[0][5:]}")

        # A wrong element on the library's side, then on NCCL's: exit 1, the table still printed.
        bad = log(p("bad"), {8: (5.0, 3), 1024: (30.0, 0)})
        done = run("--nccl", a1, "--library", bad)
        check(done.returncode == 1 and "#wrong" in done.stderr, f"library #wrong: {done.returncode} {done.stderr}")
        check(cells(done.stdout)[0][4] == "3", f"library #wrong shown: {done.stdout!r}")
        done = run("--nccl", log(p("badn"), {8: (5.0, 1), 1024: (30.0, 0)}), "--library", b1)
        check(done.returncode == 1, f"NCCL #wrong: exit {done.returncode}")

        # Bad input: exit 2 naming the file.
        missing = p("missing.log")
        done = run("--nccl", missing, "--library", b1)
        check(done.returncode == 2 and "missing.log" in done.stderr, f"missing: {done.returncode} {done.stderr}")
        empty = p("empty.log")
        with open(empty, "w") as f:
            f.write("mpirun: a rank failed\n")
        done = run("--nccl", a1, "--library", empty)
        check(done.returncode == 2 and "empty.log" in done.stderr and "no nccl-tests rows" in done.stderr,
              f"no rows: {done.returncode} {done.stderr}")
        other = log(p("other.log"), {8: (5.0, 0), 2048: (30.0, 0)})
        done = run("--nccl", a1, "--library", other)
        check(done.returncode == 2 and "other.log measured other sizes" in done.stderr,
              f"other sizes: {done.returncode} {done.stderr}")
        done = run("--nccl", a1)
        check(done.returncode == 2, f"no library log: exit {done.returncode}")
    print("nccl_tests_table: OK")


if __name__ == "__main__":
    main()
